"""Cards and shoes: the small value types every other module speaks.

A card is written as a two-character code, rank then suit, as the shoe and the
vision pipeline report it::

    >>> Card.parse("QH")
    Card('QH')
    >>> Card.parse("QH").is_red
    True
    >>> Card.parse("10H")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    controller.cards.CardCodeError: bad card code '10H': expected a rank from A23456789TJQK ...
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum

RANKS = "A23456789TJQK"
SUITS = "SHDC"
RED_SUITS = frozenset("HD")


class CardCodeError(ValueError):
    """A card code that is not a rank from ``A23456789TJQK`` followed by a suit from ``SHDC``."""


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One playing card.

    ``rank`` is an index into :data:`RANKS` (0 = ace ... 12 = king) and ``suit`` an index into
    :data:`SUITS` (0 = spades, 1 = hearts, 2 = diamonds, 3 = clubs).

    >>> Card.parse("TS").rank_char, Card.parse("TS").suit_char
    ('T', 'S')
    >>> Card.parse("7d")
    Card('7D')
    """

    rank: int
    suit: int

    def __post_init__(self) -> None:
        if not (0 <= self.rank < 13 and 0 <= self.suit < 4):
            raise CardCodeError(f"card index out of range: rank={self.rank} suit={self.suit}")

    @classmethod
    def parse(cls, code: str) -> Card:
        """Parse a code such as ``"QH"``; lower case is accepted, anything else is refused."""
        if not isinstance(code, str):
            raise CardCodeError(f"bad card code {code!r}: not a string")
        text = code.strip().upper()
        if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
            raise CardCodeError(
                f"bad card code {code!r}: expected a rank from {RANKS} then a suit from {SUITS},"
                " e.g. 'QH' or 'TS'"
            )
        return cls(RANKS.index(text[0]), SUITS.index(text[1]))

    @property
    def code(self) -> str:
        return RANKS[self.rank] + SUITS[self.suit]

    @property
    def rank_char(self) -> str:
        return RANKS[self.rank]

    @property
    def suit_char(self) -> str:
        return SUITS[self.suit]

    @property
    def is_red(self) -> bool:
        return self.suit_char in RED_SUITS

    @property
    def index(self) -> int:
        """Position 0..51 in a standard deck, rank-major: ``rank * 4 + suit``."""
        return self.rank * 4 + self.suit

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code!r})"


ALL_CARDS: tuple[Card, ...] = tuple(Card(r, s) for r in range(13) for s in range(4))


def parse_cards(codes: Iterable[str]) -> tuple[Card, ...]:
    """Parse several codes; separators ``,`` and whitespace inside one string are accepted.

    >>> parse_cards(["AS", "kd,7c"])
    (Card('AS'), Card('KD'), Card('7C'))
    """
    out: list[Card] = []
    for item in codes:
        for token in item.replace(",", " ").split():
            out.append(Card.parse(token))
    return tuple(out)


class DeckKind(Enum):
    """Which cards one deck holds."""

    SPANISH = "spanish"  # 48 cards: no tens
    STANDARD = "standard"  # 52 cards

    def cards(self) -> tuple[Card, ...]:
        if self is DeckKind.SPANISH:
            return tuple(c for c in ALL_CARDS if c.rank_char != "T")
        return ALL_CARDS


class ForeignCardError(ValueError):
    """A card that is not part of the shoe's composition (a ten in a Spanish shoe)."""


@dataclass(frozen=True, slots=True)
class ShoeComposition:
    """How many copies of each card a shoe holds.

    >>> shoe = ShoeComposition.spanish(6)
    >>> len(shoe), shoe.copies(Card.parse("AS")), shoe.copies(Card.parse("TS"))
    (288, 6, 0)
    >>> shoe.is_foreign(Card.parse("TH"))
    True
    """

    decks: int
    kind: DeckKind = DeckKind.SPANISH

    def __post_init__(self) -> None:
        if not isinstance(self.decks, int) or self.decks < 1:
            raise ValueError(f"a shoe needs at least one deck, not {self.decks!r}")

    @classmethod
    def spanish(cls, decks: int) -> ShoeComposition:
        return cls(decks, DeckKind.SPANISH)

    @classmethod
    def standard(cls, decks: int) -> ShoeComposition:
        return cls(decks, DeckKind.STANDARD)

    def copies(self, card: Card) -> int:
        return self.decks if card in self._deck_set() else 0

    def is_foreign(self, card: Card) -> bool:
        return self.copies(card) == 0

    def _deck_set(self) -> frozenset[Card]:
        return frozenset(self.kind.cards())

    def counts(self) -> Counter[Card]:
        """Copies of every card in a full shoe."""
        return Counter({c: self.decks for c in self.kind.cards()})

    def remaining(self, seen: Iterable[Card]) -> Counter[Card]:
        """Copies left after ``seen`` cards were dealt.

        A foreign card, or more copies of a card than the shoe holds, is refused: either means
        the shoe is not what it is said to be.
        """
        left = self.counts()
        for card in seen:
            if self.is_foreign(card):
                raise ForeignCardError(f"{card.code} is not part of a {self.describe()}")
            if left[card] == 0:
                raise ForeignCardError(
                    f"more copies of {card.code} than a {self.describe()} holds ({self.decks})"
                )
            left[card] -= 1
        return left

    def describe(self) -> str:
        return f"{self.decks}-deck {self.kind.value} shoe"

    def __len__(self) -> int:
        return self.decks * len(self.kind.cards())

    def __iter__(self) -> Iterator[Card]:
        for card in self.kind.cards():
            for _ in range(self.decks):
                yield card
