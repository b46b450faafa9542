"""The live table: what ``monster-match table --live`` runs.

Real parts only: the shoe and the table board at the ``[devices]`` ports (pyserial URLs), the
table's camera at ``[camera] source`` (:class:`controller.camera.LiveCamera`; none when it is
``"sim"``), the SQLite store, and the web sign and consoles at ``[web]``. People play: the
dealer opens each round and counts the chips at the dealer console, presses lock-out and
reveal on the board; the floorperson validates wins and resolves holds at theirs.

:class:`LiveTable` adds what the demo's simulated dealer does by hand and nobody does at a
live table (:meth:`LiveTable.step`, a few times a second):

* a round opened at the console opens the board's bet sensors and turns the seat lights off;
* once the hole card is dealt, the camera reads the layout (hole card face down) and the
  reading is cross-checked against the shoe's cards (:meth:`TableService.camera_check`), and
  again once the hole card is turned: one check each per round, whatever it found (a lost
  camera holds the round; it is opened again for the next check). The checks run one after
  another on a thread of their own, so a camera that stalls (up to
  :data:`vision.stream.STALL_SECONDS`) holds up no round's bets or lights.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from controller.camera import LiveCamera, check_frame_name
from controller.config import TableConfig
from controller.rounds import AFTER_REVEAL, Round, State
from controller.service import TableService
from controller.storage import Store
from controller.table_devices import TableDevices
from controller.web.app import create_app
from controller.web.server import WebServer

log = logging.getLogger(__name__)

class LiveTableError(RuntimeError):
    """The live table cannot start: a device or the camera is not configured or not there."""


@dataclass
class LiveOptions:
    db: str
    host: str | None = None  # None: the configuration's [web] host (and port, below)
    port: int | None = None
    frames_dir: Path | None = None  # None: beside the database, DB.frames
    poll_s: float = 0.1
    stop: threading.Event = field(default_factory=threading.Event)


class LiveTable:
    """One table on its real devices (module docstring). :meth:`start`, then :meth:`run`
    until ``opts.stop`` is set, then :meth:`close`."""

    def __init__(self, cfg: TableConfig, opts: LiveOptions,
                 say: Callable[[str], None] = print) -> None:
        for device in ("shoe", "board"):
            if getattr(cfg.devices, device) == "sim":
                raise LiveTableError(f"[devices] {device} is \"sim\": a live table needs the "
                                     f"port of its {device} (a pyserial URL, e.g. "
                                     "/dev/ttyUSB0 or socket://10.0.0.9:4001)")
        self.cfg = cfg
        self.opts = opts
        self.say = say
        self.frames_dir = opts.frames_dir or Path(opts.db).with_suffix(".frames")
        self.camera: LiveCamera | None = None
        if cfg.camera.source != "sim":
            self.camera = LiveCamera(cfg.camera, self.frames_dir)  # loads the vision model
        self._opened: int | None = None  # the last round whose bets the board was opened for
        self._dealing: int | None = None  # the last round seen dealing
        self._checked: set[tuple[int, bool]] = set()  # (round, hole up) checked or due
        # one check at a time, in the order they fell due (the deal's before the reveal's)
        self._checks = ThreadPoolExecutor(1, thread_name_prefix="camera-check")
        self._closing = False

    def start(self) -> dict[str, str]:
        """Open the store, the devices, the camera and the web server; returns the pages'
        addresses. :class:`LiveTableError` if a device or the camera cannot be opened."""
        from vision.stream import StreamError

        self.store = Store(self.opts.db)
        self.svc = TableService(self.store, self.cfg)
        self.devices = TableDevices(self.svc, self.cfg.devices.shoe, self.cfg.devices.board)
        try:
            self.devices.start()
        except Exception as exc:  # a port that is not there: pyserial's own error says which
            raise LiveTableError(f"a device could not be opened: {exc}") from exc
        if self.camera is not None:
            try:
                self.camera.open()
            except StreamError as exc:
                raise LiveTableError(str(exc)) from exc
            from vision.selfcheck import identity

            self.svc.camera_started(identity(self.camera.recognizer))
        self._resume()
        web = self.cfg.web
        self.web = WebServer(create_app(self.svc, self.frames_dir),
                             self.opts.host or web.host,
                             web.port if self.opts.port is None else self.opts.port)
        url = self.web.start()
        return {"sign": f"{url}/sign", "dealer": f"{url}/dealer", "floor": f"{url}/floor",
                "surveillance": f"{url}/surveillance", "db": self.opts.db}

    def _resume(self) -> None:
        """After a restart: the current round's bets are open on the board again, and the
        camera checks its frames record are not made twice."""
        rnd = self.svc.call(self.svc.table.current)
        if rnd is None:
            return
        if rnd.state is State.BETS_OPEN:
            self._open_bets(rnd)
        for hole_up in (False, True):
            base = check_frame_name(rnd.id, hole_up)
            if any(name.startswith(base) for name in rnd.data.get("frames", [])):
                self._checked.add((rnd.id, hole_up))
        if rnd.effective_state is State.DEALING:  # (dealing, or held while dealing)
            self._dealing = rnd.id

    def run(self) -> None:
        """:meth:`step` every ``poll_s`` seconds until ``opts.stop`` is set."""
        while not self.opts.stop.is_set():
            try:
                self.step()
            except Exception:  # a step that failed is logged; the table goes on
                log.exception("live table step failed")
            self.opts.stop.wait(self.opts.poll_s)

    def step(self) -> None:
        """Open a newly opened round's bets on the board; make the round's camera checks
        that are due (module docstring)."""
        table = self.svc.table
        rnd = self.svc.call(table.current)
        if rnd is not None and rnd.state is State.BETS_OPEN and rnd.id != self._opened:
            self._open_bets(rnd)
        if self.camera is None:
            return
        if rnd is not None and rnd.state is State.DEALING:
            self._dealing = rnd.id
            if rnd.hole_dealt and (rnd.id, False) not in self._checked:
                self._check(rnd, hole_up=False)
        if self._dealing is not None and (self._dealing, True) not in self._checked:
            dealt = self.svc.call(table.round, self._dealing)
            if dealt.effective_state in AFTER_REVEAL:
                self._check(dealt, hole_up=True)

    def _open_bets(self, rnd: Round) -> None:
        self._opened = rnd.id
        self.devices.open_bets()
        for seat in range(1, self.cfg.table.seats + 1):
            self.devices.board.light(seat, "OFF", "")

    def _check(self, rnd: Round, hole_up: bool) -> None:
        self._checked.add((rnd.id, hole_up))
        self._checks.submit(self._read_and_check, rnd, hole_up)

    def _read_and_check(self, rnd: Round, hole_up: bool) -> None:
        assert self.camera is not None
        if self._closing:
            return
        name = check_frame_name(rnd.id, hole_up)
        try:
            read = self.camera.capture(None, name)
            if read.camera_error is not None and self._closing:
                return  # stopped, not lost: a restart makes the check if still due
            result = self.svc.camera_check(rnd.id, read.cards, hole_up, read.frame_names,
                                           read.calibration_error, read.warning,
                                           read.rank_colour, read.quality, read.frame_sha256,
                                           read.camera_error)
        except Exception:  # a check that failed is logged; the table and the next check go on
            log.exception("camera check of round %d failed", rnd.id)
            return
        if result.problems:
            self.say(f"round {rnd.id}: camera — {'; '.join(result.problems)}")

    def close(self) -> None:
        self._closing = True
        self._checks.shutdown(wait=False, cancel_futures=True)  # no check starts now ...
        if self.camera is not None:
            self.camera.close()  # ... and one waiting for a frame ends, unrecorded
        self._checks.shutdown(wait=True)
        if getattr(self, "devices", None) is not None:
            self.devices.close()
        if getattr(self, "web", None) is not None:
            self.web.stop()
        if getattr(self, "store", None) is not None:
            self.store.close()
