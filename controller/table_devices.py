"""The controller's side of the devices: shoe and table board events into the round state
machine, and lights and the small sign back to the board.

- Board: MAIN and BET sensors go through :class:`~controller.devices.wagering.WagerRecognizer`
  (a wager counts only while bets are open, only at a seat with its main wager; LOCK ON goes out
  the moment the dealer presses lock-out); REVEAL turns the hole card over; CALL holds the round
  for a floorperson.
- Shoe: SHUFFLE loads a new shoe (its first card is burned); CARD deals the next card to its
  spot; JAM, MISREAD and DOOR hold the round; LOW is shown on the table's small sign.
- A device that goes offline while cards are being dealt holds the round.

Device callbacks run on the serial reader threads; everything goes through
:meth:`TableService.call`, one event at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from controller.auth import Actor, Role
from controller.devices.board import BoardClient, Button, Main
from controller.devices.link import LinkStatus
from controller.devices.shoe import CardDrawn, ShoeClient, ShoeError, Shuffle
from controller.devices.wagering import (
    LockedOut,
    WagerAccepted,
    WagerRecognizer,
    WagerWithdrawn,
)
from controller.rounds import IllegalEvent, State
from controller.service import TableService

log = logging.getLogger(__name__)

BOARD_DEALER = Actor("dealer@board", Role.DEALER)
SHOE = Actor("shoe", Role.ADMINISTRATOR)
IN_PLAY = (State.DRAWN, State.DEALING)


class TableDevices:
    """Connects one shoe and one table board to a :class:`TableService`."""

    def __init__(self, service: TableService, shoe_url: str, board_url: str,
                 on_card: Callable[[str, str], None] | None = None) -> None:
        self.svc = service
        self.on_card = on_card
        self.board = BoardClient(board_url, on_event=self._board_event,
                                 seats=service.cfg.table.seats)
        self.shoe = ShoeClient(shoe_url, on_event=self._shoe_event)
        self.recognizer = WagerRecognizer(self.board, on_decision=self._decision)
        self.errors: list[str] = []
        self._closing = False
        service.lights = self.board

    def start(self) -> None:
        self.board.start(require_open=True)
        self.shoe.start(require_open=True)

    def close(self) -> None:
        self._closing = True  # links going down now are ours, not a device failure
        self.shoe.close()
        self.board.close()

    def open_bets(self) -> None:
        """A new round: unlock the bet sensors and recognise wagers already in place."""
        self.recognizer.open_bets()

    # -- board ----------------------------------------------------------------------------
    def _board_event(self, event: Any) -> None:
        try:
            if isinstance(event, Main):
                self.svc.call(self.svc.table.set_main, event.seat, event.on)
            if isinstance(event, Button) and event.name == "REVEAL":
                self.svc.call(self.svc.table.reveal, BOARD_DEALER)
            elif isinstance(event, Button) and event.name == "CALL":
                self.svc.call(self.svc.table.hold, "floorperson called from the table",
                              BOARD_DEALER)
            elif isinstance(event, LinkStatus):
                self._link("table board", event)
            self.recognizer.handle(event)
        except IllegalEvent as exc:
            self._note(str(exc))

    def _decision(self, decision: Any) -> None:
        table = self.svc.table
        try:
            if isinstance(decision, WagerAccepted):
                self.svc.call(table.set_main, decision.seat, True)
                self.svc.call(table.place_wager, decision.seat, BOARD_DEALER)
            elif isinstance(decision, WagerWithdrawn):
                self.svc.call(table.withdraw_wager, decision.seat, BOARD_DEALER)
            elif isinstance(decision, LockedOut):
                self.svc.call(table.lockout, BOARD_DEALER)
        except IllegalEvent as exc:
            self._note(str(exc))

    # -- shoe -----------------------------------------------------------------------------
    def _shoe_event(self, event: Any) -> None:
        table = self.svc.table
        try:
            if isinstance(event, Shuffle):
                self.svc.call(table.shuffle, event.decks, {"source": "shoe", "seq": event.seq},
                              SHOE)
            elif isinstance(event, CardDrawn):
                spot = self.svc.call(self._deal, event)
                if self.on_card is not None:
                    self.on_card(event.card.code, spot)
            elif isinstance(event, ShoeError):
                if event.holds_round:
                    self._hold_if_open(f"shoe error {event.code}: {event.text}")
                else:
                    self.board.sign(f"SHOE {event.code}: {event.text}"[:60])
            elif isinstance(event, LinkStatus):
                self._link("shoe", event)
        except IllegalEvent as exc:
            self._note(str(exc))

    def _deal(self, event: CardDrawn) -> str:
        table = self.svc.table
        try:
            return table.deal(event.card.code, "shoe", event.seq, event.millis, SHOE)
        except IllegalEvent:
            # A card out of turn (before the draw, while bets are open): the refusal is
            # recorded; the round is held so a floorperson looks at the layout.
            rnd = table.current()
            if rnd is not None and rnd.state is not State.HELD:
                table.hold(f"card {event.card.code} drawn while the round was "
                           f"{rnd.state.value}", SHOE)
            raise

    def _link(self, what: str, status: LinkStatus) -> None:
        if self._closing:
            return
        if status.online:
            log.info("%s online: %s", what, status.reason)
        else:
            log.warning("%s offline: %s", what, status.reason)
        if not status.online:
            self._hold_if_open(f"{what} offline: {status.reason}", only_in_play=True)

    def _hold_if_open(self, reason: str, only_in_play: bool = False) -> None:
        def hold() -> None:
            rnd = self.svc.table.current()
            if rnd is None or (only_in_play and rnd.effective_state not in IN_PLAY):
                return
            self.svc.table.hold(reason, SHOE)
        self.svc.call(hold)

    def _note(self, message: str) -> None:
        log.info("device event refused: %s", message)
        self.errors.append(message)
