"""The web sign and consoles: a small Starlette (ASGI) app over a :class:`TableService`.

- ``/sign``: the display of § 635b.3(c)(3) — meter, the round's Dynamic Pays and resulting odds,
  seat lights with hand names, wins awaiting validation. Read-only, live (server-sent events).
- ``/dealer``, ``/floor``, ``/surveillance``: consoles behind sign-in. State lives on the server;
  every action is checked there against the session's role; sessions expire.

Actions are JSON ``POST /api/action/NAME`` requests that must carry the header
``X-Monster-Match: 1``: a cross-site form cannot set it, so no other site can act with a
console's cookie.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from controller.auth import Actor, AuthError, Role
from controller.books import camera_reads, frame_status
from controller.cards import CardCodeError
from controller.hands import Hand
from controller.money import dollars, from_text
from controller.rounds import AFTER_REVEAL, IllegalEvent
from controller.service import TableService
from controller.web import pages
from controller.web.drawn import DrawnFrames, RereadRefused

COOKIE = "mm_session"
CONSOLE_ROLES = {
    "dealer": (Role.DEALER,),
    "floor": (Role.FLOORPERSON,),
    "surveillance": (Role.SURVEILLANCE, Role.FLOORPERSON, Role.ADMINISTRATOR),
}
HOME = {Role.DEALER: "/dealer", Role.FLOORPERSON: "/floor", Role.SURVEILLANCE: "/surveillance",
        Role.ADMINISTRATOR: "/surveillance"}


def create_app(service: TableService, frames_dir: Path | None = None) -> Starlette:
    svc = service
    stopping = threading.Event()  # set by WebServer.stop: live streams end
    frame_check = FrameCheck(frames_dir)
    drawn = DrawnFrames(svc, frames_dir) if frames_dir is not None else None

    def token(request: Request) -> str | None:
        return request.cookies.get(COOKIE)

    def actor_or_none(request: Request, roles: tuple[Role, ...]) -> Actor | None:
        try:
            return svc.actor(token(request), *roles)
        except AuthError:
            return None

    def refused(request: Request, roles: tuple[Role, ...], status: int) -> Response | None:
        """The error response when the request's session may not act in ``roles``."""
        try:
            svc.actor(token(request), *roles)
        except AuthError as exc:
            return JSONResponse({"error": str(exc)}, status_code=status)
        return None

    async def index(request: Request) -> Response:
        return HTMLResponse(pages.index())

    async def sign(request: Request) -> Response:
        return HTMLResponse(pages.sign())

    async def sign_state(request: Request) -> Response:
        return JSONResponse(sign_view(svc))

    async def events(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            event = svc.watch()
            try:
                while True:
                    # Clear before reading the state: a change after this point sets the event
                    # again and is sent on the next turn, never lost between read and clear.
                    event.clear()
                    yield f"data: {json.dumps(sign_view(svc))}\n\n"
                    waited = 0.0
                    while not event.is_set() and waited < 15 and not stopping.is_set():
                        try:  # short waits so a server shutdown ends the stream promptly
                            await asyncio.wait_for(event.wait(), timeout=0.5)
                        except TimeoutError:
                            waited += 0.5
                    if stopping.is_set() or await request.is_disconnected():
                        return
                    if not event.is_set():
                        yield ": keep-alive\n\n"
            finally:
                svc.unwatch(event)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store"})

    async def login_page(request: Request) -> Response:
        return HTMLResponse(pages.login())

    async def login(request: Request) -> Response:
        try:
            body = await request.json()
            name, password = str(body["name"]), str(body["password"])
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "send name and password"}, status_code=400)
        try:
            tok = svc.call(svc.auth.login, name, password)
            who = svc.actor(tok)
        except AuthError as exc:
            return JSONResponse({"error": str(exc)}, status_code=401)
        resp = JSONResponse({"ok": True, "user": who.name, "role": who.role.value,
                             "home": HOME[who.role]})
        resp.set_cookie(COOKIE, tok, httponly=True, samesite="strict",
                        max_age=svc.cfg.web.session_minutes * 60)
        return resp

    async def logout(request: Request) -> Response:
        tok = token(request)
        if tok:
            svc.call(svc.auth.logout, tok)
        resp = RedirectResponse("/login", status_code=303)
        resp.delete_cookie(COOKIE)
        return resp

    def console(kind: str) -> Callable[[Request], Any]:
        async def page(request: Request) -> Response:
            who = actor_or_none(request, CONSOLE_ROLES[kind])
            if who is None:
                return RedirectResponse(f"/login?next=/{kind}", status_code=303)
            return HTMLResponse(pages.console(kind, who))
        return page

    async def console_state(request: Request) -> Response:
        try:
            who = svc.actor(token(request))
        except AuthError as exc:
            return JSONResponse({"error": str(exc)}, status_code=401)
        return JSONResponse(console_view(svc, who))

    async def history(request: Request) -> Response:
        if denied := refused(request, CONSOLE_ROLES["surveillance"], 403):
            return denied
        try:
            limit = max(1, min(int(request.query_params.get("limit", "50")), 500))
        except ValueError:
            return JSONResponse({"error": "limit must be a number"}, status_code=400)
        view = history_view(svc, limit)
        # each kept frame's file checked against the digest recorded when it was read, outside
        # the table's lock (a file is hashed again only when it changes)
        frame_check.mark([f for rnd in view["rounds"] for f in rnd["frames"]])
        return JSONResponse(view)

    async def frame(request: Request) -> Response:
        if denied := refused(request, CONSOLE_ROLES["surveillance"], 403):
            return denied
        if frames_dir is None:
            return JSONResponse({"error": "no frames are kept"}, status_code=404)
        name = request.path_params["name"]
        path = (frames_dir / name).resolve()
        if path.parent != frames_dir.resolve() or not path.is_file():
            return JSONResponse({"error": "no such frame"}, status_code=404)
        return FileResponse(path)

    async def drawn_frame(request: Request) -> Response:
        """The reading of a kept frame drawn (:mod:`controller.web.drawn`): read again off
        the event loop, which a read of some 100 ms would stall for every console."""
        if denied := refused(request, CONSOLE_ROLES["surveillance"], 403):
            return denied
        if drawn is None:
            return JSONResponse({"error": "no frames are kept"}, status_code=404)
        try:
            picture = await run_in_threadpool(drawn.draw, request.path_params["name"])
        except LookupError as exc:
            return JSONResponse({"error": str(exc.args[0])}, status_code=404)
        except RereadRefused as exc:
            return JSONResponse({"error": str(exc)}, status_code=409)
        return Response(picture.jpeg, media_type="image/jpeg", headers={
            "X-Frame": picture.frame, "X-Round": str(picture.round_id),
            "X-Recorded": " ".join(picture.recorded), "X-Areas": " ".join(picture.areas),
            "X-Not-Read-Again": " ".join(picture.unread)})

    async def action(request: Request) -> Response:
        if request.headers.get("x-monster-match") != "1":
            return JSONResponse({"error": "missing X-Monster-Match header"}, status_code=403)
        name = request.path_params["name"]
        spec = ACTIONS.get(name)
        if spec is None:
            return JSONResponse({"error": f"unknown action {name}"}, status_code=404)
        roles, fn = spec
        try:
            who = svc.actor(token(request), *roles)
        except AuthError as exc:
            # A refused role is recorded like any refused event.
            svc.call(_record_refusal, svc, token(request), name, str(exc))
            return JSONResponse({"error": str(exc)}, status_code=403)
        try:
            body = await request.json() if await request.body() else {}
            result = svc.call(fn, svc, who, body)
        except (IllegalEvent, CardCodeError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=409)
        except (KeyError, ValueError, TypeError) as exc:
            return JSONResponse({"error": f"bad request: {exc}"}, status_code=400)
        return JSONResponse({"ok": True, "result": result})

    routes = [
        Route("/", index),
        Route("/sign", sign),
        Route("/api/sign", sign_state),
        Route("/events", events),
        Route("/login", login_page),
        Route("/api/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["GET", "POST"]),
        Route("/dealer", console("dealer")),
        Route("/floor", console("floor")),
        Route("/surveillance", console("surveillance")),
        Route("/api/console", console_state),
        Route("/api/history", history),
        Route("/frames/{name}", frame),
        Route("/frames/{name}/drawn", drawn_frame),
        Route("/api/action/{name}", action, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.stopping = stopping
    return app


def _record_refusal(svc: TableService, tok: str | None, action: str, reason: str) -> None:
    with svc.store.transaction():
        rnd = svc.table.current()
        svc.store.append_audit(rnd.id if rnd else None, "web", "refused",
                               {"event": action, "reason": reason})


# -- actions: (roles allowed, function(service, actor, body)) ---------------------------------
def _seat(body: dict[str, Any]) -> int:
    return int(body["seat"])


ActionFn = Callable[[TableService, Actor, dict[str, Any]], Any]
ACTIONS: dict[str, tuple[tuple[Role, ...], ActionFn]] = {
    "lockout": ((Role.DEALER,), lambda s, a, b: s.table.lockout(a)),
    "count": ((Role.DEALER,), lambda s, a, b: s.table.chip_count(int(b["count"]), a)),
    "reveal": ((Role.DEALER,), lambda s, a, b: s.table.reveal(a)),
    "confirm": ((Role.DEALER,), lambda s, a, b: s.table.confirm_win(_seat(b), a)),
    "card": ((Role.DEALER,), lambda s, a, b: s.table.manual_card(str(b["code"]), a)),
    "open": ((Role.DEALER,), lambda s, a, b: s.table.open_round(a)),
    "validate": ((Role.FLOORPERSON,), lambda s, a, b: s.table.validate_win(_seat(b), a)),
    "document": ((Role.FLOORPERSON,),
                 lambda s, a, b: s.table.document_jackpot(_seat(b), str(b["document"]), a)),
    "resolve": ((Role.FLOORPERSON,),
                lambda s, a, b: s.table.resolve(a, str(b.get("action", "continue")),
                                                str(b.get("note", "")))),
}


# -- views --------------------------------------------------------------------------------------
def sign_view(svc: TableService) -> dict[str, Any]:
    view = svc.public_view()
    view["paytable"] = [
        {"hand": h.value, "label": h.label, "pays": svc.cfg.paytable.pays(h)}
        for h in Hand if h.is_win
    ]
    view["seats"] = svc.cfg.table.seats
    return view


def console_view(svc: TableService, who: Actor) -> dict[str, Any]:
    """Round detail for a console. The hole card and anything that depends on it stay hidden
    until the reveal, on consoles as on the sign."""
    with svc.lock:
        view = sign_view(svc)
        rnd = svc.table.current()
        view["user"] = {"name": who.name, "role": who.role.value}
        view["camera"] = camera_view(svc)
        if rnd is None:
            view["detail"] = None
            return view
        revealed = rnd.effective_state in AFTER_REVEAL
        view["detail"] = {
            "id": rnd.id,
            "state": rnd.state.value,
            "held_from": rnd.held_from.value if rnd.held_from else None,
            "hold_reason": rnd.hold_reason,
            "dealt_in": rnd.dealt_in,
            "wagers": sorted(rnd.wagers),
            "dealer_count": rnd.dealer_count,
            "cards": [
                {"spot": c["spot"], "source": c["source"],
                 "code": c["code"] if revealed or c["spot"] != "dealer:hole" else "??",
                 "camera": (c["camera_code"] if revealed or c["spot"] != "dealer:hole"
                            else ("??" if c["camera_code"] else None))}
                for c in rnd.cards],
            "results": [] if not revealed else [
                {"seat": r["seat"], "hand": r["hand"], "label": Hand(r["hand"]).label,
                 "amount": dollars(from_text(r["amount"])), "source": r["source"],
                 "odds": r["odds"], "confirmed_by": r["confirmed_by"],
                 "validated_by": r["validated_by"], "document": r["document"],
                 "paid": bool(r["paid_at"])} for r in rnd.results],
        }
    return view


def camera_view(svc: TableService) -> dict[str, Any] | None:
    """The camera's condition as last recorded (:attr:`TableService.camera_record`, from
    :meth:`TableService.camera_check`): its warnings with what each asks of the staff, what
    was measured, and the round and time it was recorded at; ``None`` before any record."""
    from vision.quality import ADVICE, describe_quality

    record = svc.camera_record
    if record is None:
        return None
    return {"warnings": record["warnings"],
            "advice": [ADVICE.get(w, w) for w in record["warnings"]],
            "measured": describe_quality(record.get("quality") or {}),
            "round": record["round"], "at": record["at"]}


def _frames(svc: TableService, round_id: int, names: list[str]) -> list[dict[str, Any]]:
    """A round's kept frames, each with the SHA-256 recorded when it was read (``None`` for a
    frame kept without one) and whether it is a reading's first frame, the one its reading is
    drawn on (``/frames/NAME/drawn``)."""
    digests: dict[str, str] = {}
    firsts: set[str] = set()
    for _, reading in camera_reads(svc.store, round_id):  # (one read of the round's records)
        kept = [f for f in reading["frames"] if f.get("sha256")]
        digests.update((f["name"], f["sha256"]) for f in kept)
        if kept:
            firsts.add(kept[0]["name"])
    return [{"name": name, "sha256": digests.get(name), "first": name in firsts}
            for name in names]


class FrameCheck:
    """Kept camera frames checked against their recorded SHA-256
    (:func:`controller.books.frame_status`), remembered while a file's size and modification
    time stay the same, so that the surveillance page's refresh does not hash every frame."""

    def __init__(self, frames_dir: Path | None) -> None:
        self.frames_dir = frames_dir
        self._seen: dict[tuple[str, str], tuple[tuple[int, int], str]] = {}

    def mark(self, frames: list[dict[str, Any]]) -> None:
        """Set each frame's ``"status"`` (``{"name", "sha256"}`` as :func:`history_view` lists
        them): ``"as read"``, ``"altered"``, ``"missing"``; ``None`` where frames are not kept
        here or no digest was recorded. Only these frames are remembered afterwards."""
        seen, self._seen = self._seen, {}
        for f in frames:
            f["status"] = None
            if self.frames_dir is None or f["sha256"] is None:
                continue
            key = (f["name"], f["sha256"])
            try:
                st = (self.frames_dir / f["name"]).stat()
                stamp = (st.st_size, st.st_mtime_ns)
            except OSError:
                stamp = (-1, -1)
            if key not in seen or seen[key][0] != stamp:
                seen[key] = (stamp, frame_status(self.frames_dir, f["name"], f["sha256"]))
            self._seen[key] = seen[key]
            f["status"] = seen[key][1]


def history_view(svc: TableService, limit: int) -> dict[str, Any]:
    with svc.lock:
        db = svc.store.db
        out = []
        for row in db.execute("SELECT id FROM rounds WHERE state = 'closed' ORDER BY id DESC "
                              "LIMIT ?", (limit,)):
            rnd = svc.table.round(row[0])
            holds = [json.loads(r[0]) for r in db.execute(
                "SELECT payload FROM audit WHERE round_id = ? AND kind = 'held'", (rnd.id,))]
            out.append({
                "id": rnd.id,
                "draw": [] if rnd.draw is None else rnd.draw.describe(),
                "wagers": sorted(rnd.wagers),
                "cards": [{"spot": c["spot"], "shoe": c["code"] if c["source"] != "manual"
                           else None, "camera": c["camera_code"], "source": c["source"]}
                          for c in rnd.cards],
                "results": [{"seat": r["seat"], "hand": r["hand"],
                             "amount": dollars(from_text(r["amount"])), "source": r["source"],
                             "validated_by": r["validated_by"], "document": r["document"]}
                            for r in rnd.results],
                "holds": [h.get("reason") for h in holds],
                # the camera's condition as recorded during the round ("clear" again: [])
                "camera": [json.loads(r[0])["warnings"] for r in db.execute(
                    "SELECT payload FROM audit WHERE round_id = ? AND kind = "
                    "'camera_condition' ORDER BY id", (rnd.id,))],
                "frames": _frames(svc, rnd.id, rnd.data.get("frames", [])),
            })
        camera = camera_view(svc)
    return {"rounds": out, "camera": camera}
