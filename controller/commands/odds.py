"""``monster-match odds``: exact hand odds and returns for a full or partial shoe."""

from __future__ import annotations

import argparse
import json
from fractions import Fraction
from typing import Any

from controller.cards import CardCodeError, ForeignCardError, parse_cards
from controller.cli import CommandError
from controller.config import ConfigError, load_config
from controller.hands import Hand
from controller.money import MoneyError, dollars, parse_dollars
from controller.odds import OddsReport, compute_odds


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "odds",
        help="exact hand odds, returns and break-even meter for a full or partial shoe",
        description=(
            "Exact counts of every hand over all unordered four-card draws from the shoe, the "
            "return per unit wagered without and with Dynamic Pays, the meter's share and the "
            "break-even meter value."
        ),
    )
    p.add_argument("--decks", type=int, choices=(6, 8), default=None,
                   help="Spanish decks in the shoe (default: the configuration's)")
    p.add_argument("--config", metavar="FILE", help="table configuration TOML")
    p.add_argument("--meter", metavar="AMOUNT",
                   help="current meter in dollars, e.g. 12345.67 (default: the seed)")
    p.add_argument("--seen", metavar="CARDS", action="append", default=[],
                   help="cards already dealt, e.g. 'AS,AS,7D' (may repeat)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        overrides = {"decks": args.decks} if args.decks else {}
        cfg = load_config(args.config, **overrides)
        seen = parse_cards(args.seen)
        remaining = cfg.shoe.remaining(seen)
        wager = Fraction(cfg.table.wager_cents)
        meter_units = None
        if args.meter is not None:
            meter = parse_dollars(args.meter)
            if meter < 0:
                raise CommandError("--meter cannot be negative")
            meter_units = meter / wager
        report = compute_odds(remaining, cfg.table.decks, cfg.paytable, cfg.dynamic, meter_units)
    except (ConfigError, CardCodeError, ForeignCardError, MoneyError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    doc = to_json(report, cfg.table.wager_cents, len(seen))
    if args.json:
        print(json.dumps(doc))
    else:
        print_table(doc)
    return 0


def _ratio(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def to_json(r: OddsReport, wager_cents: int, seen: int) -> dict[str, Any]:
    """Probabilities and returns are ratios (floats in JSON, exact fractions under ``exact``);
    money is exact decimal strings in dollars."""
    be = r.break_even_meter_units
    # The smallest whole-cent meter at which the return reaches 100%.
    be_cents = None if be is None else -((-be * wager_cents) // 1)
    return {
        "decks": r.decks,
        "cards_seen": seen,
        "cards_left": r.cards_left,
        "total_combinations": r.total,
        "hands": {
            h.value: {"combinations": r.counts[h], "probability": float(r.probability(h))}
            for h in Hand
        },
        "base_return": float(r.base_return),
        "dynamic_return": float(r.dynamic_return),
        "meter": dollars(r.meter_units * wager_cents),
        "meter_share": float(r.meter_share),
        "dynamic_return_at_meter": float(r.dynamic_return_at_meter),
        "break_even_meter": None if be_cents is None else dollars(be_cents),
        "long_run_return": float(r.long_run_return),
        "exact": {
            "base_return": _ratio(r.base_return),
            "dynamic_return": _ratio(r.dynamic_return),
            "meter_share": _ratio(r.meter_share),
            "dynamic_return_at_meter": _ratio(r.dynamic_return_at_meter),
            "long_run_return": _ratio(r.long_run_return),
            "probabilities": {h.value: _ratio(r.probability(h)) for h in Hand},
        },
    }


def print_table(doc: dict[str, Any]) -> None:
    print(f"{doc['decks']}-deck Spanish shoe, {doc['cards_left']} cards left "
          f"({doc['cards_seen']} seen), {doc['total_combinations']:,} four-card draws")
    print(f"{'hand':<28}{'combinations':>16}{'probability':>14}{'1 in':>14}")
    for name, h in doc["hands"].items():
        p = h["probability"]
        one_in = f"{1 / p:,.1f}" if p else "-"
        print(f"{name:<28}{h['combinations']:>16,}{p:>14.8f}{one_in:>14}")
    print()
    print(f"return, base pays, jackpot at seed     {doc['base_return']:>9.4%}")
    print(f"return, with Dynamic Pays              {doc['dynamic_return']:>9.4%}")
    print(f"meter ${doc['meter']}: meter share {doc['meter_share']:.4%}, "
          f"return {doc['dynamic_return_at_meter']:.4%}")
    print(f"break-even meter                       ${doc['break_even_meter']}")
    print(f"long-run return (with 14% increment)   {doc['long_run_return']:>9.4%}")
