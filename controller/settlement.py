"""Settlement of one winning progressive wager: how much, at what odds, paid from where.

"X for 1" includes the wager (collected before the deal), so a $1 wager at 500 for 1 is paid
$500::

    >>> from controller.paytable import Paytable
    >>> table = Paytable.builtin("dynamic1")
    >>> p = settle(Hand.FOUR_OF_A_KIND, 100, table, None, Fraction(1_000_000))
    >>> p.odds, p.amount, p.source
    (100, 10000, 'table_inventory')

A meter hit is paid the meter's whole cents, not from the table inventory (§ 635b.3(g)(4)(i)).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from controller.dynamic import DynamicDraw
from controller.hands import Hand
from controller.paytable import METER, Paytable

PaySource = Literal["table_inventory", "meter"]


@dataclass(frozen=True)
class Payout:
    hand: Hand
    odds: int | None  # "X for 1"; None for a meter payout
    amount: int  # whole cents paid to the player
    source: PaySource
    dynamic: bool  # paid at an increased (Dynamic Pays) rate


def settle(hand: Hand, wager_cents: int, paytable: Paytable, draw: DynamicDraw | None,
           meter_cents: Fraction, meter_winners: int = 1) -> Payout | None:
    """The payout of one wager, or None for a loss.

    ``meter_winners`` is the number of meter winners this round: they share the meter equally
    (see :func:`split_meter`).
    """
    pays = paytable.pays(hand)
    if pays is None:
        return None
    if pays == METER:
        share, _ = split_meter(meter_cents, meter_winners)
        return Payout(hand, None, share, "meter", False)
    increased = draw.pays_for(hand) if draw is not None else None
    odds = increased if increased is not None else pays
    return Payout(hand, odds, odds * wager_cents, "table_inventory", increased is not None)


def split_meter(meter_cents: Fraction, winners: int) -> tuple[int, Fraction]:
    """Equal whole-cent shares of the meter; the remainder (below one cent per winner) stays.

    >>> split_meter(Fraction(1_000_001), 2)
    (500000, Fraction(1, 1))
    >>> split_meter(Fraction(2_000_029, 2), 1)
    (1000014, Fraction(1, 2))
    """
    if winners < 1:
        raise ValueError("at least one winner shares the meter")
    if meter_cents < 0:
        raise ValueError("negative meter")
    share = int(meter_cents // winners)
    return share, meter_cents - share * winners
