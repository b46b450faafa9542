"""Pick the rank-and-colour threshold (:mod:`vision.rankcolour`) from saved sweep reads.

    python -m vision.sweep --designs fonts-held-out --frames-per-design 40 --seed 53 \\
        --workers 2 --out swH53.json --save-reads readsH53.npz models/cards_v5.onnx
    python -m vision.calibrate_rank_colour models/cards_v5.onnx \\
        --unseen-reads readsH53.npz ... [--seen-reads readsT31.npz ...] [--write]

(An enrolled reader, :mod:`vision.enroll`, is picked for on its house deck's frames alone,
``--seen-reads``: that is its deck, and enrollment does it itself.)

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
:class:`vision.recognize.Recognizer` reads; without, nothing is written. ``--calibrated``
takes reads saved by ``vision.sweep --calibrated`` (frames read with their table's card sizes,
:mod:`vision.tablesize`) and checks the rule on them; it writes nothing (the ``.json``'s
threshold is the one both kinds of reading use).
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


def sweep(model: Path, paths: list[Path], threshold: float | None = None,
          calibrated: bool = False) -> list[dict]:
    """Rows (one a threshold of :data:`THRESHOLDS`) of the rank-and-colour counts over the
    frames of the saved reads ``paths``, in :func:`vision.calibrate.pick_threshold`'s keys
    (``misread``, ``reported``, ``false_positives``: the rank-and-colour ones), with the codes'
    recall and the rank-and-colour recall; the codes merged at ``threshold`` (default: the
    model's operating threshold); ``calibrated``: reads of a calibrated sweep."""
    from vision.recognize import Recognizer

    rec = Recognizer(model, threshold=threshold)
    identity = readsfile.reader_identity(rec, calibrated)
    totals = [Score() for _ in THRESHOLDS]
    for path in paths:
        meta, frames = readsfile.load(path)
        readsfile.check_identity(meta, identity, path)
        for packed, labels in frames:
            if packed.shape[1] < readsfile.COLUMNS:
                raise ValueError(f"{path}: its reads were saved without their ranks and "
                                 "colours; sweep again")
            reads = readsfile.at_bar(readsfile.unpack(packed), rec.extra_walk_bar())
            codes = merge_reads(reads, rec.threshold)  # the codes alone
            for total, t in zip(totals, THRESHOLDS, strict=True):
                total.add(score_frame({**with_rank_colour(codes, reads, t), "elapsed_ms": 0.0},
                                      labels))
    return [{"threshold": t, "frames": s.frames, "readable_cards": s.readable,
             "recall": round(s.recall, 5), "rank_colour_recall": round(s.rank_colour_recall, 5),
             "rc_correct": s.rc_correct, "misread": s.rc_misread, "reported": s.rc_reported,
             "false_positives": s.rc_false_positive, "code_misread": s.misread,
             "code_reported": s.reported} for t, s in zip(THRESHOLDS, totals, strict=True)]


def pick(rows: list[dict], max_error: float = 0.001, max_fp: float = 0.1) -> float | None:
    """The rule's threshold for ``rows`` (:func:`sweep`), or None where no threshold of
    :data:`THRESHOLDS` keeps it.

    >>> row = lambda t, bad: {"threshold": t, "misread": bad, "reported": 5000,
    ...                       "false_positives": 0, "frames": 1000}
    >>> pick([row(0.99, 9), row(0.999, 0), row(0.9999, 0)])
    0.999
    >>> pick([row(0.99, 9), row(0.999, 9), row(0.9999, 9)]) is None
    True
    """
    chosen = pick_threshold(rows, max_error, max_fp, bound=True)
    return chosen["threshold"] if keeps_rule(chosen, max_error, max_fp) else None


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
    ap.add_argument("--unseen-reads", type=Path, nargs="*", default=[])
    ap.add_argument("--seen-reads", type=Path, nargs="*", default=[])
    ap.add_argument("--max-error", type=float, default=0.001)
    ap.add_argument("--max-fp", type=float, default=0.1)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--calibrated", action="store_true",
                    help="reads of vision.sweep --calibrated: check the rule, write nothing")
    args = ap.parse_args(argv)
    if not args.unseen_reads and not args.seen_reads:
        ap.error("give --unseen-reads, --seen-reads (an enrolled deck's frames) or both")
    if args.calibrated and args.write:
        ap.error("--calibrated checks the rule on a calibrated table's reads; it writes nothing")
    meta_path = args.model.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    picks, made = [], {}
    for name, paths in (("unseen", args.unseen_reads), ("seen", args.seen_reads)):
        if not paths:
            continue
        try:
            rows = sweep(args.model, paths, calibrated=args.calibrated)
        except ValueError as e:
            ap.error(str(e))
        print(_table(f"{name} designs ({', '.join(p.name for p in paths)})", rows))
        chosen = pick(rows, args.max_error, args.max_fp)
        if chosen is None:
            print(f"  no threshold up to {THRESHOLDS[-1]} keeps the rule: nothing written")
            return 1
        print(f"  rule's pick: {chosen}")
        picks.append(chosen)
        made[name] = {"reads": [p.name for p in paths], "rows": rows}
    print(f"rank-and-colour threshold: {max(picks)}")
    if args.write:
        meta["rank_colour_threshold"] = max(picks)
        meta["rank_colour_sweeps"] = made
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
        print(f"written to {meta_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
