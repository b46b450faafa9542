"""Exact odds of the four-card hand over every unordered four-card draw from a shoe.

Counting is combinatorial, per rank: a shoe (full or partial) is a count of copies of each card,
and every figure is an exact integer or :class:`~fractions.Fraction`::

    >>> from controller.cards import ShoeComposition
    >>> counts = hand_counts(ShoeComposition.spanish(6).counts())
    >>> counts[Hand.FOUR_OF_A_KIND_SUITED], sum(counts.values()) == comb(288, 4)
    (720, True)

Each physical card is distinct: a "draw" is a set of four cards of the shoe, so a suited four of
aces in six decks can be made ``C(6, 4) = 15`` ways.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from math import comb

from controller.cards import RED_SUITS, SUITS, Card
from controller.dynamic import DynamicWeights
from controller.hands import Hand
from controller.paytable import METER, Paytable

_RED = [s in RED_SUITS for s in SUITS]


def hand_counts(shoe: Mapping[Card, int]) -> dict[Hand, int]:
    """Number of four-card draws that make each hand, from ``shoe`` copies of each card."""
    by_rank = [[0, 0, 0, 0] for _ in range(13)]
    for card, n in shoe.items():
        if n < 0:
            raise ValueError(f"negative count for {card.code}")
        by_rank[card.rank][card.suit] += n
    total_cards = sum(sum(r) for r in by_rank)
    out = dict.fromkeys(Hand, 0)
    for suits in by_rank:
        n = sum(suits)
        red = sum(c for c, is_red in zip(suits, _RED, strict=True) if is_red)
        black = n - red
        suited4 = sum(comb(c, 4) for c in suits)
        color4 = comb(red, 4) + comb(black, 4)
        out[Hand.FOUR_OF_A_KIND_SUITED] += suited4
        out[Hand.FOUR_OF_A_KIND_SAME_COLOR] += color4 - suited4
        out[Hand.FOUR_OF_A_KIND] += comb(n, 4) - color4
        # Exactly three of this rank: the fourth card is of another rank.
        others = total_cards - n
        color3 = comb(red, 3) + comb(black, 3)
        out[Hand.THREE_OF_A_KIND_SAME_COLOR] += color3 * others
        out[Hand.THREE_OF_A_KIND] += (comb(n, 3) - color3) * others
    out[Hand.LOSS] = comb(total_cards, 4) - sum(v for h, v in out.items() if h is not Hand.LOSS)
    return out


@dataclass(frozen=True)
class OddsReport:
    """Exact odds and returns for one shoe, paytable, Dynamic Pays weights and meter value."""

    decks: int
    cards_left: int
    counts: dict[Hand, int]
    total: int
    base_return: Fraction  # per unit wagered, jackpot at the seed, no Dynamic Pays
    dynamic_return: Fraction  # same, expected over the Dynamic Pays weights
    meter_units: Fraction  # meter value / wager (the "X for 1" of a meter hit)
    meter_share: Fraction  # part of dynamic_return_at_meter owed to the meter hand
    dynamic_return_at_meter: Fraction  # dynamic_return with the jackpot at meter_units
    break_even_meter_units: Fraction | None  # meter / wager at which that return reaches 1
    long_run_return: Fraction  # fixed pays + increment rate + seed funded by the reserve

    def probability(self, hand: Hand) -> Fraction:
        return Fraction(self.counts[hand], self.total) if self.total else Fraction(0)


def compute_odds(shoe: Mapping[Card, int], decks: int, paytable: Paytable,
                 weights: DynamicWeights, meter_units: Fraction | None = None) -> OddsReport:
    """Exact report. ``meter_units`` is the meter divided by the wager (default: the seed)."""
    counts = hand_counts(shoe)
    total = sum(counts.values())
    if total == 0:
        raise ValueError("fewer than four cards left in the shoe")
    seed_units = Fraction(paytable.seed_multiple)
    meter = seed_units if meter_units is None else Fraction(meter_units)
    select = weights.combination_probabilities()

    def pay(hand: Hand, jackpot: Fraction, dynamic: bool) -> Fraction:
        base = paytable.pays(hand)
        if base is None:
            return Fraction(0)
        if base == METER:
            return jackpot
        if not dynamic or hand not in select:
            return Fraction(base)
        q = select[hand]
        return (1 - q) * base + q * weights.expected_increased_pay(hand, paytable)

    def ret(jackpot: Fraction, dynamic: bool) -> Fraction:
        return sum((Fraction(counts[h], total) * pay(h, jackpot, dynamic) for h in Hand),
                   Fraction(0))

    meter_hands = [h for h in Hand if paytable.pays(h) == METER]
    p_meter = sum((Fraction(counts[h], total) for h in meter_hands), Fraction(0))
    fixed_dynamic = ret(Fraction(0), True)
    break_even = (1 - fixed_dynamic) / p_meter if p_meter else None
    return OddsReport(
        decks=decks,
        cards_left=sum(shoe.values()),
        counts=counts,
        total=total,
        base_return=ret(seed_units, False),
        dynamic_return=ret(seed_units, True),
        meter_units=meter,
        meter_share=p_meter * meter,
        dynamic_return_at_meter=fixed_dynamic + p_meter * meter,
        break_even_meter_units=max(break_even, Fraction(0)) if break_even is not None else None,
        # Every increment is eventually paid to a meter winner, and every jackpot starts from the
        # seed: in the long run players get the fixed pays, the increment rate, and the seed
        # once per meter hit.
        long_run_return=fixed_dynamic + paytable.increment_rate + p_meter * seed_units,
    )
