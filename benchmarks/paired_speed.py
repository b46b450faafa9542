"""Paired speed of two source trees: each frame recognised by both, back to back, on one core.

    git worktree add /tmp/before HEAD~3
    python benchmarks/paired_speed.py /tmp/before . DIR [--frames 160] [--reps 2] [--core 0]
    python benchmarks/paired_speed.py . . DIR --calibrated-second
    python benchmarks/paired_speed.py . . DIR --calibrated --models A.onnx B.onnx
    python benchmarks/paired_speed.py . . DIR --models A.onnx B.onnx

Two worker processes, one per tree (each imports ``vision`` from its own tree), pinned to the
same core with one OpenCV and one onnxruntime thread, hold the first ``--frames`` labelled
frames of ``DIR`` (``vision.evaluate.labelled_images``). The driver asks each in turn to
``Recognizer.recognize`` frame i, alternating which goes first, ``--reps`` times over. Prints
the median ms a frame of each tree and the median of the per-frame ratios (second / first).
With ``--calibrated-second`` the second reads each frame with its table's card sizes (its
labels' homography, :func:`vision.tablesize.from_labels`), as a calibrated table's camera
does: the two may be one tree; with ``--calibrated`` both read so. With ``--models A B`` the
first reads with reader ``A`` and the second with ``B`` (each with the gate its ``.json``
names) instead of the bundled one.

Why paired: on a shared machine one tree's whole-set medians vary by 5-10 ms from run to run,
more than most changes; two runs of the same frame a few milliseconds apart see the same
load, so their ratio holds still (three pairs of runs in the twenty-second session: 0.942,
0.943, 0.944).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

_WORKER = r"""
import json, os, sys, time, pathlib
tree, directory, frames, core = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
calibrated = sys.argv[5] == "1"
model = sys.argv[6]
sys.path.insert(0, tree)
# onnxruntime loaded before the pin: loaded in a process already held to one core, it does
# not use AMX (vision.kernels.gemm_pays), which no table's process is
import onnxruntime
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {core})
import cv2
cv2.setNumThreads(1)
import vision
from vision.evaluate import labelled_images
from vision.recognize import Recognizer, load_image
if not pathlib.Path(vision.__file__).resolve().is_relative_to(pathlib.Path(tree).resolve()):
    sys.exit(f"vision was imported from {vision.__file__}, not from {tree}")
pairs = labelled_images(pathlib.Path(directory))[:frames]
images = [load_image(p) for p, _ in pairs]
if calibrated:
    from vision.tablesize import from_labels
    tables = [from_labels(json.loads(lab.read_text())) for _, lab in pairs]
else:
    tables = [None] * len(images)
rec = Recognizer(model, threads=1) if model else Recognizer(threads=1)
for img, table in list(zip(images, tables))[:3]:  # warm up
    rec.recognize(img, table)
print(len(images), flush=True)
for line in sys.stdin:
    t = time.perf_counter()
    rec.recognize(images[int(line)], tables[int(line)])
    print(time.perf_counter() - t, flush=True)
"""


class _Worker:
    """One tree's recogniser in its own process, timing the frames it is asked for."""

    def __init__(self, tree: Path, directory: Path, frames: int, core: int,
                 calibrated: bool = False, model: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(tree.resolve()), str(directory), str(frames),
             str(core), "1" if calibrated else "0",
             # absolute, not resolved: a model linked into a directory of its own reads the
             # .json beside the link (another gate, walk places), not the target's
             str(Path(model).absolute()) if model else ""], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, cwd=str(tree), env={**os.environ, "PYTHONPATH": ""})
        first = self.proc.stdout.readline()
        if not first.strip():
            raise RuntimeError(f"{tree}: the worker did not start (see its error above)")
        self.frames = int(first)

    def time(self, index: int) -> float:
        self.proc.stdin.write(f"{index}\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def paired_times(first: Path, second: Path, directory: Path, frames: int, reps: int,
                 core: int, calibrated_second: bool = False,
                 models: tuple[Path | None, Path | None] = (None, None),
                 calibrated_first: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Seconds per frame of each tree, ``(frames * reps,)`` each, pair by pair."""
    workers = [_Worker(first, directory, frames, core, calibrated_first, models[0]),
               _Worker(second, directory, frames, core, calibrated_second, models[1])]
    try:
        n = min(w.frames for w in workers)
        if not n:
            raise ValueError(f"{directory}: no labelled frames")
        times: list[list[float]] = [[], []]
        for rep in range(reps):
            for i in range(n):
                for k in ((0, 1) if (i + rep) % 2 == 0 else (1, 0)):
                    times[k].append(workers[k].time(i))
    finally:
        for w in workers:
            w.close()
    return np.array(times[0]), np.array(times[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("first", type=Path, help="source tree (e.g. a git worktree of the base)")
    ap.add_argument("second", type=Path, help="source tree compared with it")
    ap.add_argument("directory", type=Path, help="labelled frames")
    ap.add_argument("--frames", type=int, default=160)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--core", type=int, default=0)
    ap.add_argument("--calibrated-second", action="store_true",
                    help="the second reads each frame with its labels' table's card sizes")
    ap.add_argument("--calibrated", action="store_true",
                    help="both read each frame with its labels' table's card sizes")
    ap.add_argument("--models", type=Path, nargs=2, default=(None, None), metavar=("A", "B"),
                    help="the readers of the first and the second (default: the bundled one)")
    args = ap.parse_args(argv)
    a, b = paired_times(args.first, args.second, args.directory, args.frames, args.reps,
                        args.core, args.calibrated_second or args.calibrated,
                        tuple(args.models), calibrated_first=args.calibrated)
    a, b = a * 1e3, b * 1e3
    print(f"{len(a)} paired frames: first median {np.median(a):.1f} ms (p90 "
          f"{np.percentile(a, 90):.1f}), second median {np.median(b):.1f} ms (p90 "
          f"{np.percentile(b, 90):.1f}); median per-frame ratio second / first "
          f"{np.median(b / a):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
