"""The misreads of threshold sweeps by kind, and the suit misreads by each procedural deck's
index suit: how tall it is, and whether the index crop holds all of it.

    python benchmarks/suit_misreads.py --designs fonts-held-out --threshold 0.99 \\
        swH53.json swH59.json ...

``vision.sweep`` writes every misread from 0.95 up as ``"design#k truth->read"``; each file's
seed expands ``--designs`` (:func:`vision.dataset.design_list`) into the decks it read, so that
decks without a misread are counted too. A misread is of the *rank* (same suit), the *suit*
(same rank) or *both*. Procedural decks are then put in bins by their index suit
(:func:`vision.procedural.index_suit_span`): its height in card widths, and whether it reaches
below the crop's bottom edge (:data:`vision.crops.V1`), with the suit misreads per deck in
each. (Twentieth session: on the held-out typefaces the suit misreads lie where the suit is
small, not where the crop cuts it off.)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.crops import V1  # noqa: E402
from vision.dataset import design_list  # noqa: E402
from vision.procedural import index_suit_span  # noqa: E402

#: Bins of the index suit's height, in card widths (0.10 is 5 px on a 50 px card at 720p).
HEIGHT_BINS = ((0.0, 0.10), (0.10, 0.13), (0.13, 1.0))


def misread_kind(truth: str, read: str) -> str:
    """``"rank"``, ``"suit"`` or ``"both"``: what a misread of ``truth`` as ``read`` got wrong.

    >>> misread_kind("KC", "KS"), misread_kind("3H", "8H"), misread_kind("3H", "8S")
    ('suit', 'rank', 'both')
    """
    if truth[0] == read[0]:
        return "suit"
    return "rank" if truth[1] == read[1] else "both"


def tally(paths: list[Path], designs: str, threshold: float, model: str | None = None
          ) -> tuple[Counter, Counter, list[str]]:
    """Misreads by kind, suit misreads by deck, and every deck read, over ``paths``."""
    kinds: Counter = Counter()
    suit_by_deck: Counter = Counter()
    decks: list[str] = []
    for path in paths:
        sweep = json.loads(path.read_text())
        name = model or next(iter(sweep["models"]))
        rows = [r for r in sweep["models"][name] if r["threshold"] == threshold]
        if not rows or "misreads" not in rows[0]:
            raise SystemExit(f"{path}: no misreads listed at threshold {threshold} "
                             "(vision.sweep lists them from 0.95 up)")
        decks += design_list(designs, int(sweep["seed"]))
        for entry in rows[0]["misreads"]:
            deck = entry.split("#")[0]
            truth, read = entry.rsplit(" ", 1)[1].split("->")
            kind = misread_kind(truth, read)
            kinds[kind] += 1
            if kind == "suit":
                suit_by_deck[deck] += 1
    return kinds, suit_by_deck, decks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweeps", type=Path, nargs="+", help="vision.sweep result files")
    ap.add_argument("--designs", default="train",
                    help="the designs the sweeps read (vision.sweep --designs)")
    ap.add_argument("--threshold", type=float, default=0.99)
    ap.add_argument("--model", default=None, help="model name in the files (default: first)")
    args = ap.parse_args(argv)
    kinds, suit_by_deck, decks = tally(args.sweeps, args.designs, args.threshold, args.model)
    print(f"misreads at {args.threshold}: " + ", ".join(
        f"{k} {kinds[k]}" for k in ("rank", "suit", "both")))
    spans = {d: index_suit_span(int(d.split(":")[1]), int(d.split(":")[2]))
             for d in decks if d.startswith("proc:")}
    if not spans:
        return 0
    print(f"suit misreads of {len(spans)} procedural decks, by their index suit:")
    for lo, hi in HEIGHT_BINS:
        sel = [d for d, (top, bottom) in spans.items() if lo <= bottom - top < hi]
        n = sum(suit_by_deck[d] for d in sel)
        print(f"  height {lo:.2f}-{hi:.2f} card widths: {len(sel)} decks, {n} suit misreads"
              f" ({n / max(len(sel), 1):.2f} a deck)")
    for cut in (False, True):
        sel = [d for d, (_, bottom) in spans.items() if (bottom > V1) == cut]
        n = sum(suit_by_deck[d] for d in sel)
        where = "reaching below" if cut else "within"
        print(f"  {where} the crop ({V1} card widths): {len(sel)} decks, {n} suit misreads"
              f" ({n / max(len(sel), 1):.2f} a deck)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
