"""How well :mod:`vision.quality` measures a frame's blur and card size, and what it costs.

    python benchmarks/image_quality.py DIR [DIR ...]

On labelled frames whose labels record what the renderer did (``"photometric"``: the Gaussian
blur's sigma, the motion blur's length; frames rendered since 2026-11-30) and the cards' true
widths: the measured edge blur by the blur applied (median, and its correlation with the
applied sigma over the Gaussian-blurred frames), the motion streak by kind of blur, how often
each kind is warned of, the measured card width against the labels' (the outline's
best-supported size, as :func:`vision.quality.measure` uses it without reported cards), and
the median / 90th-percentile milliseconds of ``measure`` on one core (the outline is the
pipeline's own and not counted). Recall by warning needs the reads: ``monster-match
vision-eval DIR`` prints it (``by_image_warning`` with ``--json``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from vision.evaluate import labelled_images  # noqa: E402
from vision.proposals import outline  # noqa: E402
from vision.quality import measure  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directories", type=Path, nargs="+", metavar="DIR")
    args = ap.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    cv2.setNumThreads(1)
    rows = []
    for directory in args.directories:
        for img_path, lab_path in labelled_images(directory):
            labels = json.loads(lab_path.read_text())
            photo = labels.get("photometric")
            if photo is None:
                continue
            img = cv2.imread(str(img_path))
            found = outline(img)
            measure(img, found)  # warm
            t0 = time.perf_counter()
            q = measure(img, found)
            ms = (time.perf_counter() - t0) * 1000
            widths = [c["card_width_px"] for c in labels["cards"] if "card_width_px" in c]
            kind = ("motion" if photo.get("motion_blur_px") else
                    "gaussian" if photo.get("gaussian_blur") else "none")
            rows.append({"kind": kind, "sigma": float(photo.get("gaussian_blur") or 0.0),
                         "motion_px": int(photo.get("motion_blur_px") or 0), "q": q, "ms": ms,
                         "true_width": float(np.median(widths)) if widths else None})
    if not rows:
        print("no labelled frames with a \"photometric\" record")
        return 1
    print(f"frames {len(rows)}")
    for kind in ("none", "gaussian", "motion"):
        sel = [r for r in rows if r["kind"] == kind]
        blurs = [r["q"].edge_blur_px for r in sel if r["q"].edge_blur_px is not None]
        streaks = [r["q"].streak for r in sel if r["q"].streak is not None]
        if not sel:
            continue
        warned = {w: sum(w in r["q"].warnings for r in sel)
                  for w in ("blurred", "motion_blur", "small_cards")}
        print(f"  {kind:<8} {len(sel):4d} frames  edge blur median "
              f"{np.median(blurs) if blurs else float('nan'):.2f} px  streak median "
              f"{np.median(streaks) if streaks else float('nan'):.2f}  (unmeasured "
              f"{len(sel) - len(blurs)})  warned: "
              + ", ".join(f"{w} {n}" for w, n in warned.items()))
    gauss = [r for r in rows if r["kind"] == "gaussian" and r["q"].edge_blur_px is not None]
    if len(gauss) > 2:
        applied = np.array([r["sigma"] for r in gauss])
        measured = np.array([r["q"].edge_blur_px for r in gauss])
        print(f"  gaussian: applied sigma against measured blur, correlation "
              f"{np.corrcoef(applied, measured)[0, 1]:.3f}")
        for lo, hi in ((0.4, 0.7), (0.7, 1.0), (1.0, 1.3)):
            m = (applied >= lo) & (applied < hi)
            if m.any():
                print(f"    sigma {lo}-{hi}: {m.sum():3d} frames, measured median "
                      f"{np.median(measured[m]):.2f} px")
    motion = [r for r in rows if r["kind"] == "motion" and r["q"].edge_blur_px is not None]
    for k in sorted({r["motion_px"] for r in motion}):
        sel = [r for r in motion if r["motion_px"] == k]
        print(f"  motion {k} px: {len(sel):3d} frames, measured blur median "
              f"{np.median([r['q'].edge_blur_px for r in sel]):.2f} px")
    sized = [r for r in rows if r["true_width"] and r["q"].card_width_px]
    if sized:
        ratio = np.array([r["q"].card_width_px / r["true_width"] for r in sized])
        print(f"card width (outline) / labels' median: {np.median(ratio):.3f}, within 15 % on "
              f"{100 * np.mean(np.abs(ratio - 1) < 0.15):.1f} % of {len(sized)} frames")
    ms = [r["ms"] for r in rows]
    print(f"measure ms/frame median {np.median(ms):.2f} p90 {np.percentile(ms, 90):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
