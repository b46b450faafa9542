"""Operating thresholds per reported card code, chosen on training designs, checked on others.

    python -m vision.class_thresholds collect --out A1.npz --frames-per-design 160 --seed 31
    python -m vision.class_thresholds collect --out B2.npz --dirs calib calib2
    python -m vision.class_thresholds choose --on A1.npz A2.npz --check B1.npz B2.npz \\
        --write models/cards_v4.json

One threshold for every code spends the misread budget evenly; but a card reported as a
club is misread far more often at a given confidence than one reported as a heart (the
reader's commonest sure mistakes are a spade read as a club and back, ``models/cards_v4.md``).
``collect`` reads frames like :mod:`vision.sweep` (rendered training-design frames, or
labelled directories) and keeps every card the merge would report at a threshold down to the
grouping floor (:func:`vision.recognize.card_groups`), with its code, its score and whether it
is right, a misread or a false positive. ``choose`` gives each group of codes (by default
their suit) the threshold of :data:`GRID` that maximises *right cards - lam x misreads* on
the ``--on`` rows, for the largest ``lam`` at which the 95 % bound of the misread rate there
keeps the rule (``--max-error``, as :func:`vision.calibrate.pick_threshold`): one parameter,
so that the rows choose little. The choice is then scored on the ``--check`` rows, frames it
was not chosen on, against the model's one threshold; ``--write`` puts it into the model's
``.json`` (``"class_thresholds"``, read by :class:`vision.recognize.Recognizer`) only when it
keeps the rule there and reads more cards there.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from vision.calibrate import misread_upper_bound
from vision.codes import CLASSES

#: The thresholds a group of codes may get (the grouping floor at 0.99 is 0.9).
GRID: tuple[float, ...] = (0.9, 0.93, 0.95, 0.96, 0.97, 0.975, 0.98, 0.985, 0.99, 0.993,
                           0.995, 0.997, 0.999)
#: Row status: the card's code is right, wrong for the card it lies on, or it lies on none.
RIGHT, MISREAD, FALSE_POSITIVE = 0, 1, 2
#: How codes are grouped to share a threshold.
GROUPINGS: dict[str, Callable[[str], str]] = {
    "one": lambda code: "all",
    "suit": lambda code: code[1],
    "rank": lambda code: code[0],
    "code": lambda code: code,
}


def card_rows(rec, reads: list, labels: dict) -> np.ndarray:  # noqa: ANN001
    """One row per card the merge makes of ``reads`` at any threshold from the grouping floor
    of ``rec``'s operating threshold up: (code index, score, status, right and readable).

    Cards are matched to ``labels`` best score first, as a report at a higher threshold would
    be (:func:`vision.evaluate.match_reports`).
    """
    from vision.evaluate import match_reports
    from vision.recognize import DOUBT_FLOOR, _card_quad, card_groups, card_score, pair_floor

    groups, _ = card_groups(reads, min(pair_floor(rec.threshold), DOUBT_FLOOR))
    cards = sorted(((g[0].cls, card_score(g), _card_quad(g).mean(0)) for g in groups),
                   key=lambda c: -c[1])
    truth = labels["cards"]
    matched = match_reports([{"code": CLASSES[c], "center": list(p)} for c, _, p in cards],
                            truth)
    rows = []
    for (cls, score, _), (best, _) in zip(cards, matched, strict=True):
        if best is None:
            rows.append((cls, score, FALSE_POSITIVE, 0))
        elif truth[best]["code"] != CLASSES[cls]:
            rows.append((cls, score, MISREAD, 0))
        else:
            rows.append((cls, score, RIGHT, int(truth[best].get("readable", True))))
    return np.array(rows, np.float64).reshape(-1, 4)


def readable_cards(labels: dict) -> int:
    return sum(1 for c in labels["cards"]
               if c["code"] != "face_down" and c.get("readable", True))


_REC: dict = {}


def _job(job: tuple) -> tuple[np.ndarray, int]:
    import cv2

    from vision.recognize import Recognizer, load_image

    cv2.setNumThreads(1)
    rec = _REC.setdefault("rec", Recognizer(job[0]))
    if job[1] == "file":
        img, labels = load_image(job[2]), json.loads(Path(job[3]).read_text())
    else:
        from vision.sweep import render_frame

        img, labels = render_frame(*job[1:])
    return card_rows(rec, rec.read(img), labels), readable_cards(labels)


def collect(model: Path, jobs: list[tuple], workers: int) -> dict:
    """Rows of every frame of ``jobs`` (``("file", image, label)`` or ``(design, k, seed)``
    of :func:`vision.sweep.render_frame`), in job order, with the readable cards and frames."""
    rows, readable = [], 0
    t0 = time.time()
    with mp.get_context("spawn").Pool(workers) as pool:
        for i, (r, n) in enumerate(pool.imap(_job, [(str(model), *j) for j in jobs],
                                             chunksize=4)):
            rows.append(r)
            readable += n
            if i % 400 == 0:
                print(f"{i}/{len(jobs)} frames, {time.time() - t0:.0f} s", flush=True)
        pool.close()
        pool.join()
    return {"rows": np.concatenate(rows) if rows else np.zeros((0, 4)),
            "readable": readable, "frames": len(jobs)}


def load_rows(paths: list[Path]) -> dict:
    """The rows of several ``collect`` files, with their counts summed."""
    parts = [np.load(p) for p in paths]
    return {"rows": np.concatenate([p["rows"] for p in parts]),
            "readable": sum(int(p["readable"]) for p in parts),
            "frames": sum(int(p["frames"]) for p in parts)}


def group_counts(data: dict, grouping: str) -> dict[str, np.ndarray]:
    """Per group of codes: right readable cards, misreads, reports and false positives at
    each threshold of :data:`GRID` (array ``(4, len(GRID))``)."""
    key = GROUPINGS[grouping]
    rows = data["rows"]
    codes = rows[:, 0].astype(int)
    out = {}
    for group in sorted({key(c) for c in CLASSES[:52]}):
        member = np.isin(codes, [i for i, c in enumerate(CLASSES[:52]) if key(c) == group])
        r = rows[member]
        out[group] = np.array([[((r[:, 1] >= t) & (r[:, 3] == 1)).sum(),
                                ((r[:, 1] >= t) & (r[:, 2] == MISREAD)).sum(),
                                (r[:, 1] >= t).sum(),
                                ((r[:, 1] >= t) & (r[:, 2] == FALSE_POSITIVE)).sum()]
                               for t in GRID]).T
    return out


def thresholds_at(counts: dict[str, np.ndarray], lam: float) -> dict[str, float]:
    """Each group's threshold maximising right cards - ``lam`` x misreads (the highest of
    equals).

    >>> counts = {"S": np.array([[100] * 11 + [90, 80], [9] * 11 + [0, 0],
    ...                          [109] * 11 + [90, 80], [0] * 13])}
    >>> thresholds_at(counts, 0.5), thresholds_at(counts, 2.0)
    ({'S': 0.995}, {'S': 0.997})
    """
    out = {}
    for group, (right, misread, _, _) in counts.items():
        value = right - lam * misread
        out[group] = GRID[int(np.flatnonzero(value == value.max()).max())]
    return out


def score(counts: dict[str, np.ndarray], chosen: dict[str, float], readable: int) -> dict:
    """Recall, misreads, reports, false positives and the misread rate's 95 % bound of the
    cards reported at the ``chosen`` thresholds."""
    tot = sum(c[:, GRID.index(chosen[g])] for g, c in counts.items())
    right, misread, reported, fp = (int(v) for v in tot)
    return {"recall": round(right / max(readable, 1), 5), "correct": right,
            "misread": misread, "reported": reported, "false_positives": fp,
            "misread_bound": round(misread_upper_bound(misread, reported), 6)}


def choose(data: dict, grouping: str, max_error: float,
           lams: tuple[float, ...] = (1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200,
                                      300, 500, 1000, 10**6)) -> tuple[float, dict[str, float]]:
    """The smallest ``lam`` (most cards) whose thresholds keep the 95 % bound of the misread
    rate on ``data`` within ``max_error`` (the largest ``lam`` if none does), and those
    thresholds."""
    counts = group_counts(data, grouping)
    for lam in lams:
        chosen = thresholds_at(counts, lam)
        if score(counts, chosen, data["readable"])["misread_bound"] <= max_error:
            return lam, chosen
    return lams[-1], thresholds_at(counts, lams[-1])


def by_code(chosen: dict[str, float], grouping: str, threshold: float) -> dict[str, float]:
    """The chosen thresholds per card code, leaving out the codes at ``threshold``."""
    key = GROUPINGS[grouping]
    return {c: chosen[key(c)] for c in CLASSES[:52] if chosen[key(c)] != threshold}


def main(argv: list[str] | None = None) -> int:
    from vision.recognize import DEFAULT_MODEL

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="card rows of rendered frames or labelled directories")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    c.add_argument("--frames-per-design", type=int, default=0)
    c.add_argument("--seed", type=int, default=31)
    c.add_argument("--dirs", type=Path, nargs="*", default=[])
    c.add_argument("--workers", type=int, default=2)
    s = sub.add_parser("choose", help="choose on some rows, check on others, maybe write")
    s.add_argument("--on", type=Path, nargs="+", required=True)
    s.add_argument("--check", type=Path, nargs="+", required=True)
    s.add_argument("--grouping", choices=sorted(GROUPINGS), default="suit")
    s.add_argument("--max-error", type=float, default=0.001)
    s.add_argument("--write", type=Path, default=None, help="the model's .json")
    args = ap.parse_args(argv)
    if args.command == "collect":
        from vision.dataset import design_list
        from vision.evaluate import labelled_images

        jobs: list[tuple] = [("file", str(i), str(lab)) for d in args.dirs
                             for i, lab in labelled_images(d)]
        jobs += [(d, k, args.seed) for d in design_list("train", args.seed)
                 for k in range(args.frames_per_design)]
        res = collect(args.model, jobs, args.workers)
        np.savez(args.out, **res)
        print(f"{len(res['rows'])} cards of {res['frames']} frames -> {args.out}")
        return 0
    on, check = load_rows(args.on), load_rows(args.check)
    meta_path = args.write or DEFAULT_MODEL.with_suffix(".json")
    threshold = float(json.loads(meta_path.read_text())["threshold"])
    lam, chosen = choose(on, args.grouping, args.max_error)
    report = {"grouping": args.grouping, "lam": lam, "thresholds": chosen}
    for name, data in (("on", on), ("check", check)):
        counts = group_counts(data, args.grouping)
        report[name] = {"frames": data["frames"],
                        "chosen": score(counts, chosen, data["readable"]),
                        "one_threshold": score(counts, dict.fromkeys(counts, threshold),
                                               data["readable"])}
    print(json.dumps(report, indent=1))
    verdict = report["check"]
    keeps = verdict["chosen"]["misread_bound"] <= args.max_error
    gains = verdict["chosen"]["correct"] > verdict["one_threshold"]["correct"]
    if args.write is not None:
        if not (keeps and gains):
            print("not written: on the check rows it "
                  + ("reads no more cards" if keeps else "breaks the misread rule"))
            return 1
        meta = json.loads(args.write.read_text())
        meta["class_thresholds"] = by_code(chosen, args.grouping, threshold)
        meta["class_threshold_choice"] = {
            **{k: report[k] for k in ("grouping", "lam", "thresholds")},
            "on": {"files": [p.name for p in args.on], **report["on"]},
            "check": {"files": [p.name for p in args.check], **report["check"]}}
        args.write.write_text(json.dumps(meta, indent=1) + "\n")
        print(f"written to {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
