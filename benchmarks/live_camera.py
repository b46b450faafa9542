"""A live camera read as `recognize` reads one: how many frames it reads, and how late.

    python benchmarks/live_camera.py DIR [--fps 25] [--seconds 30]

Serves the JPEG frames of ``DIR`` (a labelled directory, `vision.evaluate.labelled_images`;
in a loop) as an MJPEG camera over HTTP on this machine at ``--fps`` (`vision.mjpeg`), as IP
cameras serve them, and reads it for ``--seconds`` with `vision.stream.LiveStream` and one
single-threaded recogniser, as ``monster-match recognize URL`` does. Prints the frames sent
and read, the frames skipped between reads, the median and 90th percentile of the reading
time, and of the latency: from the moment the camera sent a frame to the moment its result
was ready. The camera and the reader share this machine (the camera's thread is light: it
writes bytes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.evaluate import labelled_images  # noqa: E402
from vision.mjpeg import MjpegCamera  # noqa: E402
from vision.recognize import Recognizer  # noqa: E402
from vision.stream import LiveStream  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--fps", type=float, default=25.0)
    ap.add_argument("--seconds", type=float, default=30.0)
    args = ap.parse_args(argv)
    jpegs = [p.read_bytes() for p, _ in labelled_images(args.directory)
             if p.suffix.lower() in (".jpg", ".jpeg")]
    if not jpegs:
        ap.error(f"{args.directory}: no labelled JPEG frames")
    rec = Recognizer(threads=1)
    camera = MjpegCamera(jpegs, args.fps)
    read_ms, late_ms, skipped = [], [], []
    try:
        with LiveStream(camera.url) as live:
            end = time.perf_counter() + args.seconds
            for number, skip, frame in live:
                t0 = time.perf_counter()
                rec.recognize(frame)
                done = time.perf_counter()
                read_ms.append((done - t0) * 1e3)
                late_ms.append((done - camera.sent[number]) * 1e3)
                skipped.append(skip)
                if done >= end:
                    break
    finally:
        camera.close()
    sent = len(camera.sent)
    print(f"camera: {sent} frames sent at {args.fps:g} fps over {args.seconds:g} s "
          f"({len(jpegs)} distinct, 1280x720 as labelled)")
    print(f"read: {len(read_ms)} frames ({100 * len(read_ms) / max(sent, 1):.0f} %), "
          f"{len(read_ms) / args.seconds:.1f} a second; skipped between reads: median "
          f"{np.median(skipped):.0f}, max {max(skipped)}")
    print(f"reading time: median {np.median(read_ms):.1f} ms, p90 "
          f"{np.percentile(read_ms, 90):.1f} ms")
    print(f"latency, frame sent to its result: median {np.median(late_ms):.1f} ms, p90 "
          f"{np.percentile(late_ms, 90):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
