"""Pick the operating threshold on held-in data and write the model's metadata.

    python -m vision.dataset /work/vision-work/calib --frames 4 --seed 21 --designs train
    python -m vision.calibrate models/cards_v1.onnx /work/vision-work/train/data4.npz \
        --frames /work/vision-work/calib

Calibration data are of the *training* designs only (scenes never trained on); the validation
designs stay untouched. With ``--frames``, the threshold is the smallest one at which the whole
pipeline, on those labelled frames, makes no more than ``--max-error`` misreads per reported
card and at most ``--max-fp`` false positives per frame, and so does every higher threshold of
the sweep (with ``--bound``, the 95 % upper confidence bound of the misread rate must be
within ``--max-error``; ``--sweep`` adds the counts of :mod:`vision.sweep`'s rendered frames);
without it, the smallest at which card
reads among the calibration crops are wrong at most ``--max-error`` of the time. Written, with
the class list and the crop-level table, to ``<model>.json``, which
:class:`vision.recognize.Recognizer` reads. The frames are read with the look scales of the
second look that ``<model>.json`` already names (``"look_scales"``, else the default), and the
new file keeps them: a threshold holds only for the scales it was chosen with.

``--unseen-sweep`` adds sweeps of designs the reader never saw that are not the validation
designs either (``python -m vision.sweep --designs fonts``): the rule must hold on them apart,
and the threshold is the higher of the two picks (:func:`pick_seen_and_unseen`); the pick on
the training designs alone is kept as ``"seen_threshold"`` (a house deck's enrolled reader,
which has seen its deck, is held to that one). Without the crop file the crop level of the
model's ``.json`` is kept, and so is its ``"burst"`` entry, which is chosen apart.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

from vision.codes import CLASSES
from vision.crops import CROP_H, CROP_W


def choose_threshold(probs: np.ndarray, labels: np.ndarray, max_error: float) -> dict:
    """Smallest threshold whose card reads are wrong at most ``max_error`` of the time."""
    pred = probs.argmax(1)
    conf = probs.max(1)
    is_read = pred < 52
    table = []
    chosen = None
    for thr in np.round(np.arange(0.5, 1.0, 0.01), 2).tolist() + [0.995, 0.999]:
        sel = is_read & (conf >= thr)
        wrong = int((pred[sel] != labels[sel]).sum())
        n = int(sel.sum())
        pos = labels < 52
        recall = float(((pred == labels) & sel & pos).sum() / max(pos.sum(), 1))
        table.append({"threshold": thr, "reads": n, "wrong": wrong, "crop_recall": recall})
        if chosen is None and n and wrong / n <= max_error:
            chosen = table[-1]
    return {"chosen": chosen or table[-1], "table": table}


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p)."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    lp, lq = math.log(p), math.log1p(-p)
    return sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                        + i * lp + (n - i) * lq) for i in range(k + 1))


#: Keys of a reader's ``.json`` that this module does not choose, kept as they are when it
#: writes the file again.
KEPT_APART = ("burst", "extra_bar", "rank_colour_threshold", "calibrated_threshold",
              "threshold_by_width")


def misread_upper_bound(misread: int, reported: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper confidence bound on a misread rate.

    >>> round(misread_upper_bound(0, 2700), 5)   # no misread in 2700 reports: ~3 / 2700
    0.00111
    >>> round(misread_upper_bound(5, 15000), 5)
    0.0007
    """
    if reported <= 0:
        return 1.0
    lo, hi = misread / reported, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if _binomial_cdf(misread, reported, mid) > 1.0 - confidence:
            lo = mid
        else:
            hi = mid
    return hi


#: Count fields of a frame sweep row that add up across frame sets.
_COUNTS = ("frames", "readable_cards", "correct", "reported", "misread", "false_positives",
           "face_down", "face_down_found", "face_down_false", "unreadable_reports")


