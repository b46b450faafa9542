"""The whole table on simulated devices: what ``monster-match demo`` runs.

Real parts: the controller and its SQLite store, the serial link (the shoe and the table board
are simulators on pseudo-terminals speaking the protocol's bytes; the controller opens them like
USB adapters), the vision model reading procedurally drawn camera frames, the web sign and
consoles. Simulated parts: the players (sensors), the dealer's and floorperson's hands (their
actions go through real signed-in sessions), the cards (a shuffled Spanish shoe).

Each round: bets open -> players' MAIN and BET sensors -> the dealer presses lock-out (board
button) -> chip count (dealer session) -> the Dynamic Pays draw -> the shoe deals -> the camera
reads the layout and is cross-checked against the shoe -> the dealer presses REVEAL -> lights ->
the dealer confirms and a floorperson validates each win -> the round closes.
"""

from __future__ import annotations

import logging
import random
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from controller.auth import Actor, Role
from controller.config import TableConfig
from controller.devices.sim import BoardSimulator, ShoeSimulator, random_shoe
from controller.layout import layout_of
from controller.money import dollars, from_text
from controller.rounds import IllegalEvent, Round, State
from controller.service import TableService
from controller.storage import Store
from controller.table_devices import TableDevices
from controller.web.app import create_app
from controller.web.server import WebServer

log = logging.getLogger(__name__)
CUT_CARD_LEFT = 80


@dataclass
class DemoOptions:
    db: str
    rounds: int | None = None  # None: until stopped
    pace: float = 0.3  # seconds between the dealer's steps (for people watching)
    seed: int | None = None
    host: str = "127.0.0.1"
    port: int = 0
    camera: bool = True
    mismatch_rate: float = 0.03
    frames_dir: Path | None = None
    on_board_command: Callable[[Any], None] | None = None  # frames the board receives
    stop: threading.Event = field(default_factory=threading.Event)


class TimeoutWaiting(RuntimeError):
    """A simulated device or the controller did not do what the demo waited for in time."""


