"""The card-reading shoe, as the controller sees it.

::

    shoe = ShoeClient("/dev/ttyUSB0")            # or socket://host:port, a pty path, loop://
    shoe.start(require_open=True)                # LinkError if the port can't be opened now
    event = shoe.events.get(timeout=1.0)         # ShoeHello | Shuffle | CardDrawn | ShoeError
                                                 # | LinkStatus
    shoe.online; shoe.protocol_errors; shoe.link.stats()
    shoe.close()

Pass ``on_event=callable`` instead to get each event by callback (called from the link's reader
or worker thread; keep it short). Without a callback, events go to the :attr:`ShoeClient.events`
queue.

Events (frozen dataclasses):

- :class:`ShoeHello` ``(model, firmware, serial, seq)`` -- power-up or reconnect.
- :class:`Shuffle` ``(decks, seq)`` -- a new shoe; the next card is the burn card.
- :class:`CardDrawn` ``(card: Card, millis, seq, burn)`` -- ``burn`` is True for the first card
  after a SHUFFLE.
- :class:`ShoeError` ``(code, text, seq)`` -- ``JAM``, ``MISREAD``, ``DOOR`` hold the round
  (:attr:`ShoeError.holds_round`); ``LOW`` (cut card reached) is a warning.
- :class:`~controller.devices.link.LinkStatus` ``(online, reason)`` -- link up/down.

A frame that passes the CRC but breaks the shoe protocol (unknown TYPE, wrong field count, a
malformed card code, a bad number) is acknowledged at the link layer, logged and counted in
:attr:`ShoeClient.protocol_errors`, and never becomes an event. Heartbeats are not events.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.cards import Card, CardCodeError
from controller.devices.frames import Frame
from controller.devices.link import DeviceClient, LinkStatus
from controller.devices.ports import Port

ERROR_CODES = frozenset({"JAM", "MISREAD", "DOOR", "LOW"})
HOLDING_ERRORS = frozenset({"JAM", "MISREAD", "DOOR"})
_UINT = re.compile(r"\d{1,12}\Z")
_CARD = re.compile(r"[A23456789TJQK][SHDC]\Z")


class ShoeProtocolError(ValueError):
    """A valid frame whose content the shoe protocol does not allow."""


@dataclass(frozen=True, slots=True)
class ShoeHello:
    model: str
    firmware: str
    serial: str
    seq: int


@dataclass(frozen=True, slots=True)
class Shuffle:
    decks: int
    seq: int


@dataclass(frozen=True, slots=True)
class CardDrawn:
    card: Card
    millis: int
    seq: int
    burn: bool = False


@dataclass(frozen=True, slots=True)
class ShoeError:
    code: str
    text: str
    seq: int

    @property
    def holds_round(self) -> bool:
        """JAM, MISREAD and DOOR hold the round; LOW is only a warning."""
        return self.code in HOLDING_ERRORS


ShoeEvent = ShoeHello | Shuffle | CardDrawn | ShoeError


def _uint(text: str, what: str) -> int:
    if not _UINT.match(text):
        raise ShoeProtocolError(f"bad {what} {text!r}: expected a non-negative integer")
    return int(text)


def _expect(frame: Frame, n: int) -> None:
    if len(frame.fields) != n:
        raise ShoeProtocolError(
            f"{frame.type} needs {n} field(s), got {len(frame.fields)}: {frame.body!r}"
        )


def decode_shoe_frame(frame: Frame) -> ShoeEvent | None:
    """The event a shoe frame carries; None for a heartbeat; ShoeProtocolError if malformed.

    ``burn`` is always False here; :class:`ShoeClient` sets it from the SHUFFLE that preceded.
    """
    t = frame.type
    if t == "HB":
        _expect(frame, 1)
        _uint(frame.fields[0], "millis")
        return None
    if t == "HELLO":
        _expect(frame, 3)
        return ShoeHello(*frame.fields, seq=frame.seq)
    if t == "SHUFFLE":
        _expect(frame, 1)
        decks = _uint(frame.fields[0], "deck count")
        if not 1 <= decks <= 16:
            raise ShoeProtocolError(f"bad deck count {decks}")
        return Shuffle(decks, frame.seq)
    if t == "CARD":
        _expect(frame, 2)
        code = frame.fields[0]
        if not _CARD.match(code):  # the wire allows upper case only, no spaces
            raise ShoeProtocolError(f"bad card code {code!r}")
        try:
            card = Card.parse(code)
        except CardCodeError as exc:
            raise ShoeProtocolError(str(exc)) from None
        return CardDrawn(card, _uint(frame.fields[1], "millis"), frame.seq)
    if t == "ERR":
        _expect(frame, 2)
        code, text = frame.fields
        if code not in ERROR_CODES:
            raise ShoeProtocolError(f"unknown shoe error code {code!r}")
        return ShoeError(code, text, frame.seq)
    raise ShoeProtocolError(f"unknown shoe frame type {t!r}")


class ShoeClient(DeviceClient):
    """The controller's end of a card-reading shoe (see the module docstring)."""

    def __init__(
        self,
        port: str | Callable[[], Port],
        on_event: Callable[[ShoeEvent | LinkStatus], None] | None = None,
        **link_options: Any,
    ) -> None:
        super().__init__(port, on_event, "shoe", link_options)
        self._burn_next = False
        self.last_hello: ShoeHello | None = None

    protocol_error = ShoeProtocolError

    def _decode(self, frame: Frame) -> ShoeEvent | None:
        return decode_shoe_frame(frame)

    def _deliver(self, event: ShoeEvent) -> None:
        if isinstance(event, ShoeHello):
            self.last_hello = event
        elif isinstance(event, Shuffle):
            self._burn_next = True
        elif isinstance(event, CardDrawn) and self._burn_next:
            self._burn_next = False
            event = CardDrawn(event.card, event.millis, event.seq, burn=True)
        self._on_event(event)
