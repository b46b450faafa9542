"""``monster-match evaluate``: rank one four-card hand."""

from __future__ import annotations

import argparse
import json

from controller.cards import CardCodeError, parse_cards
from controller.cli import CommandError
from controller.hands import HandSizeError, evaluate


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="rank a four-card hand (player's two cards + dealer's up and hole card)",
        description="Rank a four-card hand, e.g. `monster-match evaluate AS AS AS AS`.",
    )
    p.add_argument("cards", nargs="+", metavar="CARD", help="four card codes such as QH TS 7D 7D")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        cards = parse_cards(args.cards)
        hand = evaluate(cards)
    except (CardCodeError, HandSizeError) as exc:
        raise CommandError(str(exc)) from None
    codes = [c.code for c in cards]
    if args.json:
        print(json.dumps({"hand": hand.value, "cards": codes}))
    else:
        print(f"{' '.join(codes)}: {hand.value}")
    return 0
