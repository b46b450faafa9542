"""Device simulators: a card-reading shoe and a table I/O board speaking the real bytes.

Each simulator serves one endpoint -- a pseudo-terminal (``os.openpty``; the controller opens
:attr:`url`, e.g. ``/dev/pts/5``) or a TCP listening socket (``socket://127.0.0.1:PORT``) --
through the same :class:`~controller.devices.link.SerialLink` the controller uses, with fault
injection (:class:`~controller.devices.link.FaultConfig`: noise, corrupt, duplicate, drop_acks)
and silence (``silent_after`` seconds after start, for ``silent_for`` seconds or for good).

::

    sim = ShoeSimulator(endpoint="pty", cards=parse_cards(["7D,KH,AS"]), decks=6)
    sim.start(); print(sim.url)           # connect a ShoeClient here
    sim.wait(timeout=10)                  # True once every card was dealt and acknowledged
    sim.close()                           # the device disappears (pty/socket closed)

    board = BoardSimulator(endpoint="tcp", seats=7)
    board.start(); board.press("LOCKOUT"); board.bet(3, True); board.main(3, True)
    board.commands                        # [Frame(LOCK|ON), Frame(LIGHT|3|ON|WAGER), ...]
    board.wait_for_command(lambda f: f.type == "LOCK", timeout=1.0) -> Frame | None

The shoe sends HELLO (retrying until a controller acknowledges it), SHUFFLE, then its cards
(a scripted list or a seeded random Spanish shoe), optional ERR frames before given cards, and
heartbeats every second throughout; each frame is delivered reliably before the next.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from controller.cards import Card, ShoeComposition
from controller.devices.frames import Frame
from controller.devices.link import FaultConfig, LinkStatus, SerialLink
from controller.devices.ports import Port, PtyPort, TcpListener


class Endpoint:
    """Where a simulator listens: a pty or a TCP socket; :attr:`url` is for the controller."""

    def __init__(self, kind: str = "pty", host: str = "127.0.0.1", port: int = 0) -> None:
        if kind == "pty":
            self._pty: PtyPort | None = PtyPort()
            self._tcp: TcpListener | None = None
            self.url = self._pty.slave_path
            self.opener: Callable[[], Port] = self._pty.opener
        elif kind == "tcp":
            self._pty = None
            self._tcp = TcpListener(host, port)
            self.url = self._tcp.url
            self.opener = self._tcp.accept
        else:
            raise ValueError(f"endpoint must be 'pty' or 'tcp', not {kind!r}")
        self.kind = kind

    def close(self) -> None:
        if self._pty is not None:
            self._pty.close()
        if self._tcp is not None:
            self._tcp.close()


@dataclass(frozen=True, slots=True)
class Silence:
    """Go silent ``after`` seconds from start, for ``duration`` seconds (None: for good)."""

    after: float
    duration: float | None = None


class _Device:
    """What both simulators share: endpoint, link, silence timer, start/close."""

    def __init__(
        self,
        name: str,
        endpoint: str | Endpoint,
        faults: FaultConfig | None,
        silence: Silence | None,
        heartbeat_interval: float,
        host: str,
        tcp_port: int,
    ) -> None:
        self.endpoint = endpoint if isinstance(endpoint, Endpoint) else Endpoint(
            endpoint, host, tcp_port
        )
        self.url = self.endpoint.url
        self.received: list[Frame] = []
        self.statuses: list[LinkStatus] = []
        self._received_cond = threading.Condition()
        self._stop = threading.Event()
        self._done = threading.Event()
        self._silence = silence
        self._t0 = time.monotonic()
        self.link = SerialLink(
            self.endpoint.opener,
            on_frame=self._on_frame,
            on_status=self.statuses.append,
            name=name,
            heartbeat_interval=heartbeat_interval,
            heartbeat_fields=lambda: (str(self.millis()),),
            rx_timeout=None,
            reconnect_interval=0.05,
            faults=faults,
        )
        self._threads: list[threading.Thread] = []

    def millis(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    def start(self) -> None:
        self._t0 = time.monotonic()
        self.link.start()
        self._spawn(self._run, "script")
        if self._silence is not None:
            self._spawn(self._run_silence, "silence")

    def _spawn(self, target: Callable[[], None], what: str) -> None:
        t = threading.Thread(target=target, name=f"{self.link.name}-{what}", daemon=True)
        t.start()
        self._threads.append(t)

    def _run_silence(self) -> None:
        s = self._silence
        assert s is not None
        if self._stop.wait(s.after):
            return
        self.link.silent = True
        if s.duration is not None and not self._stop.wait(s.duration):
            self.link.silent = False

    def _run(self) -> None:
        self._done.set()

    def _on_frame(self, frame: Frame) -> None:
        with self._received_cond:
            self.received.append(frame)
            self._received_cond.notify_all()

    def deliver(self, type_: str, *fields: str) -> bool:
        """Send one frame and wait until it is acknowledged (False if the simulator stops)."""
        d = self.link.send(type_, *fields)
        while not self._stop.is_set():
            if d.wait(0.1):
                return True
            if d.done:  # dropped (link closed)
                return False
        return False

    def wait(self, timeout: float | None = None) -> bool:
        """True once the simulator's script has finished."""
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def close(self) -> None:
        """Stop, close the link and the endpoint: to the controller, the device disappears."""
        self._stop.set()
        self.link.close()
        self.endpoint.close()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=2)