def add_sweeps(rows: list[dict], extra: list[dict]) -> list[dict]:
    """Rows of two threshold sweeps (same thresholds) with their counts summed."""
    out = []
    for a, b in zip(rows, extra, strict=True):
        if a["threshold"] != b["threshold"]:
            raise ValueError("the sweeps have different thresholds")
        r = {"threshold": a["threshold"], **{k: a[k] + b[k] for k in _COUNTS}}
        r["recall"] = round(r["correct"] / max(r["readable_cards"], 1), 5)
        r["misread_rate"] = round(r["misread"] / max(r["reported"], 1), 5)
        out.append(r)
    return out


#: (0.998 and 0.9995 since 2026-12-01: the rule on designs the reader never saw asks that high.)
THRESHOLDS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95, 0.96, 0.97,
                                  0.975, 0.98, 0.985, 0.99, 0.993, 0.995, 0.997, 0.998, 0.999,
                                  0.9995)


def keeps_rule(row: dict, max_error: float, max_fp: float, bound: bool = True) -> bool:
    """Whether a sweep row makes at most ``max_error`` misreads per reported card (with
    ``bound``, the 95 % upper confidence bound of that rate) and at most ``max_fp`` false
    positives per frame: :func:`pick_threshold` returns the highest row even when it fails.

    >>> keeps_rule({"misread": 0, "reported": 3000, "false_positives": 1, "frames": 100},
    ...            0.001, 0.1)
    True
    >>> keeps_rule({"misread": 2, "reported": 3000, "false_positives": 1, "frames": 100},
    ...            0.001, 0.1)
    False
    """
    rate = (misread_upper_bound(row["misread"], row["reported"]) if bound
            else row["misread_rate"])
    return rate <= max_error and row["false_positives"] <= max_fp * row["frames"]


def pick_threshold(rows: list[dict], max_error: float, max_fp: float,
                   bound: bool = True) -> dict:
    """The row of a frame sweep (ascending thresholds) with the smallest threshold at which
    it and every higher one make at most ``max_error`` misreads per reported card (with
    ``bound``, the 95 % upper confidence bound of that rate) and at most ``max_fp`` false
    positives per frame; the highest row when even that one fails.

    >>> rows = [{"threshold": t, "misread": m, "reported": 4000, "misread_rate": m / 4000,
    ...          "false_positives": 0, "frames": 400} for t, m in ((0.9, 9), (0.95, 2),
    ...                                                             (0.99, 0), (0.999, 0))]
    >>> pick_threshold(rows, 0.001, 0.1)["threshold"]   # bound: 2 in 4000 -> 0.16 %
    0.99
    >>> pick_threshold(rows, 0.001, 0.1, bound=False)["threshold"]
    0.95
    """
    ok = [keeps_rule(r, max_error, max_fp, bound) for r in rows]
    # the smallest threshold at which it and every higher one meet both limits
    k = len(rows) - 1
    while k > 0 and ok[k - 1] and ok[k]:
        k -= 1
    return rows[k]


def pick_seen_and_unseen(rows: list[dict], unseen_rows: list[dict], max_error: float,
                         max_fp: float, bound: bool = True) -> tuple[float, dict, dict]:
    """The operating threshold when the rule must hold on two sweeps apart: ``rows``, of
    designs the reader was trained on (new scenes), and ``unseen_rows``, of designs it never
    saw. The higher of the two :func:`pick_threshold` picks, and those picks. A reader is surer
    of what it has seen: on the seen designs the rule can pick a threshold at which it
    misreads unseen ones twice as often (``models/cards_v4.md``, "Eighteenth session").

    >>> def row(t, m): return {"threshold": t, "misread": m, "reported": 4000,
    ...                        "misread_rate": m / 4000, "false_positives": 0, "frames": 400}
    >>> seen = [row(0.9, 9), row(0.99, 0), row(0.999, 0)]
    >>> unseen = [row(0.9, 30), row(0.99, 8), row(0.999, 0)]
    >>> t, a, b = pick_seen_and_unseen(seen, unseen, 0.001, 0.1)
    >>> t, a["threshold"], b["threshold"]
    (0.999, 0.99, 0.999)
    """
    seen = pick_threshold(rows, max_error, max_fp, bound)
    unseen = pick_threshold(unseen_rows, max_error, max_fp, bound)
    return max(seen["threshold"], unseen["threshold"]), seen, unseen