class Demo:
    def __init__(self, cfg: TableConfig, opts: DemoOptions,
                 say: Callable[[str], None] = print) -> None:
        self.cfg = cfg
        self.opts = opts
        self.say = say
        # Unseeded, each run plays different players and cards.
        self.seed = opts.seed if opts.seed is not None else secrets.randbits(32)
        self.rng = random.Random(self.seed)
        self.store = Store(opts.db)
        self.frames_dir = opts.frames_dir or Path(opts.db).with_suffix(".frames")
        self.svc = TableService(self.store, cfg)
        self.camera = None
        if opts.camera:
            from controller.camera import SimulatedCamera  # loads the vision model

            self.camera = SimulatedCamera(self.frames_dir, seed=self.rng.getrandbits(32),
                                          settings=cfg.camera)
        self._shoe_cards = random_shoe(cfg.table.decks, self.rng.getrandbits(32))
        self._hits: dict[int, str] = {}  # position of a later card -> the seat (area) it went to
        self.camera_ms: list[float] = []
        #: Shoe cards at each camera check: read by code, by rank and colour alone, not read.
        self.camera_readings: Counter[str] = Counter()
        #: Checks whose frame carried each camera warning (vision.quality).
        self.camera_warnings: Counter[str] = Counter()

    # -- set-up -------------------------------------------------------------------------------
    def start(self) -> dict[str, str]:
        tag = secrets.token_hex(2)
        self.credentials: dict[str, tuple[str, str]] = {}
        actors = {}
        for role in (Role.DEALER, Role.FLOORPERSON, Role.SURVEILLANCE):
            name, password = f"demo-{role.value}-{tag}", secrets.token_urlsafe(9)
            self.svc.auth.add_user(name, role, password, by="demo")
            self.credentials[role.value] = (name, password)
            actors[role] = self.svc.actor(self.svc.auth.login(name, password))
        self.dealer: Actor = actors[Role.DEALER]
        self.floor: Actor = actors[Role.FLOORPERSON]
        self.shoe_sim = ShoeSimulator("pty", cards=[], decks=self.cfg.table.decks,
                                      shuffle=True, linger=10**9)
        self.board_sim = BoardSimulator("pty", seats=self.cfg.table.seats,
                                        on_command=self.opts.on_board_command)
        self.shoe_sim.start()
        self.board_sim.start()
        self.devices = TableDevices(self.svc, self.shoe_sim.url, self.board_sim.url)
        self.devices.start()
        if self.camera is not None:
            from vision.selfcheck import identity

            self.svc.camera_started(identity(self.camera.recognizer))
        self.web = WebServer(create_app(self.svc, self.frames_dir), self.opts.host,
                             self.opts.port)
        url = self.web.start()
        self._wait(lambda: self.shoe_sim.done or self._meta("burn_pending") == "1",
                   "the shoe's SHUFFLE", 10)
        return {"sign": f"{url}/sign", "dealer": f"{url}/dealer", "floor": f"{url}/floor",
                "surveillance": f"{url}/surveillance", "shoe": self.shoe_sim.url,
                "board": self.board_sim.url, "db": self.opts.db}

    def close(self) -> None:
        for part in ("devices", "shoe_sim", "board_sim"):
            obj = getattr(self, part, None)
            if obj is not None:
                obj.close()
        if getattr(self, "web", None) is not None:
            self.web.stop()
        self.store.close()

    # -- helpers ------------------------------------------------------------------------------
    def _wait(self, cond: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > deadline:
                raise TimeoutWaiting(f"timed out waiting for {what}")
            time.sleep(0.01)

    def _pause(self) -> None:
        if self.opts.pace:
            self.opts.stop.wait(self.opts.pace)

    def _current(self) -> Round | None:
        return self.svc.call(self.svc.table.current)

    def _state(self) -> State | None:
        """The current round's state, read once: the device threads may finish the round
        between two reads, so a condition must never call _current() twice."""
        rnd = self._current()
        return None if rnd is None else rnd.state

    # The store's one connection is shared with the device threads: every read goes through
    # the service lock, so it never lands inside another thread's transaction.
    def _meta(self, key: str) -> str | None:
        return self.svc.call(self.store.get_meta, key)

    def _card_count(self) -> int:
        return int(self.svc.call(
            lambda: self.store.db.execute("SELECT COUNT(*) FROM cards").fetchone()[0]))

    def _deal_one(self) -> None:
        if len(self._shoe_cards) == 0:
            raise TimeoutWaiting("the simulated shoe is empty")
        card = self._shoe_cards.pop(0)
        before = self._card_count()
        burn = self._meta("burn_pending") == "1"
        if not self.shoe_sim.deliver("CARD", card.code, str(self.shoe_sim.millis())):
            raise TimeoutWaiting("the shoe simulator stopped")
        if burn:
            self._wait(lambda: self._meta("burn_pending") == "0", "the burn card")
        else:
            self._wait(lambda: self._card_count() > before
                       or self._state() in (None, State.HELD), "the card to be recorded")

    def _new_shoe_if_low(self) -> None:
        if len(self._shoe_cards) < CUT_CARD_LEFT:
            self._shoe_cards = random_shoe(self.cfg.table.decks, self.rng.getrandbits(32))
            self.shoe_sim.deliver("SHUFFLE", str(self.cfg.table.decks))
            self._wait(lambda: self._meta("burn_pending") == "1", "the new shoe")

    def layout(self, rnd: Round, hole_up: bool) -> dict[str, list[str]]:
        """What lies on the table: each area's cards in dealing order (hole card face down
        until revealed), the hits where this demo dealt them."""
        return layout_of(rnd.cards, hole_up, self._hits)

    def camera_check(self, rnd: Round, hole_up: bool) -> None:
        if self.camera is None:
            return
        from controller.camera import check_frame_name

        name = check_frame_name(rnd.id, hole_up)
        read = self.camera.capture(self.layout(rnd, hole_up), name)
        self.camera_ms.append(read.elapsed_ms)
        self.camera_warnings.update((read.quality or {}).get("warnings", ()))
        before = self.svc.camera_condition
        result = self.svc.camera_check(rnd.id, read.cards, hole_up, read.frame_names,
                                       read.calibration_error, read.warning,
                                       read.rank_colour, read.quality, read.frame_sha256)
        if self.svc.camera_condition != before:
            from vision.quality import ADVICE, describe_quality

            now = self.svc.camera_condition
            self.say(f"camera: {'; '.join(ADVICE[w] for w in now)} "
                     f"({describe_quality(read.quality or {})})" if now else
                     "camera: the frames are clear again")
        for reading in result.camera_by_position.values():
            self.camera_readings["unread" if reading is None else
                                 "rank and colour" if " " in reading else "code"] += 1
        if result.problems:
            self.say(f"round {rnd.id}: held — {'; '.join(result.problems)}")

    def camera_summary(self) -> str | None:
        """What the camera made of the shoe's cards over the checks so far, and how many of its
        frames were blurred, dark or showed the cards small (:mod:`vision.quality`; one line)."""
        n = sum(self.camera_readings.values())
        if not n:
            return None
        code, rc = self.camera_readings["code"], self.camera_readings["rank and colour"]
        return (f"camera: {len(self.camera_ms)} checks, median {median(self.camera_ms):.0f} ms; "
                f"of {n} shoe cards on the layout {code} read by code "
                f"({100 * code / n:.0f} %), {rc} more by rank and colour alone "
                f"({100 * (code + rc) / n:.0f} % in all); frames warned of: "
                + (", ".join(f"{w} {k}" for w, k in sorted(self.camera_warnings.items()))
                   or "none"))

    # -- the dealer's loop --------------------------------------------------------------------
    def run(self) -> int:
        played = 0
        last_closed = self.svc.call(self.svc.table.rounds_completed)
        if (rnd := self._current()) is not None and rnd.state is State.BETS_OPEN:
            self.devices.open_bets()
        while not self.opts.stop.is_set():
            done = self.svc.call(self.svc.table.rounds_completed)
            if done != last_closed:
                played += done - last_closed
                last_closed = done
                self._report_round(done)
            if self.opts.rounds is not None and played >= self.opts.rounds:
                break
            try:
                self.step()
            except IllegalEvent as exc:
                log.info("demo step refused: %s", exc)
                time.sleep(0.05)
        return played

    def _report_round(self, done: int) -> None:
        row = self.svc.call(lambda: self.store.db.execute(
            "SELECT id FROM rounds WHERE state='closed' ORDER BY id DESC LIMIT 1").fetchone())
        rnd = self.svc.call(self.svc.table.round, row[0])
        # exact dollars from the stored amount (a fraction's text), as the books write them
        wins = ", ".join(f"seat {r['seat']} {r['hand']} ${dollars(from_text(r['amount']))}"
                         for r in rnd.results) or "no wins"
        draw = "; ".join(rnd.draw.describe()) if rnd.draw else "void"
        wagers = f"{len(rnd.wagers)} wager" + ("" if len(rnd.wagers) == 1 else "s")
        self.say(f"round {rnd.id}: {wagers}, Dynamic Pays [{draw}], {wins}; "
                 f"meter ${self.svc.public_view()['meter']}")

    def step(self) -> None:
        """One action of the simulated people or devices, chosen by the round's state."""
        table = self.svc.table
        rnd = self._current()
        if rnd is None:
            self._new_shoe_if_low()
            self._pause()
            # Players take back last round's chips before bets open again; the board's
            # events are handled just after their ACK, hence the short settle.
            for seat in range(1, self.cfg.table.seats + 1):
                self.board_sim.bet(seat, False)
            time.sleep(0.05)
            self.svc.call(table.open_round, self.dealer)
            self.devices.open_bets()
            for seat in range(1, self.cfg.table.seats + 1):
                self.devices.board.light(seat, "OFF", "")
            self._hits.clear()
            return
        rng = random.Random(f"{self.seed}:{rnd.id}")
        seats = self.cfg.table.seats
        players = sorted(rng.sample(range(1, seats + 1), rng.randint(1, seats)))
        wagering = {s for s in players if rng.random() < 0.7}
        state = rnd.state
        if state is State.BETS_OPEN:
            for seat in range(1, seats + 1):
                self.board_sim.main(seat, seat in players)
            for seat in sorted(wagering):
                self.board_sim.bet(seat, True)
            self._wait(lambda: (now := self._current()) is None or set(now.wagers) >= wagering,
                       "the wagers", 5)
            self._pause()
            self.board_sim.press("LOCKOUT")
            self._wait(lambda: self._state() is not State.BETS_OPEN, "the lock-out")
        elif state is State.LOCKED:
            self._pause()
            wrong = rng.random() < self.opts.mismatch_rate
            self.svc.call(table.chip_count, len(rnd.wagers) + (1 if wrong else 0), self.dealer)
        elif state is State.HELD:
            self.opts.stop.wait(max(self.opts.pace * 4, 0.2))  # the floorperson walks over
            self.svc.call(table.resolve, self.floor, "continue",
                          f"demo floorperson checked the layout: {rnd.hold_reason}")
        elif state is State.DRAWN or (state is State.DEALING and not rnd.hole_dealt):
            if not rnd.cards:
                self._pause()
            self._deal_one()
        elif state is State.DEALING:
            hits = sum(1 for c in rnd.cards if c["spot"] == "extra")
            if hits < rng.randint(0, 3) and rnd.dealt_in:
                self._hits[len(rnd.cards)] = f"seat{rng.choice(rnd.dealt_in)}"
                self._deal_one()
                return
            if not rnd.data.get("frames"):
                self.camera_check(rnd, hole_up=False)
                if self._state() is State.HELD:
                    return
            self._pause()
            self.board_sim.press("REVEAL")
            self._wait(lambda: self._state() is not State.DEALING, "the reveal")
            self.camera_check(self.svc.call(table.round, rnd.id), hole_up=True)
        elif state is State.FLAGGED:
            self._pause()
            for r in rnd.results:
                if not r["confirmed_by"]:
                    self.svc.call(table.confirm_win, r["seat"], self.dealer)
                elif not r["validated_by"]:
                    self.svc.call(table.validate_win, r["seat"], self.floor)
                elif r["source"] == "meter" and not r["paid_at"]:
                    self.svc.call(table.document_jackpot, r["seat"],
                                  f"JP-{rnd.id:06d}-{r['seat']}", self.floor)
                else:
                    continue
                return
        else:
            self.svc.call(table.advance)
