"""Exact money: amounts are :class:`fractions.Fraction` numbers of cents, never floats.

Whole cents are what changes hands; the sub-cent parts of increments (14% of a 25-cent wager is
3.5 cents) are carried exactly in the books.

    >>> parse_dollars("1.00")
    Fraction(100, 1)
    >>> dollars(Fraction(1000014, 1))
    '10000.14'
    >>> dollars(Fraction(7, 2))
    '0.035'
    >>> parse_rate("14%"), parse_rate("0.04")
    (Fraction(7, 50), Fraction(1, 25))
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from fractions import Fraction

Cents = Fraction


class MoneyError(ValueError):
    """An amount that cannot be represented exactly, or is malformed."""


def parse_dollars(text: str | int) -> Cents:
    """Parse a dollar amount (``"1.00"``, ``"0.25"``, ``5``) into exact cents."""
    if isinstance(text, (bool, float)):
        raise MoneyError(f"amount {text!r}: write money as a string such as \"1.00\", not a float")
    try:
        value = Decimal(str(text).strip().lstrip("$").replace(",", ""))
    except InvalidOperation:
        raise MoneyError(f"amount {text!r} is not a dollar amount such as \"1.00\"") from None
    if not value.is_finite():
        raise MoneyError(f"amount {text!r} is not finite")
    return Fraction(value) * 100


def parse_rate(text: str | int) -> Fraction:
    """Parse a rate such as ``"14%"`` or ``"0.14"`` into an exact fraction."""
    if isinstance(text, float):
        raise MoneyError(f"rate {text!r}: write rates as strings such as \"14%\", not floats")
    s = str(text).strip()
    try:
        if s.endswith("%"):
            return Fraction(Decimal(s[:-1])) / 100
        return Fraction(Decimal(s))
    except (InvalidOperation, ValueError):
        raise MoneyError(f"rate {text!r} is not a number such as \"14%\" or \"0.14\"") from None


def dollars(cents: Cents | int) -> str:
    """Exact decimal string in dollars, at least two decimals (``"10000.14"``).

    Amounts whose decimal expansion does not end are written as a fraction ``"n/d"``; the books
    never produce them (rates are percentages and shares are whole cents), so seeing one is a
    signal, not a rounding.
    """
    value = Fraction(cents) / 100
    den = value.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    places = max(2, twos, fives)
    scaled = value * 10**places
    assert scaled.denominator == 1
    sign = "-" if scaled < 0 else ""
    digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def whole_cents(amount: Cents) -> int:
    """The whole cents of a non-negative amount (what a display shows, what can be paid)."""
    return int(amount // 1)


def to_text(amount: Cents) -> str:
    """Storage form of an exact amount of cents: ``"num/den"`` or ``"num"``."""
    f = Fraction(amount)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def from_text(text: str) -> Cents:
    return Fraction(text)