def threshold_scores(rec, reads: list, labels: dict) -> list:  # noqa: ANN001
    """One frame's :class:`vision.evaluate.Score` at every threshold of :data:`THRESHOLDS`,
    from its reads (:meth:`vision.recognize.Recognizer.read`, which no threshold changes)."""
    from vision.evaluate import score_frame

    return [score_frame({**rec.merge(reads, t), "elapsed_ms": 0.0}, labels) for t in THRESHOLDS]


def sweep_frames(model: Path, directories: list[Path], gate: Path | None = None) -> list[dict]:
    """Pipeline metrics on labelled directories for every threshold in :data:`THRESHOLDS`."""
    from vision.evaluate import Score, labelled_images
    from vision.recognize import Recognizer, load_image

    rec = Recognizer(model, threshold=0.5, gate=gate)
    totals = [Score() for _ in THRESHOLDS]
    for d in directories:
        for image, label_file in labelled_images(d):
            scores = threshold_scores(rec, rec.read(load_image(image)),
                                      json.loads(label_file.read_text()))
            for total, score in zip(totals, scores, strict=True):
                total.add(score)
    return [{"threshold": t, **total.summary()} for t, total in zip(THRESHOLDS, totals,
                                                                    strict=True)]


def summed_sweeps(paths: list[Path], names: list[str]
                  ) -> tuple[list[dict], list[dict], list[str]]:
    """The rows of :mod:`vision.sweep` results named by the first of ``names`` each has (a
    reader's file name, or such as its ``own places`` rows), summed; which sweeps they were
    (with the designs they were scored on, when a ``--designs`` kept some frames of saved
    reads only); and the name each sweep's rows went by. A sweep without such rows is refused
    (``ValueError``), and so is a calibrated sweep (``vision.sweep --calibrated``): the
    threshold written is the one the frame's own card sizes are read at."""
    rows: list[dict] = []
    made, used = [], []
    for path in paths:
        try:
            extra = json.loads(Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a readable sweep result ({exc})") from exc
        if not isinstance(extra, dict):
            raise ValueError(f"{path}: not a sweep result (no \"models\")")
        if extra.get("calibrated"):
            raise ValueError(f"{path}: a calibrated sweep (frames read with their table's card "
                             "sizes); the operating threshold is chosen on the frame's own")
        models = extra.get("models", {})
        name = next((n for n in names if n in models), None)
        if name is None:
            raise ValueError(f"{path}: no rows named {' or '.join(map(repr, names))} (it has "
                             f"{', '.join(map(repr, models)) or 'none'})")
        if any(not isinstance(r["threshold"], (int, float)) for r in models[name]):
            raise ValueError(f"{path}: the rows {name!r} are of a threshold by width (one row, "
                             "its steps), not of the flat thresholds a rule picks among")
        rows = add_sweeps(rows, models[name]) if rows else models[name]
        made.append({k: extra[k] for k in ("frames", "frames_per_design", "seed", "designs")
                     if k in extra})
        used.append(name)
    return rows, made, used


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("data", type=Path, nargs="?", default=None,
                    help="npz of calibration crops (x uint8, y labels); without it the crop "
                         "level of the model's .json is kept")
    ap.add_argument("--gate", type=Path, default=None,
                    help="gate model (in the same directory as the model); recorded in the json")
    ap.add_argument("--max-error", type=float, default=0.001)
    ap.add_argument("--max-fp", type=float, default=0.1, help="false positives per frame")
    ap.add_argument("--frames", type=Path, nargs="+", default=None,
                    help="directories of labelled frames (training designs)")
    ap.add_argument("--sweep", type=Path, nargs="*", default=[],
                    help="vision.sweep results whose counts for this model (by file name) are "
                         "added to those of --frames")
    ap.add_argument("--unseen-sweep", type=Path, nargs="*", default=[],
                    help="vision.sweep results of designs the reader never saw (vision.sweep "
                         "--designs fonts for cards_v4, fonts-held-out for a reader trained "
                         "with --hold-out-fonts, as cards_v5): the rule must hold on them too, "
                         "apart")
    ap.add_argument("--bound", action="store_true",
                    help="hold the 95 %% upper confidence bound of the misread rate, not the "
                         "observed rate, to --max-error")
    args = ap.parse_args(argv)
    from vision.recognize import Recognizer

    if args.gate is not None and args.gate.resolve().parent != args.model.resolve().parent:
        ap.error("--gate must lie in the same directory as the model")
    if args.data is None and not args.frames:
        ap.error("nothing to calibrate on: give calibration crops, --frames, or both")
    if args.unseen_sweep and not args.frames:
        ap.error("--unseen-sweep needs --frames")
    meta_path = args.model.with_suffix(".json")
    old = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if args.data is None and "crop_calibration" not in old:
        ap.error(f"no calibration crops given and no crop level in {meta_path}")
    rec = Recognizer(args.model, threshold=0.5, gate=args.gate)
    meta = {"classes": list(CLASSES), "input": [3, CROP_H, CROP_W],
            # the frames below were read with these look scales and hand walks: the
            # threshold holds for them
            "look_scales": list(rec.look_scales), "hand_walks": rec.hand_walks}
    if rec.walk_splits is not None:
        meta["walk_splits"] = list(rec.walk_splits)
    if rec.opposite_anchors is not None:
        meta["opposite_anchors"] = rec.opposite_anchors
    if rec.lone_anchors is not None:
        meta["lone_anchors"] = rec.lone_anchors
    if args.data is not None:
        d = np.load(args.data)
        x = d["x"].astype(np.float32) / 255.0
        probs = np.concatenate([rec.first_look(x[s:s + 512]) for s in range(0, len(x), 512)])
        res = choose_threshold(probs, d["y"], args.max_error)
        meta.update(threshold=res["chosen"]["threshold"], crop_calibration=res["chosen"],
                    calibration_crops=int(len(x)))
    else:
        meta.update({k: old[k] for k in ("threshold", "crop_calibration", "calibration_crops")})
    if args.gate is not None:
        meta["gate"] = args.gate.name
    if args.frames:
        try:  # the sweeps read (a calibrated one refused) before any frame is
            extra, made, _ = summed_sweeps(args.sweep, [args.model.name])
            unseen, unseen_made, _ = summed_sweeps(args.unseen_sweep, [args.model.name])
        except ValueError as e:
            ap.error(str(e))
        rows = sweep_frames(args.model, args.frames, args.gate)
        if args.sweep:
            rows = add_sweeps(rows, extra)
            meta["rendered_sweeps"] = made
        rule = (args.max_error, args.max_fp, args.bound)
        if args.unseen_sweep:
            threshold, pick, unseen_pick = pick_seen_and_unseen(rows, unseen, *rule)
            # "seen_threshold": the rule on the training designs alone, the floor of a house
            # deck's enrolled reader (vision.enroll), which has seen its deck
            meta.update(seen_threshold=pick["threshold"], unseen_calibration=unseen_pick,
                        unseen_sweep=unseen, rendered_unseen_sweeps=unseen_made)
        else:
            pick = pick_threshold(rows, *rule)
            threshold = pick["threshold"]
        meta.update(threshold=threshold, frame_calibration=pick,
                    frame_sweep=rows, calibration_frames=[str(f) for f in args.frames],
                    rule={"max_error": args.max_error, "max_fp": args.max_fp,
                          "bound": args.bound})
        for r in rows:
            print(json.dumps(r))
    # chosen apart, each by its own rule, and kept: the burst fusion (benchmarks/burst_eval.py),
    # the extra walks' bar, the rank-and-colour threshold (vision.calibrate_rank_colour),
    # an enrolled reader's calibrated threshold (vision.enroll) and the threshold by card
    # width (vision.widthbar, chosen on held-out sweeps of its own). (A re-check of the threshold
    # on later sweeps, "threshold_recheck", is not: this is a calibration of its own.)
    meta.update({k: old[k] for k in KEPT_APART if k in old})
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    print("threshold", meta["threshold"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
