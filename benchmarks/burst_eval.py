"""Bursts against single frames: recall and misreads of the same scenes, one frame or several
of a still camera fused (:mod:`vision.burst`), at several thresholds, in one run.

    python -m vision.dataset /work/vision-work/valb --frames 40 --seed 7 --designs val --burst 5
    python benchmarks/burst_eval.py /work/vision-work/valb [--save reads.json]

Every frame is read once, at the model's operating threshold (one core, one thread); the first
``k`` frames of each scene are then fused for each ``k`` and scored with the reports at or
above each threshold of ``--thresholds`` kept, and read in ``--min-frames`` of the ``k``
frames (all of them when ``k`` is smaller). ``k = 1`` is the single-frame pipeline. The
misread bound is the 95 % upper confidence bound the operating threshold is chosen by
(:func:`vision.calibrate.misread_upper_bound`). ``--load`` scores reads saved before.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from vision.burst import fuse  # noqa: E402
from vision.calibrate import misread_upper_bound  # noqa: E402
from vision.evaluate import burst_frames, labelled_images, score_frame, total  # noqa: E402
from vision.kernels import pin_to_one_core  # noqa: E402
from vision.recognize import DEFAULT_MODEL, Recognizer, load_image  # noqa: E402


def read_bursts(directory: Path, model: Path) -> list[dict]:
    rec = Recognizer(model)
    rows = []
    for img, lab in labelled_images(directory):
        rows.append({"image": img.name, "labels": json.loads(lab.read_text()),
                     "results": [rec.recognize(load_image(f)) for f in burst_frames(img)]})
    return rows


def fused(results: list[dict], threshold: float, agree: int) -> dict:
    """The burst's fused result; one frame's own result (its reports at ``threshold``) for a
    burst of one, so that ``k = 1`` is exactly the single-frame pipeline."""
    if len(results) == 1:
        return {**results[0], "cards": [c for c in results[0]["cards"]
                                        if c["confidence"] >= threshold]}
    return fuse(results, threshold, agree)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path, nargs="?")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--thresholds", default="0.99,0.993,0.995,0.997,0.999")
    ap.add_argument("--min-frames", type=int, default=None,
                    help="frames that must read a card (default: the model's burst setting)")
    ap.add_argument("--save", type=Path, help="write every frame's reads here (JSON)")
    ap.add_argument("--load", type=Path, nargs="*", default=[],
                    help="score reads saved with --save instead of reading a directory")
    args = ap.parse_args(argv)
    pin_to_one_core()  # one core, onnxruntime loaded first (vision.kernels)
    cv2.setNumThreads(1)
    rows: list[dict] = []
    for f in args.load:
        rows += json.loads(f.read_text())
    if args.directory is not None:
        rows += read_bursts(args.directory, args.model)
    if not rows:
        ap.error("give a directory of bursts or --load")
    if args.save:
        args.save.write_text(json.dumps(rows))
    agree = args.min_frames or Recognizer(args.model).burst_min_frames
    longest = max(len(r["results"]) for r in rows)
    print(f"{len(rows)} scenes, bursts of up to {longest} frames, a card read in "
          f"{agree} of them (or all of a shorter burst)")
    for k in range(1, longest + 1):
        ms = [sum(x["elapsed_ms"] for x in r["results"][:k]) for r in rows]
        print(f"k = {k}: ms per burst median {np.median(ms):.1f}")
        for thr in (float(t) for t in args.thresholds.split(",")):
            s = total(score_frame(fused(r["results"][:k], thr, agree), r["labels"])
                      for r in rows)
            bound = misread_upper_bound(s.misread, s.reported)
            print(f"  {thr:.3f}  {s.line()}  misread bound {100 * bound:.3f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
