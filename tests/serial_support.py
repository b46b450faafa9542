"""Helpers for the serial tests: a hand-driven device on a real pseudo-terminal."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable

from controller.devices.frames import Frame, FrameError, FrameParser, encode_frame, next_seq
from controller.devices.ports import PtyPort


class RawPeer:
    """The device end of a real pty, driven by hand.

    ``write`` puts raw bytes on the wire; everything the controller sends back is parsed and
    collected in :attr:`frames` (ACK/NAK included). With ``auto_ack`` every frame but ACK/NAK
    from the controller is acknowledged.
    """

    def __init__(self, auto_ack: bool = False) -> None:
        self.pty = PtyPort(write_timeout=20.0)
        self.url = self.pty.slave_path
        self.auto_ack = auto_ack
        self._parser = FrameParser()
        self.frames: list[tuple[float, Frame]] = []
        self.errors: list[FrameError] = []
        self._cond = threading.Condition()
        self._seq = 1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.pty.read_some()
            except OSError:
                return
            if not data:
                continue
            now = time.monotonic()
            for item in self._parser.feed(data):
                if isinstance(item, FrameError):
                    self.errors.append(item)
                    continue
                with self._cond:
                    self.frames.append((now, item))
                    self._cond.notify_all()
                if self.auto_ack and item.type not in ("ACK", "NAK"):
                    self.send("ACK", f"{item.seq:04d}")

    def write(self, data: bytes) -> None:
        self.pty.write(data)

    def send(self, type_: str, *fields: str, seq: int | None = None) -> int:
        if seq is None:
            seq = self._seq
            self._seq = next_seq(seq)
        self.write(encode_frame(seq, type_, *fields))
        return seq

    def received(self, type_: str | None = None) -> list[Frame]:
        with self._cond:
            return [f for _, f in self.frames if type_ is None or f.type == type_]

    def wait_for(
        self, predicate: Callable[[list[Frame]], bool], timeout: float = 5.0
    ) -> list[Frame]:
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                frames = [f for _, f in self.frames]
                if predicate(frames):
                    return frames
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"condition not met; received {frames[-10:]}")
                self._cond.wait(left)

    def close(self) -> None:
        self._stop.set()
        self.pty.close()
        self._thread.join(timeout=2)


def drain(q: queue.Queue, timeout: float, until: Callable[[list], bool]) -> list:
    """Collect items from ``q`` until ``until(items)`` holds or ``timeout`` passes."""
    items: list = []
    end = time.monotonic() + timeout
    while not until(items):
        left = end - time.monotonic()
        if left <= 0:
            break
        with contextlib.suppress(queue.Empty):
            items.append(q.get(timeout=min(left, 0.1)))
    return items
