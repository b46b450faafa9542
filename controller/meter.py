"""The progressive meter's books as ledger entries (§ 635b.3(i)).

Pure functions: given amounts, they return the :class:`~controller.storage.LedgerEntry` list
that moves money; the round controller writes them in the same transaction as the step that
causes them::

    >>> from fractions import Fraction
    >>> [(e.kind, e.amount) for e in wager_entries(25, Fraction(14, 100), Fraction(4, 100), 3)]
    [('wager', Fraction(25, 1)), ('increment', Fraction(7, 2)), ('reserve_in', Fraction(1, 1))]
    >>> [(e.kind, int(e.amount)) for e in reseed_entries(Fraction(250_000), 1_000_000)]
    [('reseed', 1000000), ('reserve_out', -250000), ('house', 750000)]

Accounts: ``meter`` and ``reserve`` (balances), ``table`` (table inventory: wagers in, fixed
pays out) and ``house`` (the operator's contributions to seeds and reseeds).
"""

from __future__ import annotations

from fractions import Fraction

from controller.storage import LedgerEntry


def seed_entries(seed_cents: int) -> list[LedgerEntry]:
    """The initial seed, paid by the house."""
    return [
        LedgerEntry("seed", "meter", Fraction(seed_cents), note="initial seed"),
        LedgerEntry("house", "house", Fraction(seed_cents), note="initial seed"),
    ]


def wager_entries(wager_cents: int, increment_rate: Fraction, reserve_rate: Fraction,
                  seat: int) -> list[LedgerEntry]:
    """An accepted wager: into the table inventory, its increment to the meter and its reserve
    share to the reserve (exact fractions of a cent are carried)."""
    return [
        LedgerEntry("wager", "table", Fraction(wager_cents), seat),
        LedgerEntry("increment", "meter", increment_rate * wager_cents, seat),
        LedgerEntry("reserve_in", "reserve", reserve_rate * wager_cents, seat),
    ]


def fixed_pay_entries(amount_cents: int, seat: int, odds: int) -> list[LedgerEntry]:
    return [LedgerEntry("fixed_pay", "table", -Fraction(amount_cents), seat, f"{odds} for 1")]


def jackpot_entries(share_cents: int, seat: int, order: int, document: str) -> list[LedgerEntry]:
    return [LedgerEntry("jackpot", "meter", -Fraction(share_cents), seat,
                        f"winner {order}; document {document}")]


def reseed_entries(reserve_balance: Fraction, seed_cents: int) -> list[LedgerEntry]:
    """Reseed the meter: the reserve pays what it holds up to the reseed amount, the house the
    rest (recorded as its contribution)."""
    from_reserve = min(max(reserve_balance, Fraction(0)), Fraction(seed_cents))
    entries = [LedgerEntry("reseed", "meter", Fraction(seed_cents))]
    if from_reserve:
        entries.append(LedgerEntry("reserve_out", "reserve", -from_reserve))
    if from_reserve < seed_cents:
        entries.append(LedgerEntry("house", "house", seed_cents - from_reserve, note="reseed"))
    return entries
