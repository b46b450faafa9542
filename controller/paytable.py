"""Paytables: the base pay and Dynamic Pays choices of each hand, and the meter parameters.

Paytables are data (TOML). The package ships "Dynamic 1" (§ 635b.3(h)-(i))::

    >>> table = Paytable.builtin("dynamic1")
    >>> three = Hand.THREE_OF_A_KIND
    >>> table.name, table.pays(three), table.dynamic_choices(three)[:3]
    ('Dynamic 1', 4, (6, 8, 12))
    >>> table.pays(Hand.FOUR_OF_A_KIND_SUITED)
    'meter'
    >>> table.increment_rate, table.reserve_rate, table.seed_multiple
    (Fraction(7, 50), Fraction(1, 25), 10000)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Literal

from controller.hands import Hand
from controller.money import MoneyError, parse_rate
from controller.tomlcheck import ConfigError, TomlSource

METER: Literal["meter"] = "meter"
Pay = int | Literal["meter"]
WINNING_HANDS: tuple[Hand, ...] = tuple(h for h in Hand if h.is_win)


@dataclass(frozen=True)
class PaytableEntry:
    hand: Hand
    pays: Pay  # "X for 1", or "meter" for 100% of the progressive meter
    dynamic: tuple[int, ...]  # increased "X for 1" payouts the draw may select


@dataclass(frozen=True)
class Paytable:
    name: str
    entries: tuple[PaytableEntry, ...]
    seed_multiple: int
    increment_rate: Fraction
    reserve_rate: Fraction

    def entry(self, hand: Hand) -> PaytableEntry:
        for e in self.entries:
            if e.hand is hand:
                return e
        raise KeyError(hand)

    def pays(self, hand: Hand) -> Pay | None:
        """Base pay of ``hand`` ("X for 1" or "meter"); None for a loss."""
        return None if hand is Hand.LOSS else self.entry(hand).pays

    def dynamic_choices(self, hand: Hand) -> tuple[int, ...]:
        return () if hand is Hand.LOSS else self.entry(hand).dynamic

    @property
    def dynamic_hands(self) -> tuple[Hand, ...]:
        """The hand combinations that have Dynamic Pays, highest first."""
        return tuple(e.hand for e in self.entries if e.dynamic)

    @classmethod
    def builtin(cls, name: str) -> Paytable:
        ref = resources.files("controller") / "data" / f"{name}.toml"
        if not ref.is_file():
            raise ConfigError(f"no built-in paytable named {name!r}")
        return cls.from_source(TomlSource(ref.read_text(encoding="utf-8"), f"<builtin {name}>"))

    @classmethod
    def load(cls, path: str | Path) -> Paytable:
        return cls.from_source(TomlSource.from_path(path))

    @classmethod
    def from_source(cls, src: TomlSource) -> Paytable:
        doc = src.parse()
        name = doc.get("name")
        if not isinstance(name, str) or not name.strip():
            raise src.error("`name` must be a non-empty string", None, "name")
        meter = doc.get("meter")
        if not isinstance(meter, dict):
            raise src.error("a [meter] table with seed_multiple, increment_rate, reserve_rate")
        seed = meter.get("seed_multiple")
        if not isinstance(seed, int) or isinstance(seed, bool) or seed <= 0:
            raise src.error("seed_multiple must be a positive integer", "meter", "seed_multiple")
        rates: dict[str, Fraction] = {}
        for key in ("increment_rate", "reserve_rate"):
            try:
                rate = parse_rate(meter.get(key, ""))
            except MoneyError as exc:
                raise src.error(str(exc), "meter", key) from None
            if not 0 <= rate < 1:
                raise src.error(f"{key} must be between 0% and 100%", "meter", key)
            rates[key] = rate
        if rates["increment_rate"] + rates["reserve_rate"] >= 1:
            raise src.error("increment and reserve rates together must stay below 100%", "meter",
                            "reserve_rate")
        raw_hands = doc.get("hand")
        if not isinstance(raw_hands, list) or not raw_hands:
            raise src.error("no [[hand]] entries")
        entries: list[PaytableEntry] = []
        for i, raw in enumerate(raw_hands):
            entries.append(_parse_entry(src, i, raw))
        seen = [e.hand for e in entries]
        for hand in WINNING_HANDS:
            if seen.count(hand) != 1:
                problem = "missing" if hand not in seen else "listed more than once"
                raise src.error(f"hand {hand.value!r} is {problem}")
        entries.sort(key=lambda e: -e.hand.rank)
        # A higher hand never pays less than a lower one: that would invert the ranking.
        fixed = [e for e in entries if e.pays != METER]
        for hi, lo in zip(fixed, fixed[1:], strict=False):
            if hi.pays < lo.pays:  # type: ignore[operator]
                raise src.error(
                    f"{hi.hand.value} pays {hi.pays} for 1, less than {lo.hand.value}"
                    f" ({lo.pays} for 1)", "hand", "pays", seen.index(hi.hand))
        return cls(name.strip(), tuple(entries), seed, rates["increment_rate"],
                   rates["reserve_rate"])


def _parse_entry(src: TomlSource, i: int, raw: object) -> PaytableEntry:
    if not isinstance(raw, dict):
        raise src.error(f"[[hand]] number {i + 1} is not a table")
    try:
        hand = Hand.from_name(str(raw.get("name")))
    except ValueError as exc:
        raise src.error(str(exc), "hand", "name", i) from None
    if hand is Hand.LOSS:
        raise src.error("a loss has no pay", "hand", "name", i)
    pays = raw.get("pays")
    if pays != METER and (not isinstance(pays, int) or isinstance(pays, bool) or pays < 1):
        raise src.error(f"pays must be a whole 'X for 1' of at least 1, or \"meter\"; got {pays!r}",
                        "hand", "pays", i)
    dynamic = raw.get("dynamic", [])
    if not isinstance(dynamic, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) for x in dynamic
    ):
        raise src.error("dynamic must be a list of whole 'X for 1' pays", "hand", "dynamic", i)
    if dynamic and pays == METER:
        raise src.error("a meter hand has no Dynamic Pays", "hand", "dynamic", i)
    if dynamic and (min(dynamic) <= pays or sorted(set(dynamic)) != dynamic):  # type: ignore[operator]
        raise src.error("dynamic pays must be increasing and above the base pay", "hand",
                        "dynamic", i)
    return PaytableEntry(hand, pays, tuple(dynamic))
