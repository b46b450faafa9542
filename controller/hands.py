"""The four-card Monster Match hand and its evaluator.

The hand is the player's first two cards plus the dealer's up card and hole card. Only the
highest-ranking combination counts::

    >>> evaluate(parse_cards(["AS", "AS", "AS", "AS"]))
    <Hand.FOUR_OF_A_KIND_SUITED: 'four_of_a_kind_suited'>
    >>> evaluate(parse_cards(["7H", "7D", "7H", "2C"])).value
    'three_of_a_kind_same_color'
    >>> evaluate(parse_cards(["7H", "7S", "7H", "2C"])).value
    'three_of_a_kind'

:func:`evaluate_indices` does the same for millions of hands at once (numpy), for simulation
and analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

import numpy as np

from controller.cards import Card, ShoeComposition, parse_cards

__all__ = ["Hand", "evaluate", "evaluate_indices", "HAND_CODES", "parse_cards"]


class Hand(Enum):
    """Hand names, highest first. ``rank`` orders them: higher is better."""

    FOUR_OF_A_KIND_SUITED = "four_of_a_kind_suited"
    FOUR_OF_A_KIND_SAME_COLOR = "four_of_a_kind_same_color"
    FOUR_OF_A_KIND = "four_of_a_kind"
    THREE_OF_A_KIND_SAME_COLOR = "three_of_a_kind_same_color"
    THREE_OF_A_KIND = "three_of_a_kind"
    LOSS = "loss"

    @property
    def rank(self) -> int:
        return len(HAND_ORDER) - 1 - HAND_ORDER.index(self)

    @property
    def code(self) -> int:
        """Small integer used by the vectorised evaluator (0 = loss ... 5 = suited four)."""
        return self.rank

    @property
    def label(self) -> str:
        """Human text, as shown on the sign."""
        return _LABELS[self]

    @property
    def is_win(self) -> bool:
        return self is not Hand.LOSS

    @classmethod
    def from_name(cls, name: str) -> Hand:
        try:
            return cls(name)
        except ValueError:
            known = ", ".join(h.value for h in cls)
            raise ValueError(f"unknown hand name {name!r}; known: {known}") from None


HAND_ORDER: tuple[Hand, ...] = tuple(Hand)
HAND_CODES: dict[int, Hand] = {h.code: h for h in Hand}
_LABELS = {
    Hand.FOUR_OF_A_KIND_SUITED: "Four of a Kind Suited",
    Hand.FOUR_OF_A_KIND_SAME_COLOR: "Four of a Kind Same Color",
    Hand.FOUR_OF_A_KIND: "Four of a Kind",
    Hand.THREE_OF_A_KIND_SAME_COLOR: "Three of a Kind Same Color",
    Hand.THREE_OF_A_KIND: "Three of a Kind",
    Hand.LOSS: "",
}


class HandSizeError(ValueError):
    """A Monster Match hand is exactly four cards."""


def evaluate(cards: Sequence[Card], shoe: ShoeComposition | None = None) -> Hand:
    """Rank one four-card hand.

    With ``shoe`` given, a hand holding a card foreign to that shoe (a ten in a Spanish shoe)
    is a loss: a foreign card never forms a winning hand (the round is held elsewhere).

    >>> evaluate(parse_cards(["KS", "KC", "KS", "KC"])).value
    'four_of_a_kind_same_color'
    >>> evaluate(parse_cards(["TS", "TS", "TS", "TS"]), ShoeComposition.spanish(6)).value
    'loss'
    """
    if len(cards) != 4:
        raise HandSizeError(f"a Monster Match hand is 4 cards, got {len(cards)}")
    if shoe is not None and any(shoe.is_foreign(c) for c in cards):
        return Hand.LOSS
    ranks = [c.rank for c in cards]
    for rank in set(ranks):
        group = [c for c in cards if c.rank == rank]
        if len(group) == 4:
            if len({c.suit for c in group}) == 1:
                return Hand.FOUR_OF_A_KIND_SUITED
            if len({c.is_red for c in group}) == 1:
                return Hand.FOUR_OF_A_KIND_SAME_COLOR
            return Hand.FOUR_OF_A_KIND
        if len(group) == 3:
            if len({c.is_red for c in group}) == 1:
                return Hand.THREE_OF_A_KIND_SAME_COLOR
            return Hand.THREE_OF_A_KIND
    return Hand.LOSS


# Suit index -> 1 when red (hearts = 1, diamonds = 2 in controller.cards.SUITS).
_RED_OF_SUIT = np.array([0, 1, 1, 0], dtype=np.uint8)


def evaluate_indices(hands: np.ndarray) -> np.ndarray:
    """Rank many hands at once.

    ``hands`` is an integer array of shape ``(n, 4)`` holding card indices ``rank * 4 + suit``
    (:attr:`Card.index`). Returns ``uint8`` hand codes (:attr:`Hand.code`: 0 = loss ...
    5 = four of a kind suited).

    >>> idx = np.array([[c.index for c in parse_cards(["AS", "AS", "AS", "AS"])],
    ...                 [c.index for c in parse_cards(["2H", "2D", "2H", "9C"])]])
    >>> [HAND_CODES[int(v)].value for v in evaluate_indices(idx)]
    ['four_of_a_kind_suited', 'three_of_a_kind_same_color']
    """
    h = np.asarray(hands)
    if h.ndim != 2 or h.shape[1] != 4:
        raise HandSizeError(f"expected an array of shape (n, 4), got {h.shape}")
    h = h.astype(np.uint8, copy=False)
    # Column-wise views keep every operation a flat, contiguous uint8 loop.
    a, b, c, d = (np.ascontiguousarray(h[:, i]) for i in range(4))
    ra, rb, rc, rd = a >> 2, b >> 2, c >> 2, d >> 2
    ab, ac, ad = ra == rb, ra == rc, ra == rd
    bc, bd, cd = rb == rc, rb == rd, rc == rd
    pairs = (
        ab.view(np.uint8) + ac.view(np.uint8) + ad.view(np.uint8)
        + bc.view(np.uint8) + bd.view(np.uint8) + cd.view(np.uint8)
    )
    four = pairs == 6
    three = pairs == 3  # exactly three of one rank (two pairs give 2, a pair 1)
    red = _RED_OF_SUIT[h & 3]
    rda, rdb, rdc, rdd = red[:, 0], red[:, 1], red[:, 2], red[:, 3]
    reds = rda + rdb + rdc + rdd
    # For three of a kind the odd card is the one that matches nobody; it is the card whose
    # rank differs from the majority. Reds among the triple = all reds minus the odd card's.
    odd_red = np.where(ab | ac, np.where(ab & ac, rdd, np.where(ab, rdc, rdb)), rda)
    triple_reds = reds - odd_red
    three_same_color = three & ((triple_reds == 0) | (triple_reds == 3))
    same_color = (reds == 0) | (reds == 4)
    suited = ((a == b) & (a == c) & (a == d)) & four
    out = three.view(np.uint8) + three_same_color.view(np.uint8)
    out = np.where(four, 3 + same_color.view(np.uint8) + suited.view(np.uint8), out)
    return out.astype(np.uint8, copy=False)


def hand_from_codes(codes: Sequence[str], shoe: ShoeComposition | None = None) -> Hand:
    """Convenience: evaluate a hand given as card codes."""
    return evaluate(parse_cards(codes), shoe)
