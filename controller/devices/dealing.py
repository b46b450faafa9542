"""Which card went to which seat: the dealing order of a round (pure, no I/O).

Dealing order (rules: "A round", step 5): one card to each seat dealt in -- the seats whose
MAIN sensor is on, first base (seat 1, the dealer's far left) first -- then the dealer's up
card, then a second card to each seat in the same order, then the dealer's hole card. Every
later card (hits, splits, doubles) is recorded for surveillance as an extra and never joins a
four-card hand.

::

    deal = DealAssigner(seats_in=[1, 3, 6])     # seats dealt in, any order; sorted here
    for card in cards_after_burn:
        placement = deal.add(card)              # Placement(index, card, target, round_no)
    deal.complete                               # both cards of every seat and the dealer
    deal.player_cards(3)                        # (first, second) for seat 3 (partial if early)
    deal.dealer_up, deal.dealer_hole            # Card | None
    deal.four_card_hand(3)                      # (p1, p2, up, hole); DealIncompleteError early
    deal.extras                                 # tuple of Placement, in the order drawn

    assign_deal(seats_in, cards) -> DealAssigner   # the same in one call

The burn card after a SHUFFLE is not part of a round: leave it out (``CardDrawn.burn`` marks
it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from controller.cards import Card

DEALER_UP = "DEALER_UP"
DEALER_HOLE = "DEALER_HOLE"
EXTRA = "EXTRA"


class DealIncompleteError(RuntimeError):
    """A four-card hand was asked for before its cards were dealt."""


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one card went: ``target`` is a seat number, DEALER_UP, DEALER_HOLE or EXTRA;
    ``round_no`` is 1 or 2 for the initial deal (first or second card), 0 for an extra."""

    index: int
    card: Card
    target: int | str
    round_no: int


class DealAssigner:
    """Assigns the cards of one round, in the order drawn, to seats and the dealer."""

    def __init__(self, seats_in: Iterable[int]) -> None:
        seats = sorted(set(seats_in))
        if any(not isinstance(s, int) or s < 1 for s in seats):
            raise ValueError(f"seats are numbered from 1 (first base): {seats!r}")
        self.seats: tuple[int, ...] = tuple(seats)
        order: list[tuple[int | str, int]] = [(s, 1) for s in seats]
        order.append((DEALER_UP, 1))
        order += [(s, 2) for s in seats]
        order.append((DEALER_HOLE, 2))
        self._order = tuple(order)
        self._placements: list[Placement] = []

    def add(self, card: Card) -> Placement:
        """Record the next card drawn and say where it went."""
        i = len(self._placements)
        if i < len(self._order):
            target, round_no = self._order[i]
        else:
            target, round_no = EXTRA, 0
        p = Placement(i, card, target, round_no)
        self._placements.append(p)
        return p

    @property
    def placements(self) -> tuple[Placement, ...]:
        return tuple(self._placements)

    @property
    def complete(self) -> bool:
        return len(self._placements) >= len(self._order)

    @property
    def cards_needed(self) -> int:
        """Cards still to come before every four-card hand is known."""
        return max(0, len(self._order) - len(self._placements))

    def _card_at(self, target: int | str, round_no: int) -> Card | None:
        for p in self._placements[: len(self._order)]:
            if p.target == target and p.round_no == round_no:
                return p.card
        return None

    def player_cards(self, seat: int) -> tuple[Card, ...]:
        if seat not in self.seats:
            raise KeyError(f"seat {seat} was not dealt in (seats dealt in: {self.seats})")
        return tuple(c for r in (1, 2) if (c := self._card_at(seat, r)) is not None)

    @property
    def dealer_up(self) -> Card | None:
        return self._card_at(DEALER_UP, 1)

    @property
    def dealer_hole(self) -> Card | None:
        return self._card_at(DEALER_HOLE, 2)

    def four_card_hand(self, seat: int) -> tuple[Card, Card, Card, Card]:
        """The player's two cards and the dealer's up and hole card."""
        cards = self.player_cards(seat)
        up, hole = self.dealer_up, self.dealer_hole
        if len(cards) != 2 or up is None or hole is None:
            raise DealIncompleteError(f"the four-card hand of seat {seat} is not dealt yet")
        return (cards[0], cards[1], up, hole)

    @property
    def extras(self) -> tuple[Placement, ...]:
        return tuple(self._placements[len(self._order) :])


def assign_deal(seats_in: Iterable[int], cards: Iterable[Card]) -> DealAssigner:
    """Assign a whole round's cards (after the burn card) at once."""
    deal = DealAssigner(seats_in)
    for card in cards:
        deal.add(card)
    return deal
