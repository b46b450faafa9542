"""What a threshold by width adds over the flat threshold, card by card, on saved sweep reads.

    python -m vision.sweep --designs fonts-held-out-strict --frames-per-design 40 --seed 1009 \\
        --workers 2 --out x1009.json --save-reads r1009.npz models/cards_v7.onnx
    python benchmarks/width_steps_added.py --steps steps.json r1009.npz r1013.npz ...

``--steps`` names a ``"threshold_by_width"`` as a reader's ``.json`` would (a list of
``[width, threshold]`` pairs, or ``{"steps": [...], "guard": {...}}``,
:mod:`vision.widthbar`). Every frame's reads are merged at the reader's flat threshold, by the
steps without their guard, and by the steps as given (the committed merge,
:meth:`vision.recognize.Recognizer.merge`), and scored against the frame's labels. It prints
the three summed rows, and every wrong card the steps report that the flat threshold does
not: a misread (``mis``: a card of another code under it) or a false positive (``fp``: on no
card, or on one already matched), with its confidence, its reported width, how many cards of
its frame were reported and how many at 0.999 or more, the median width of the frame's
reported cards and its labelled cards, and the nearest card of its code (``same`` at so many
of that card's widths, ``-`` where the frame has none). The sixty-third session looked at
such cards to design the guard (``models/cards_v7.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision import readsfile  # noqa: E402
from vision.calibrate import keeps_rule, misread_upper_bound  # noqa: E402
from vision.evaluate import Score, match_reports, score_frame  # noqa: E402
from vision.recheck import DEFAULT_RULE  # noqa: E402
from vision.recognize import DEFAULT_MODEL, Recognizer  # noqa: E402
from vision.widthbar import WidthSteps, card_width  # noqa: E402


def _key(card: dict) -> tuple:
    return card["code"], tuple(card["center"])


def added_wrong(flat: dict, stepped: dict, labels: dict) -> list[dict]:
    """The cards of ``stepped`` that ``flat`` does not report and that are wrong: their kind
    (``mis`` or ``fp``), confidence, width and frame's features (see the module docstring).

    >>> def card(code, x, conf=0.9995, w=60.0):
    ...     return {"code": code, "confidence": conf, "center": [x, 40.0],
    ...             "corners": [[x - w / 2, 0], [x + w / 2, 0], [x + w / 2, 87], [x - w / 2, 87]]}
    >>> truth = {"cards": [{"code": "QH", "center": [100.0, 40.0], "card_width_px": 60.0},
    ...                    {"code": "7S", "center": [300.0, 40.0], "card_width_px": 60.0}]}
    >>> flat = {"cards": [card("QH", 100.0)]}
    >>> stepped = {"cards": [card("QH", 100.0), card("7C", 300.0, 0.995), card("9D", 900.0, 0.994)]}
    >>> [(w["kind"], w["code"], w["same"]) for w in added_wrong(flat, stepped, truth)]
    [('mis', '7C', '-'), ('fp', '9D', '-')]
    """
    known = {_key(c) for c in flat["cards"]}
    truth = labels["cards"]
    cards = stepped["cards"]
    widths = [card_width(np.array(c["corners"], float)) for c in cards]
    wrong = []
    for card, width, (best, _) in zip(cards, widths, match_reports(cards, truth), strict=True):
        if _key(card) in known:
            continue
        if best is not None and truth[best]["code"] == card["code"]:
            continue  # a right card
        same = [t for t in truth if t["code"] == card["code"]]
        near = min(same, key=lambda t: float(np.linalg.norm(
            np.array(t["center"], float) - card["center"])), default=None)
        wrong.append({
            "kind": "fp" if best is None else "mis", "code": card["code"],
            "confidence": card["confidence"], "width": round(width),
            "frame_cards": len(cards),
            "frame_sure": sum(1 for c in cards if c["confidence"] >= 0.999),
            "frame_median": round(float(np.median(widths))),
            "true_median": round(float(np.median([t["card_width_px"] for t in truth]))),
            "same": "-" if near is None else round(float(np.linalg.norm(
                np.array(near["center"], float) - card["center"])) / near["card_width_px"], 2)})
    return wrong


def summed_row(name: str, s: Score, rule: dict = DEFAULT_RULE) -> str:
    """One summed row: recall, misreads over reports, false positives, and the misread rule
    as :mod:`vision.recheck` judges the threshold by it (the misread rate's one-sided 95 %
    bound, false positives a frame, and whether both are within ``rule``).

    >>> s = Score(frames=640, readable=8000, correct=5000, reported=5004, misread=3,
    ...           false_positive=1)
    >>> summed_row("flat 0.997", s).split("  ")[-3:]
    ['bound 0.1549 %', 'fp 0.0016 a frame', 'rule fails']
    >>> summed_row("flat 0.997", Score(frames=640, reported=50000, misread=30)).split("  ")[-1]
    'rule holds'
    """
    row = {"misread": s.misread, "reported": s.reported, "false_positives": s.false_positive,
           "frames": s.frames}
    holds = keeps_rule(row, rule["max_error"], rule["max_fp"], rule.get("bound", True))
    return (f"{name:18s} recall {100 * s.recall:.2f} %  misreads {s.misread} / {s.reported}"
            f"  false positives {s.false_positive}  ({s.frames} frames, {s.readable} cards)"
            f"  bound {100 * misread_upper_bound(s.misread, s.reported):.4f} %"
            f"  fp {s.false_positive / max(s.frames, 1):.4f} a frame"
            f"  rule {'holds' if holds else 'fails'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reads", type=Path, nargs="+", help="vision.sweep --save-reads files")
    ap.add_argument("--steps", type=Path, required=True,
                    help="a JSON file holding a threshold_by_width")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL,
                    help="the reader whose reads they are (its flat threshold and extra bar)")
    args = ap.parse_args(argv)
    try:
        steps = WidthSteps.parse(json.loads(args.steps.read_text()), str(args.steps))
    except (OSError, ValueError) as e:
        ap.error(str(e))
    rec = Recognizer(args.model, threshold=0.5)  # (as the sweep read them)
    flat_threshold, bar = rec.model_threshold, rec.extra_walk_bar()
    identity = readsfile.reader_identity(rec)
    rows = {f"flat {flat_threshold}": flat_threshold,
            "steps, unguarded": replace(steps, guard=None), "steps": steps}
    totals = {name: Score() for name in rows}
    for path in args.reads:
        meta, frames = readsfile.load(path)
        readsfile.check_identity(meta, identity, path)
        for packed, labels in frames:
            reads = readsfile.at_bar(readsfile.unpack(packed), bar)
            merged = {name: rec.merge(reads, thr) for name, thr in rows.items()}
            for name, result in merged.items():
                totals[name].add(score_frame({**result, "elapsed_ms": 0.0}, labels))
            for w in added_wrong(merged[f"flat {flat_threshold}"], merged["steps"], labels):
                frame = "#".join(map(str, labels.get("sweep_frame", ["?", -1])))
                print(f"{path.name} {frame} " + " ".join(f"{k} {v}" for k, v in w.items()))
    for name, s in totals.items():
        print(summed_row(name, s))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
