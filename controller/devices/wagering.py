"""Recognising progressive wagers at the table (58 Pa. Code § 635b.3(c)(1), (d), (e)).

A progressive wager is recognised only while bets are open and only at a seat whose main wager
is in place (its MAIN sensor reads ON). Each recognised wager is acknowledged at its seat -- the
seat light, the wagering device of § 635b.3(c)(1) -- with ``LIGHT|seat|ON|WAGER``. When the
dealer presses lock-out, ``LOCK|ON`` is sent to the board before anything else is done; from
then on a BET is refused and reported, never counted, until :meth:`WagerRecognizer.open_bets`.

::

    rec = WagerRecognizer(board)              # board: BoardClient or anything with lock/light
    rec.open_bets()                           # LOCK OFF, lights of last round OFF, bets open
    decisions = rec.handle(event)             # feed every board event (BoardClient on_event)
    rec.bets_open; rec.wagers (frozenset of seats); rec.seats_in (MAIN ON seats)
    rec.locked_out -> LockedOut | None        # the wagers and seats fixed at lock-out

Decisions returned by :meth:`handle` (and passed to ``on_decision`` if given):
:class:`WagerAccepted` ``(seat)``, :class:`WagerWithdrawn` ``(seat, reason)``,
:class:`WagerRefused` ``(seat, reason)`` with reason :data:`REFUSED_NO_MAIN` or
:data:`REFUSED_LOCKED`, :class:`LockedOut` ``(wagers, seats_in)`` and
:class:`SensorAfterLockout` ``(sensor, seat, on)``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from controller.devices.board import Bet, Button, Main

log = logging.getLogger(__name__)

REFUSED_NO_MAIN = "no main wager at this seat"
REFUSED_LOCKED = "bets are locked out"
ACK_LABEL = "WAGER"
NO_MAIN_LABEL = "NO MAIN WAGER"


class BoardCommands(Protocol):
    def lock(self, on: bool) -> Any: ...

    def light(self, seat: int, state: str, label: str = "") -> Any: ...


@dataclass(frozen=True, slots=True)
class WagerAccepted:
    seat: int


@dataclass(frozen=True, slots=True)
class WagerWithdrawn:
    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class WagerRefused:
    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class LockedOut:
    wagers: tuple[int, ...]
    seats_in: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SensorAfterLockout:
    sensor: str  # "BET" or "MAIN"
    seat: int
    on: bool


Decision = WagerAccepted | WagerWithdrawn | WagerRefused | LockedOut | SensorAfterLockout


class WagerRecognizer:
    """The wager-recognition rule, driven by board events (thread-safe)."""

    def __init__(
        self,
        board: BoardCommands | None = None,
        on_decision: Callable[[Decision], None] | None = None,
    ) -> None:
        self._board = board
        self._on_decision = on_decision
        self._lock = threading.RLock()
        self._bet: set[int] = set()  # BET sensors reading ON
        self._main: set[int] = set()  # MAIN sensors reading ON
        self._wagers: set[int] = set()
        self._blinking: set[int] = set()  # seats told "no main wager"
        self._open = False
        self.locked_out: LockedOut | None = None
        self.refusals: list[WagerRefused] = []

    @property
    def bets_open(self) -> bool:
        return self._open

    @property
    def wagers(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._wagers)

    @property
    def seats_in(self) -> tuple[int, ...]:
        with self._lock:
            return tuple(sorted(self._main))

    def open_bets(self) -> list[Decision]:
        """Start a round's betting: unlock the sensors, recognise what is already in place."""
        with self._lock:
            if self._board is not None:
                self._board.lock(False)
                for seat in sorted(self._wagers | self._blinking):
                    self._board.light(seat, "OFF", "")
            self._wagers.clear()
            self._blinking.clear()
            self._open = True
            self.locked_out = None
            self.refusals = []
            out: list[Decision] = []
            for seat in sorted(self._bet):
                out += self._evaluate(seat)
        return self._emit(out)

    def handle(self, event: object) -> list[Decision]:
        """Apply one board event; other events (HELLO, link status, REVEAL...) are ignored."""
        with self._lock:
            if isinstance(event, Button):
                out = self._lockout() if event.name == "LOCKOUT" else []
            elif isinstance(event, Bet):
                out = self._sensor(self._bet, "BET", event.seat, event.on)
            elif isinstance(event, Main):
                out = self._sensor(self._main, "MAIN", event.seat, event.on)
            else:
                out = []
        return self._emit(out)

    # ------------------------------------------------------------------------

    def _emit(self, decisions: list[Decision]) -> list[Decision]:
        for d in decisions:
            log.info("wagering: %s", d)
            if self._on_decision is not None:
                self._on_decision(d)
        return decisions

    def _lockout(self) -> list[Decision]:
        if self._board is not None:
            self._board.lock(True)  # first: no wager is recognised from this moment
        if not self._open:
            return []
        self._open = False
        self.locked_out = LockedOut(tuple(sorted(self._wagers)), tuple(sorted(self._main)))
        return [self.locked_out]

    def _sensor(self, sensors: set[int], kind: str, seat: int, on: bool) -> list[Decision]:
        was_on = seat in sensors
        if on:
            sensors.add(seat)
        else:
            sensors.discard(seat)
        if not self._open:
            if kind == "BET" and on:
                refusal = WagerRefused(seat, REFUSED_LOCKED)
                self.refusals.append(refusal)
                return [refusal]
            if on != was_on:
                return [SensorAfterLockout(kind, seat, on)]
            return []
        return self._evaluate(seat, refuse=(kind == "BET" and on))

    def _evaluate(self, seat: int, refuse: bool = True) -> list[Decision]:
        """Bets are open: recognise or withdraw the wager at ``seat`` from its sensors."""
        betting = seat in self._bet
        has_main = seat in self._main
        recognised = seat in self._wagers
        if betting and has_main and not recognised:
            self._wagers.add(seat)
            self._blinking.discard(seat)
            if self._board is not None:
                self._board.light(seat, "ON", ACK_LABEL)
            return [WagerAccepted(seat)]
        if recognised and not (betting and has_main):
            self._wagers.discard(seat)
            reason = "progressive bet removed" if not betting else "main wager removed"
            if self._board is not None:
                if betting:
                    self._board.light(seat, "BLINK", NO_MAIN_LABEL)
                else:
                    self._board.light(seat, "OFF", "")
            if betting:
                self._blinking.add(seat)
            return [WagerWithdrawn(seat, reason)]
        if betting and not has_main and refuse:
            refusal = WagerRefused(seat, REFUSED_NO_MAIN)
            self.refusals.append(refusal)
            self._blinking.add(seat)
            if self._board is not None:
                self._board.light(seat, "BLINK", NO_MAIN_LABEL)
            return [refusal]
        if not betting and seat in self._blinking:
            self._blinking.discard(seat)
            if self._board is not None:
                self._board.light(seat, "OFF", "")
        return []
