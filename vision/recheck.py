"""Re-check a reader's operating threshold on held-out sweeps read after it was chosen.

    python -m vision.sweep --designs fonts-held-out-strict --frames-per-design 40 --seed 911 \
        --workers 2 --out sw911.json models/cards_v7.onnx          # and more fresh seeds
    python -m vision.recheck models/cards_v7.onnx sw911.json sw919.json ...
    python -m vision.recheck models/cards_v7.onnx sw*.json --rows "cards_v7.onnx own places" --write
    python -m vision.recheck models/cards_v7.onnx sw1087.json ... --onto-record --write

:mod:`vision.calibrate` picks the threshold on sweeps that are then spent: the pick sits where
those sweeps just kept the misread rule, so they flatter it. Sweeps rendered later, of designs
the reader never saw, are the fair test. This sums their rows for the reader (by file name;
``--rows``: rows of other names, the first of them that each sweep has, such as the rows of
the pipeline without the extra walks, ``"cards_v7.onnx own places"``, which every sweep of a
reader with extra walks also scores, or those of a sweep that read with a setting changed,
``vision.settings``) and applies the reader's own rule (its ``.json``'s
``"rule"``: the misread rate's 95 % upper bound and the false positives a frame, at the
threshold and every higher one, :func:`vision.calibrate.pick_threshold`).

It prints the pooled counts from 0.99 up and what the rule picks. With ``--write`` the
re-check is recorded in the ``.json`` (``"threshold_recheck"``: the threshold before and
after, the verdict, the rule, the sweeps and their pooled rows), and a pick above the
reader's threshold becomes its threshold. A pick at or below it leaves the threshold as it
is: a later test can ask for more caution, never for less; a lower threshold needs a
calibration of its own.

With ``--onto-record`` the sweeps are added to those the ``.json``'s last re-check pooled
(its recorded rows, from 0.99 up), so that the re-check goes on across machines that no
longer hold the earlier sweep files; a sweep of a seed already recorded, or given twice, is
refused (the same frames counted twice).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vision.calibrate import (
    add_sweeps,
    keeps_rule,
    misread_upper_bound,
    pick_threshold,
    summed_sweeps,
)

#: Rows printed and recorded: the thresholds a re-check can move to.
SHOWN_FROM = 0.99
#: The rule of a reader whose ``.json`` names none (:mod:`vision.calibrate`'s defaults).
DEFAULT_RULE = {"max_error": 0.001, "max_fp": 0.1, "bound": True}


def recheck(meta: dict, rows: list[dict]) -> tuple[float, dict]:
    """The threshold the reader should run at after a re-check on pooled ``rows``: the rule's
    pick (``meta["rule"]``), where it is above ``meta["threshold"]``, else the threshold as
    it is; and the pick's row.

    >>> def row(t, m): return {"threshold": t, "misread": m, "reported": 160000,
    ...     "misread_rate": m / 160000, "false_positives": 0, "frames": 20000}
    >>> meta = {"threshold": 0.997, "rule": {"max_error": 0.001, "max_fp": 0.1, "bound": True}}
    >>> recheck(meta, [row(0.997, 144), row(0.998, 123), row(0.999, 111)])[0]
    0.998
    >>> recheck(meta, [row(0.995, 120), row(0.997, 110), row(0.998, 100)])[0]   # holds
    0.997
    """
    rule = meta.get("rule", DEFAULT_RULE)
    pick = pick_threshold(rows, rule["max_error"], rule["max_fp"], rule.get("bound", True))
    return max(float(meta["threshold"]), float(pick["threshold"])), pick


def onto_record(meta: dict, rows: list[dict], made: list[dict]) -> tuple[list[dict], list[dict]]:
    """``rows`` and ``made`` (the sweeps they were summed from) added to the pooled rows and
    sweeps of ``meta``'s recorded re-check, on the thresholds it recorded; ``ValueError``
    where there is no record, or a sweep's seed is recorded already.

    >>> def row(t, m): return {"threshold": t, "frames": 640, "readable_cards": 8000,
    ...     "correct": 5000, "reported": 5100, "misread": m, "false_positives": 2,
    ...     "face_down": 0, "face_down_found": 0, "face_down_false": 0, "unreadable_reports": 0}
    >>> meta = {"threshold_recheck": {"pooled": [row(0.997, 5)], "sweeps": [{"seed": 1}]}}
    >>> pooled, sweeps = onto_record(meta, [row(0.99, 9), row(0.997, 3)], [{"seed": 2}])
    >>> [(r["threshold"], r["misread"], r["frames"]) for r in pooled], len(sweeps)
    ([(0.997, 8, 1280)], 2)
    >>> onto_record(meta, [row(0.997, 3)], [{"seed": 1}])
    Traceback (most recent call last):
    ...
    ValueError: seed 1 is in the recorded re-check already
    >>> onto_record(meta, [row(0.997, 3)], [{"seed": 2}, {"seed": 2}])
    Traceback (most recent call last):
    ...
    ValueError: seed 2 is in the recorded re-check already
    """
    record = meta.get("threshold_recheck")
    if not record:
        raise ValueError("no recorded re-check to add to (run without --onto-record first)")
    # (by seed alone: the earliest records do not name their designs)
    seen = {s.get("seed") for s in record["sweeps"]}
    for sweep in made:
        if sweep.get("seed") in seen:
            raise ValueError(f"seed {sweep.get('seed')} is in the recorded re-check already")
        seen.add(sweep.get("seed"))  # (nor twice among these)
    by_threshold = {r["threshold"]: r for r in rows}
    missing = [r["threshold"] for r in record["pooled"] if r["threshold"] not in by_threshold]
    if missing:
        raise ValueError(f"the sweeps lack the recorded thresholds {missing}")
    pooled = add_sweeps(record["pooled"], [by_threshold[r["threshold"]] for r in record["pooled"]])
    return pooled, [*record["sweeps"], *made]


def _line(r: dict, rule: dict) -> str:
    bound = misread_upper_bound(r["misread"], r["reported"])
    keeps = keeps_rule(r, rule["max_error"], rule["max_fp"], rule.get("bound", True))
    return (f"{r['threshold']:<7} recall {100 * r['correct'] / max(r['readable_cards'], 1):6.2f} %"
            f"  misreads {r['misread']:>5} / {r['reported']:>7}  bound {100 * bound:.4f} %"
            f"  false positives {r['false_positives']:>5} / {r['frames']} frames"
            f"  {'keeps' if keeps else 'breaks'} the rule")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path, help="the reader (ONNX); its .json is read and written")
    ap.add_argument("sweeps", type=Path, nargs="+",
                    help="vision.sweep results of designs it never saw, read after the "
                         "threshold was chosen")
    ap.add_argument("--rows", nargs="+", default=None, metavar="NAME",
                    help="each sweep's rows of the first of these names it has (default: the "
                         "model's file name); e.g. 'cards_v7.onnx own places', the pipeline "
                         "without the extra walks")
    ap.add_argument("--onto-record", action="store_true",
                    help="add the sweeps to those the .json's last re-check pooled")
    ap.add_argument("--write", action="store_true",
                    help="record the re-check in the .json, and raise the threshold there "
                         "when the rule asks for more")
    args = ap.parse_args(argv)
    meta_path = args.model.with_suffix(".json")
    if not meta_path.exists():
        ap.error(f"{meta_path}: no metadata (run vision.calibrate first)")
    meta = json.loads(meta_path.read_text())
    names = args.rows or [args.model.name]
    try:
        rows, made, used = summed_sweeps(args.sweeps, names)
    except ValueError as e:
        ap.error(str(e))
    made = [{"file": path.name, "rows": name, **sweep}
            for path, name, sweep in zip(args.sweeps, used, made, strict=True)]
    if args.onto_record:
        try:
            rows, made = onto_record(meta, rows, made)
        except ValueError as e:
            ap.error(str(e))
    rule = meta.get("rule", DEFAULT_RULE)
    shown = [r for r in rows if r["threshold"] >= SHOWN_FROM]
    print(f"{len(made)} sweeps, rows {' or '.join(map(repr, names))}; the rule: misread bound <= "
          f"{rule['max_error']:.2%}, false positives <= {rule['max_fp']} a frame")
    for r in shown:
        print(_line(r, rule))
    old = float(meta["threshold"])
    threshold, pick = recheck(meta, rows)
    verdict = "raised" if threshold > old else "holds"
    print(f"the rule picks {pick['threshold']}; the threshold {old} {verdict}"
          + (f": {threshold}" if threshold > old else ""))
    if args.write:
        meta.update(threshold=threshold, threshold_recheck={
            "previous": old, "threshold": threshold, "verdict": verdict, "rule": rule,
            "sweeps": made, "pooled": shown})
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
        print(f"written to {meta_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