def random_shoe(decks: int = 6, seed: int | None = None) -> list[Card]:
    """A shuffled Spanish shoe of ``decks`` decks (reproducible with ``seed``)."""
    cards = list(ShoeComposition.spanish(decks))
    random.Random(seed).shuffle(cards)
    return cards


class ShoeSimulator(_Device):
    """A card-reading shoe (see the module docstring)."""

    def __init__(
        self,
        endpoint: str | Endpoint = "pty",
        *,
        cards: Sequence[Card] | None = None,
        decks: int = 6,
        seed: int | None = None,
        count: int | None = None,
        card_interval: float = 0.0,
        errors: Mapping[int, tuple[str, str]] | None = None,
        shuffle: bool = True,
        hello: tuple[str, str, str] = ("SIM-SHOE", "1.0", "SN0001"),
        faults: FaultConfig | None = None,
        silence: Silence | None = None,
        heartbeat_interval: float = 1.0,
        linger: float = 0.0,
        host: str = "127.0.0.1",
        tcp_port: int = 0,
    ) -> None:
        super().__init__("shoe-sim", endpoint, faults, silence, heartbeat_interval, host, tcp_port)
        deck = list(cards) if cards is not None else random_shoe(decks, seed)
        self.cards: list[Card] = deck[:count] if count is not None else deck
        self.decks = decks
        self.card_interval = card_interval
        self.errors = dict(errors or {})
        self.shuffle = shuffle
        self.hello = hello
        self.linger = linger
        self.dealt: list[tuple[Card, int]] = []  # (card, millis) acknowledged by the controller

    def _run(self) -> None:
        try:
            if not self.deliver("HELLO", *self.hello):
                return
            if self.shuffle and not self.deliver("SHUFFLE", str(self.decks)):
                return
            for i, card in enumerate(self.cards):
                if i in self.errors:
                    code, text = self.errors[i]
                    if not self.deliver("ERR", code, text):
                        return
                millis = self.millis()
                if not self.deliver("CARD", card.code, str(millis)):
                    return
                self.dealt.append((card, millis))
                if self.card_interval and self._stop.wait(self.card_interval):
                    return
            if len(self.cards) in self.errors:
                code, text = self.errors[len(self.cards)]
                self.deliver("ERR", code, text)
            self.link.wait_idle(5.0)
            self._stop.wait(self.linger)
        finally:
            self._done.set()


class BoardSimulator(_Device):
    """A table I/O board: sends HELLO, then whatever sensor/button events it is told to;
    records the LOCK/LIGHT/SIGN commands it receives (in :attr:`commands`) and keeps the
    state they set (:attr:`locked`, :attr:`lights`, :attr:`sign_text`)."""

    def __init__(
        self,
        endpoint: str | Endpoint = "pty",
        *,
        seats: int = 7,
        hello: tuple[str, str] = ("SIM-BOARD", "1.0"),
        faults: FaultConfig | None = None,
        silence: Silence | None = None,
        heartbeat_interval: float = 1.0,
        host: str = "127.0.0.1",
        tcp_port: int = 0,
        on_command: Callable[[Frame], None] | None = None,
    ) -> None:
        super().__init__("board-sim", endpoint, faults, silence, heartbeat_interval, host, tcp_port)
        self.seats = seats
        self.hello = hello
        self.locked = False
        self.lights: dict[int, tuple[str, str]] = {}
        self.sign_text = ""
        self._on_command = on_command
        self._hello_done = threading.Event()

    @property
    def commands(self) -> list[Frame]:
        with self._received_cond:
            return [f for f in self.received if f.type != "HB"]

    def _run(self) -> None:
        if self.deliver("HELLO", *self.hello, str(self.seats)):
            self._hello_done.set()
        self._done.set()

    def wait_hello(self, timeout: float) -> bool:
        """True once the controller acknowledged the board's HELLO."""
        return self._hello_done.wait(timeout)

    def _on_frame(self, frame: Frame) -> None:
        f = frame.fields
        if frame.type == "LOCK" and f and f[0] in ("ON", "OFF"):
            self.locked = f[0] == "ON"
        elif frame.type == "LIGHT" and len(f) == 3 and f[0].isdigit():
            self.lights[int(f[0])] = (f[1], f[2])
        elif frame.type == "SIGN" and len(f) == 1:
            self.sign_text = f[0]
        super()._on_frame(frame)
        if self._on_command is not None:
            self._on_command(frame)

    def wait_for_command(
        self, predicate: Callable[[Frame], bool], timeout: float
    ) -> Frame | None:
        """The first received command matching ``predicate``, waiting up to ``timeout``."""
        end = time.monotonic() + timeout
        with self._received_cond:
            while True:
                for f in self.received:
                    if predicate(f):
                        return f
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self._received_cond.wait(left)

    # events to the controller (each delivered reliably; False if the simulator stopped)

    def bet(self, seat: int, on: bool) -> bool:
        return self.deliver("BET", str(seat), "ON" if on else "OFF")

    def main(self, seat: int, on: bool) -> bool:
        return self.deliver("MAIN", str(seat), "ON" if on else "OFF")

    def press(self, button: str) -> bool:
        return self.deliver("BUTTON", button)
