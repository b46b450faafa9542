"""Pick the rank-and-colour threshold (:mod:`vision.rankcolour`) from saved sweep reads.

    python -m vision.sweep --designs fonts-held-out --frames-per-design 40 --seed 53 \\
        --workers 2 --out swH53.json --save-reads readsH53.npz models/cards_v5.onnx
    python -m vision.calibrate_rank_colour models/cards_v5.onnx \\
        --unseen-reads readsH53.npz ... [--seen-reads readsT31.npz ...] [--write]

Every frame's reads (:mod:`vision.readsfile`, saved with their ranks and colours) are merged
at the reader's operating threshold, and the cards left unreported given a rank and colour at
each threshold of :data:`THRESHOLDS`; the refusals that carry one are scored against the
labels (:func:`vision.evaluate.score_frame`). The rule is the codes' own
(:func:`vision.calibrate.pick_threshold`): the smallest threshold at which it and every
higher one keep the 95 % upper bound of the rank-and-colour misread rate within
``--max-error`` and rank-and-colour false positives within ``--max-fp`` a frame, held apart on
designs the reader saw (``--seen-reads``, optional) and on designs it never saw
(``--unseen-reads``), the higher pick kept. With
``--write`` it goes to the model's ``.json`` as ``"rank_colour_threshold"``, which
:class:`vision.recognize.Recognizer` reads; without, nothing is written.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vision import readsfile
from vision.calibrate import keeps_rule, misread_upper_bound, pick_threshold
from vision.evaluate import Score, score_frame
from vision.merge import merge_reads
from vision.rankcolour import with_rank_colour

THRESHOLDS: tuple[float, ...] = (0.99, 0.993, 0.995, 0.997, 0.998, 0.999, 0.9995, 0.9998,
                                  0.9999)


def sweep(model: Path, paths: list[Path]) -> list[dict]:
    """Rows (one a threshold of :data:`THRESHOLDS`) of the rank-and-colour counts over the
    frames of the saved reads ``paths``, in :func:`vision.calibrate.pick_threshold`'s keys
    (``misread``, ``reported``, ``false_positives``: the rank-and-colour ones), with the codes'
    recall and the rank-and-colour recall."""
    from vision.recognize import Recognizer

    rec = Recognizer(model)
    identity = readsfile.reader_identity(rec)
    totals = [Score() for _ in THRESHOLDS]
    for path in paths:
        meta, frames = readsfile.load(path)
        readsfile.check_identity(meta, identity, path)
        for packed, labels in frames:
            if packed.shape[1] < readsfile.COLUMNS:
                raise ValueError(f"{path}: its reads were saved without their ranks and "
                                 "colours; sweep again")
            reads = readsfile.unpack(packed)
            codes = merge_reads(reads, rec.threshold)  # the codes alone
            for total, t in zip(totals, THRESHOLDS, strict=True):
                total.add(score_frame({**with_rank_colour(codes, reads, t), "elapsed_ms": 0.0},
                                      labels))
    return [{"threshold": t, "frames": s.frames, "readable_cards": s.readable,
             "recall": round(s.recall, 5), "rank_colour_recall": round(s.rank_colour_recall, 5),
             "rc_correct": s.rc_correct, "misread": s.rc_misread, "reported": s.rc_reported,
             "false_positives": s.rc_false_positive, "code_misread": s.misread,
             "code_reported": s.reported} for t, s in zip(THRESHOLDS, totals, strict=True)]


def _table(name: str, rows: list[dict]) -> str:
    lines = [f"{name}: {rows[0]['frames']} frames, {rows[0]['readable_cards']} readable cards, "
             f"codes at the operating threshold {100 * rows[0]['recall']:.2f} %"]
    for r in rows:
        bound = misread_upper_bound(r["misread"], r["reported"])
        lines.append(f"  {r['threshold']:<7} rank and colour {100 * r['rank_colour_recall']:6.2f} %"
                     f"  misreads {r['misread']:3d} / {r['reported']:5d} (95 % bound "
                     f"{100 * bound:.3f} %)  false positives {r['false_positives']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--unseen-reads", type=Path, nargs="+", required=True)
    ap.add_argument("--seen-reads", type=Path, nargs="*", default=[])
    ap.add_argument("--max-error", type=float, default=0.001)
    ap.add_argument("--max-fp", type=float, default=0.1)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    meta_path = args.model.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    picks, made = [], {}
    for name, paths in (("unseen", args.unseen_reads), ("seen", args.seen_reads)):
        if not paths:
            continue
        try:
            rows = sweep(args.model, paths)
        except ValueError as e:
            ap.error(str(e))
        print(_table(f"{name} designs ({', '.join(p.name for p in paths)})", rows))
        pick = pick_threshold(rows, args.max_error, args.max_fp, bound=True)
        if not keeps_rule(pick, args.max_error, args.max_fp):
            print(f"  no threshold up to {THRESHOLDS[-1]} keeps the rule: nothing written")
            return 1
        print(f"  rule's pick: {pick['threshold']}")
        picks.append(pick["threshold"])
        made[name] = {"reads": [p.name for p in paths], "rows": rows}
    chosen = max(picks)
    print(f"rank-and-colour threshold: {chosen}")
    if args.write:
        meta["rank_colour_threshold"] = chosen
        meta["rank_colour_sweeps"] = made
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
        print(f"written to {meta_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
