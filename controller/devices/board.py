"""The table I/O board (bet sensors, main-wager sensors, buttons, seat lights, sign).

::

    board = BoardClient("/dev/ttyUSB1", on_event=callback)   # or events queue as for the shoe
    board.start(require_open=True)
    board.lock(True)                          # LOCK|ON  -> Delivery (d.wait(t) -> True on ACK)
    board.light(3, "ON", "Three of a Kind")   # LIGHT|3|ON|Three of a Kind
    board.sign("Dynamic Pays: 4 of a kind 300 for 1")
    board.online; board.seats; board.protocol_errors
    board.close()

Events (frozen dataclasses): :class:`BoardHello` ``(model, firmware, seats, seq)``,
:class:`Bet` ``(seat, on, seq)``, :class:`Main` ``(seat, on, seq)``, :class:`Button`
``(name, seq)`` with name ``LOCKOUT``, ``REVEAL`` or ``CALL``, and
:class:`~controller.devices.link.LinkStatus`. Heartbeats are not events. A frame that breaks
the board protocol (unknown type, bad seat or state, unknown button) is counted in
:attr:`BoardClient.protocol_errors` and logged, never an event.

Commands are checked before they are queued: :class:`BoardCommandError` (a ``ValueError``) for
a seat out of range, an unknown light state, or text the wire cannot carry (``|``, non-ASCII,
too long).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.devices.frames import MAX_BODY, Frame
from controller.devices.link import Delivery, DeviceClient, LinkStatus
from controller.devices.ports import Port

BUTTONS = frozenset({"LOCKOUT", "REVEAL", "CALL"})
LIGHT_STATES = frozenset({"ON", "OFF", "BLINK"})
MAX_SEATS = 99
_SEAT = re.compile(r"[1-9]\d?\Z")
_TEXT = re.compile(r"[\x20-\x7b\x7d\x7e]*\Z")


class BoardProtocolError(ValueError):
    """A valid frame whose content the board protocol does not allow."""


class BoardCommandError(ValueError):
    """A command the board protocol cannot carry."""


@dataclass(frozen=True, slots=True)
class BoardHello:
    model: str
    firmware: str
    seats: int
    seq: int


@dataclass(frozen=True, slots=True)
class Bet:
    seat: int
    on: bool
    seq: int


@dataclass(frozen=True, slots=True)
class Main:
    seat: int
    on: bool
    seq: int


@dataclass(frozen=True, slots=True)
class Button:
    name: str
    seq: int


BoardEvent = BoardHello | Bet | Main | Button


def _seat(text: str, seats: int | None) -> int:
    if not _SEAT.match(text):
        raise BoardProtocolError(f"bad seat {text!r}")
    seat = int(text)
    if seats is not None and seat > seats:
        raise BoardProtocolError(f"seat {seat} beyond the board's {seats} seats")
    return seat


def _on_off(text: str) -> bool:
    if text == "ON":
        return True
    if text == "OFF":
        return False
    raise BoardProtocolError(f"bad sensor state {text!r}: expected ON or OFF")


def decode_board_frame(frame: Frame, seats: int | None = None) -> BoardEvent | None:
    """The event a board frame carries; None for a heartbeat; BoardProtocolError if malformed."""
    t, f = frame.type, frame.fields
    expected = {"HB": 1, "HELLO": 3, "BET": 2, "MAIN": 2, "BUTTON": 1}.get(t)
    if expected is None:
        raise BoardProtocolError(f"unknown board frame type {t!r}")
    if len(f) != expected:
        raise BoardProtocolError(f"{t} needs {expected} field(s), got {len(f)}: {frame.body!r}")
    if t == "HB":
        if not f[0].isdigit():
            raise BoardProtocolError(f"bad heartbeat millis {f[0]!r}")
        return None
    if t == "HELLO":
        if not _SEAT.match(f[2]):
            raise BoardProtocolError(f"bad seat count {f[2]!r}")
        return BoardHello(f[0], f[1], int(f[2]), frame.seq)
    if t == "BET":
        return Bet(_seat(f[0], seats), _on_off(f[1]), frame.seq)
    if t == "MAIN":
        return Main(_seat(f[0], seats), _on_off(f[1]), frame.seq)
    if f[0] not in BUTTONS:
        raise BoardProtocolError(f"unknown button {f[0]!r}")
    return Button(f[0], frame.seq)


def _check_text(text: str, what: str, room: int) -> str:
    if not isinstance(text, str) or not _TEXT.match(text):
        raise BoardCommandError(f"{what} {text!r}: printable ASCII without '|' only")
    if len(text) > room:
        raise BoardCommandError(f"{what} is {len(text)} characters, at most {room} fit a frame")
    return text


class BoardClient(DeviceClient):
    """The controller's end of the table I/O board (see the module docstring)."""

    def __init__(
        self,
        port: str | Callable[[], Port],
        on_event: Callable[[BoardEvent | LinkStatus], None] | None = None,
        *,
        seats: int | None = None,
        **link_options: Any,
    ) -> None:
        super().__init__(port, on_event, "board", link_options)
        self.seats = seats  # the board's HELLO replaces it
        self.last_hello: BoardHello | None = None

    # commands ----------------------------------------------------------------

    def lock(self, on: bool) -> Delivery:
        """LOCK ON / OFF: lock the progressive bet sensors. Goes ahead of queued commands."""
        return self.link.send("LOCK", "ON" if on else "OFF", urgent=True)

    def light(self, seat: int, state: str, label: str = "") -> Delivery:
        """Seat light ``ON``, ``OFF`` or ``BLINK`` with a label shown beside it (may be empty)."""
        if not isinstance(seat, int) or not 1 <= seat <= (self.seats or MAX_SEATS):
            raise BoardCommandError(f"bad seat {seat!r}")
        if state not in LIGHT_STATES:
            raise BoardCommandError(f"bad light state {state!r}: expected ON, OFF or BLINK")
        room = MAX_BODY - len(f"0000|LIGHT|{seat}|{state}|")
        return self.link.send("LIGHT", str(seat), state, _check_text(label, "label", room))

    def sign(self, text: str) -> Delivery:
        """One line for the table's own small display."""
        room = MAX_BODY - len("0000|SIGN|")
        return self.link.send("SIGN", _check_text(text, "sign text", room))

    # events ------------------------------------------------------------------

    protocol_error = BoardProtocolError

    def _decode(self, frame: Frame) -> BoardEvent | None:
        return decode_board_frame(frame, self.seats)

    def _deliver(self, event: BoardEvent) -> None:
        if isinstance(event, BoardHello):
            self.last_hello = event
            self.seats = event.seats
        self._on_event(event)
