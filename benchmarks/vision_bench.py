"""Vision benchmark: accuracy on the validation designs and ms per frame on one core.

    python -m vision.dataset /work/vision-work/val --frames 40 --seed 7 --designs val
    python benchmarks/vision_bench.py /work/vision-work/val [--json]

Pins the process to one CPU core (where the OS allows), runs OpenCV and onnxruntime with one
thread, and reports recall of readable face-up cards, misread rate, false positives, face-down
recall and the median / 90th-percentile milliseconds per frame, overall and per design.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from vision.crops import extract_crops  # noqa: E402
from vision.evaluate import Score, labelled_images, score_frame  # noqa: E402
from vision.kernels import pin_to_one_core  # noqa: E402
from vision.proposals import outline, propose  # noqa: E402
from vision.recognize import DEFAULT_MODEL, Recognizer, load_image  # noqa: E402
from vision.selfcheck import describe, environment  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--threshold", type=float, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    pin_to_one_core()  # one core, onnxruntime loaded first (vision.kernels)
    cv2.setNumThreads(1)
    rec = Recognizer(args.model, threshold=args.threshold, threads=1)
    pairs = labelled_images(args.directory)
    total, per_design = Score(), defaultdict(Score)
    # the first pass only (the proposals and their first look), timed apart from the whole
    # frame; the hand walks and second looks come after it
    stage_ms: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, list[int]] = defaultdict(list)
    sizes = set()
    for img_path, lab_path in pairs:
        img = load_image(img_path)
        labels = json.loads(lab_path.read_text())
        sizes.add(f"{img.shape[1]}x{img.shape[0]}")
        rec.recognize(img)  # warm caches; the timed run follows
        result = rec.recognize(img)
        t0 = time.perf_counter()
        found = outline(img)
        ta = time.perf_counter()
        size = rec.pick_size(img, found)
        tb = time.perf_counter()
        frames = propose(img, found=found, size=size)
        t1 = time.perf_counter()
        rec.first_look(extract_crops(img, frames))
        t2 = time.perf_counter()
        stage_ms["outline"].append((ta - t0) * 1e3)
        stage_ms["pick size"].append((tb - ta) * 1e3)
        stage_ms["propose"].append((t1 - tb) * 1e3)
        stage_ms["crop+classify"].append((t2 - t1) * 1e3)
        counts["size hypotheses"].append(len(found.sizes))
        counts["proposals"].append(len(frames))
        s = score_frame(result, labels)
        total.add(s)
        per_design[labels.get("design", "?")].add(s)
    out = {
        # speed depends on the CPU (its int8 kernels above all): say which one measured it
        "environment": environment(),
        "directory": str(args.directory), "frame_sizes": sorted(sizes),
        "threshold": rec.threshold, "overall": total.summary(),
        "ms_per_frame_p90": round(float(np.percentile(total.elapsed_ms, 90)), 1),
        "first_pass_ms_median": {k: round(float(np.median(v)), 1)
                                 for k, v in stage_ms.items()},
        "counts_median": {k: float(np.median(v)) for k, v in counts.items()},
        "per_design": {k: v.summary() for k, v in sorted(per_design.items())},
        "confusions": sorted(total.confusions),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(describe(out["environment"]))
        print(total.report())
        print(f"ms/frame p90 {out['ms_per_frame_p90']}")
        print("first pass, ms (median): " + ", ".join(
            f"{k} {v}" for k, v in out["first_pass_ms_median"].items()))
        print("a frame (median): " + ", ".join(
            f"{k} {v:g}" for k, v in out["counts_median"].items()))
        for name, s in sorted(per_design.items()):
            print(f"  {name:14s} {s.line()}")
        print("confusions:", ", ".join(out["confusions"]) or "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
