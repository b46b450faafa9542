"""Throughput of a labelled suite read by 1, 2, ... processes (``vision-eval --workers``).

    python benchmarks/parallel_eval.py DIR [--workers 1 2] [--reps 3] [--calibrated]

Scores ``DIR`` (the format of ``sample_images/``) with each worker count in turn, ``--reps``
times over (the counts alternate within a rep, so a machine's load falls on all alike), and
prints per count the median wall time (process start and model loading included, as a lab
sees it), frames a second and the ratio to one worker's frames a second in the same run. Also
checks that every count scored the suite alike (every design's counts; times aside).
Run it on a quiet machine: a count of workers above the free cores measures the load.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.evaluate import score_by_design, total  # noqa: E402
from vision.parallel import usable_cores  # noqa: E402
from vision.recognize import Recognizer  # noqa: E402
from vision.selfcheck import describe, environment  # noqa: E402


def _counts(by_design: dict) -> str:
    out = {}
    for name, s in by_design.items():
        summary = s.summary()
        summary.pop("ms_per_frame_median")
        out[name] = summary
    return json.dumps(out, sort_keys=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, usable_cores()])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--calibrated", action="store_true")
    args = ap.parse_args(argv)
    import cv2

    cv2.setNumThreads(1)  # one process, one core, as each worker reads
    walls: dict[int, list[float]] = {w: [] for w in args.workers}
    scored: dict[int, str] = {}
    frames = 0
    for _ in range(args.reps):
        for w in args.workers:
            t0 = time.perf_counter()
            by_design = score_by_design(args.directory, Recognizer(threads=1),
                                        calibrated=args.calibrated, workers=w)
            walls[w].append(time.perf_counter() - t0)
            frames = total(by_design.values()).frames
            counts = _counts(by_design)
            if scored.setdefault(w, counts) != counts:
                raise SystemExit(f"{w} workers scored the suite otherwise from one rep to the "
                                 "next")
    print(describe(environment()))
    print(f"{args.directory}: {frames} frames, {args.reps} reps, {usable_cores()} usable cores")
    base = None
    for w in args.workers:
        wall = float(np.median(walls[w]))
        rate = frames / wall
        base = base or rate
        print(f"  {w} worker(s): median {wall:.2f} s ({', '.join(f'{v:.2f}' for v in walls[w])})"
              f"  {rate:.1f} frames/s  x{rate / base:.2f} of {args.workers[0]} worker(s)")
    alike = len(set(scored.values())) == 1
    print("every worker count scored the suite alike" if alike else
          "THE WORKER COUNTS SCORED THE SUITE OTHERWISE")
    return 0 if alike else 1


if __name__ == "__main__":
    raise SystemExit(main())
