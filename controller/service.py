"""The table as a service: one :class:`~controller.rounds.Table` shared by the devices, the
camera and the web consoles, serialised by one lock, with change notifications for live pages.

Every caller (serial reader threads, the camera loop, web requests) goes through
:meth:`TableService.call`, so the state machine sees one event at a time, in order.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from controller.auth import Actor, Auth, Role
from controller.config import TableConfig
from controller.fusion import CameraCard, CameraRankColour, FusionResult, cross_check
from controller.rounds import Table
from controller.storage import Store

T = TypeVar("T")
CAMERA = Actor("camera", Role.ADMINISTRATOR)
#: Frames in a row that must carry a camera warning (:mod:`vision.quality`) for the table to
#: record it, and lack it to record it cleared.
CONDITION_FRAMES = 3


class Lights(Protocol):
    """What the service needs of the table I/O board."""

    def light(self, seat: int, state: str, label: str) -> None: ...


class TableService:
    def __init__(self, store: Store, cfg: TableConfig, rng: random.Random | None = None,
                 lights: Lights | None = None) -> None:
        self.lock = threading.RLock()
        self.cfg = cfg
        self.store = store
        self.lights = lights
        self.version = 0
        self._watchers: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._light_listeners: list[Callable[[list[tuple[int, str, str]]], None]] = []
        self.table = Table(store, cfg, rng=rng, on_lights=self._on_lights,
                           on_change=self._on_change)
        self.auth = Auth(store, cfg.web.session_minutes)
        #: The last ``camera_condition`` record (its round, time, warnings and quality; read
        #: from the store once, so a restart resumes from it), and the warnings of the last
        #: frames read.
        last = store.db.execute("SELECT round_id, at, payload FROM audit WHERE kind = "
                                "'camera_condition' ORDER BY id DESC LIMIT 1").fetchone()
        self.camera_record: dict[str, Any] | None = (
            None if last is None else {"round": last[0], "at": last[1], **json.loads(last[2])})
        self._recent_quality: deque[set[str]] = deque(maxlen=CONDITION_FRAMES)

    @property
    def camera_condition(self) -> tuple[str, ...]:
        """The camera's warnings as last recorded (:mod:`vision.quality`); none before any
        record."""
        return tuple(self.camera_record["warnings"]) if self.camera_record else ()

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self.lock:
            return fn(*args, **kwargs)

    def actor(self, token: str | None, *roles: Role) -> Actor:
        with self.lock:
            return self.auth.actor(token, *roles)

    def public_view(self) -> dict[str, Any]:
        with self.lock:
            view = self.table.public_view()
        view["version"] = self.version
        return view

    def camera_started(self, identity: dict[str, Any]) -> None:
        """Record what will read the camera's frames (`vision.selfcheck.identity`: the models'
        sha256, the threshold, the libraries, the CPU's int8 flags, the kernel checks), so that
        the tamper-evident record says which reader stood behind every camera code after it."""
        with self.lock, self.store.transaction():
            self.store.append_audit(None, str(CAMERA), "camera_started", identity)

    def camera_check(self, round_id: int, camera: list[CameraCard], hole_up: bool,
                     frame_names: Sequence[str] = (),
                     calibration_error: str | None = None,
                     frame_warning: str | None = None,
                     rank_colour: Sequence[CameraRankColour] = (),
                     quality: dict[str, Any] | None = None,
                     frame_sha256: Sequence[str] = (),
                     camera_error: str | None = None) -> FusionResult:
        """Cross-check one camera reading of the layout against the shoe's cards of the round;
        record the camera's code for each card and the frame; hold the round on any problem
        (or, if it has closed meanwhile, record an alert for surveillance). A frame that could
        not be placed on the layout (``calibration_error``) is itself the problem: its cards
        cannot be compared area by area. A frame whose cards the camera refused as a whole
        (``frame_warning``: no colour, mirrored) says so first among the problems. Every frame
        kept (``frame_names``: one, or a burst's) is recorded, with the SHA-256 of its file
        (``frame_sha256``, in the same order), in a chained ``camera_read`` audit record with the
        camera's codes and the problems (:meth:`controller.rounds.Table.record_camera`).
        ``rank_colour``: cards whose code the camera could not read but whose rank and colour
        it could (:func:`controller.fusion.cross_check`). ``quality``: the frame's condition
        (:mod:`vision.quality`): a warning carried by :data:`CONDITION_FRAMES` frames in a
        row (a camera blurred, shaking, too dark, or seeing the cards too small), or cleared
        by as many without it, is a ``camera_condition`` audit record with what was measured, for
        surveillance to tell cards the camera could not read from cards that were not there.
        It holds no round: an unread card is no problem by itself. ``camera_error``: why no
        frame could be read (a live camera lost, :class:`controller.camera.LiveCamera`): the
        round is held, nothing being checked."""
        with self.lock:
            self._record_condition(round_id, quality)
            table = self.table
            rnd = table.round(round_id)
            visible = [c for c in rnd.cards if hole_up or c["spot"] != "dealer:hole"]
            if camera_error is not None:
                result = FusionResult(problems=[f"camera frame not read: {camera_error}"])
            elif calibration_error is not None:
                result = FusionResult(problems=[
                    f"camera frame not placed on the layout: {calibration_error}"])
            else:
                result = cross_check(visible, camera, self.cfg.shoe, rank_colour)
                if frame_warning is not None:
                    result.problems.insert(0, f"camera frame: {frame_warning}")
            if frame_sha256 and len(frame_sha256) != len(frame_names):
                raise ValueError("frame_sha256 must give one digest for each frame name")
            table.record_camera(round_id, {p: code for p, code in
                                           result.camera_by_position.items() if code},
                                list(zip(frame_names,
                                         frame_sha256 or [None] * len(frame_names),
                                         strict=True)),
                                hole_up, result.problems, CAMERA)
            if result.problems:
                current = table.current()
                if current is not None and current.id == round_id:
                    table.hold("; ".join(result.problems), CAMERA)
                else:
                    with self.store.transaction():
                        self.store.append_audit(round_id, str(CAMERA), "camera_alert",
                                                {"problems": result.problems})
                    self._on_change("camera_alert")
        return result

    def _record_condition(self, round_id: int, quality: dict[str, Any] | None) -> None:
        # A warning is raised once CONDITION_FRAMES frames in a row carry it, and cleared
        # once as many in a row do not: a camera's fault persists, while a single frame can
        # be blurred by a passing hand (or, in the demo, by the renderer's draw).
        if quality is None:
            return
        self._recent_quality.append(set(quality.get("warnings") or ()))
        recent = list(self._recent_quality)
        if len(recent) < CONDITION_FRAMES:
            return
        kept = {w for w in self.camera_condition if any(w in q for q in recent)}
        raised = set.intersection(*recent)
        condition = tuple(sorted(kept | raised))
        if condition == self.camera_condition:
            return
        payload = {"warnings": list(condition), "quality": quality}
        at = time.time()
        with self.store.transaction():
            self.store.append_audit(round_id, str(CAMERA), "camera_condition", payload, at=at)
        self.camera_record = {"round": round_id, "at": at, **payload}
        self._on_change("camera_condition")

    # -- notifications ------------------------------------------------------------------------
    def on_lights(self, listener: Callable[[list[tuple[int, str, str]]], None]) -> None:
        self._light_listeners.append(listener)

    def _on_lights(self, lights: list[tuple[int, str, str]]) -> None:
        if self.lights is not None:
            for seat, state, label in lights:
                self.lights.light(seat, state, label)
        for listener in self._light_listeners:
            listener(lights)

    def _on_change(self, what: str) -> None:
        self.version += 1
        for loop, event in list(self._watchers):
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the page's loop is gone
                self._watchers.remove((loop, event))

    def watch(self) -> asyncio.Event:
        """An event set at every change (for one server-sent-events stream)."""
        event = asyncio.Event()
        self._watchers.append((asyncio.get_running_loop(), event))
        return event

    def unwatch(self, event: asyncio.Event) -> None:
        self._watchers = [(lp, ev) for lp, ev in self._watchers if ev is not event]
