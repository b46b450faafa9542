"""The reader on the true index corners: is a missed card's doubt a matter of where it was cut?

    python benchmarks/true_corner_reads.py DIR [--frames N] [--model M] [--threshold T]

For each readable face-up card of the first ``N`` labelled frames of ``DIR`` (the format of
``sample_images/``), its index corners that are at least 85 % visible are cut exactly where
the labels put them (true corner point, axes and card size) and read by the reader alone
(one look) and with the second look (:meth:`vision.recognize.Recognizer.second_look`). The
cards are grouped by what the pipeline made of them (``benchmarks/vision_misses.py``'s
kinds) and each group's share read at the threshold or more at the true corner is printed.

Then, per corner of the cards reported or read below the threshold, the pipeline's best
candidate of the right code on that corner (within :data:`vision_misses.ON_CORNER` card
widths, axes within ~25 degrees) against the truth: the share at the threshold or more of
the candidate cut again, the true frame, the true point with the candidate's size and axes,
and the candidate's point and axes with the true size; the candidate's distance from the
true point (card widths) and its size over the true size, and the true frame's share by
bands of that size ratio. A diagnosis on labelled frames (choose nothing on validation
frames with it); not a speed benchmark.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vision_misses import ON_CORNER, classify_card  # noqa: E402

from vision.codes import CLASS_INDEX  # noqa: E402
from vision.crops import extract_crops  # noqa: E402
from vision.evaluate import labelled_images  # noqa: E402
from vision.proposals import IndexFrame  # noqa: E402
from vision.recognize import DEFAULT_MODEL, Recognizer, load_image  # noqa: E402

#: Index corners at least this visible are cut (the labels' readability rule).
VISIBLE = 0.85
SIZE_BANDS = ((0.0, 0.9), (0.9, 0.97), (0.97, 1.03), (1.03, 1.1), (1.1, 1.2), (1.2, np.inf))


def true_frames(card: dict) -> list[IndexFrame]:
    """The card's visible index corners as the labels put them: point, axes, width, height.

    >>> card = {"corners": [[10, 10], [70, 10], [70, 97], [10, 97]], "card_width_px": 60.0,
    ...         "index_visible": [1.0, 0.2]}
    >>> [(f.point.tolist(), f.x_axis.tolist(), f.height) for f in true_frames(card)]
    [([10.0, 10.0], [1.0, 0.0], 87.0)]
    """
    q = np.array(card["corners"], np.float64)
    out = []
    for (a, b, c), visible in zip(((q[0], q[1], q[3]), (q[2], q[3], q[1])),
                                  card["index_visible"], strict=True):
        if visible < VISIBLE:
            continue
        x = (b - a) / np.linalg.norm(b - a)
        y = (c - a) / np.linalg.norm(c - a)
        out.append(IndexFrame(a, x, y, float(card["card_width_px"]),
                              float(np.linalg.norm(c - a)), True))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--threshold", type=float, default=None)
    args = ap.parse_args(argv)
    rec = Recognizer(args.model)
    thr = args.threshold if args.threshold is not None else rec.threshold
    cards: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    corners: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    sure_wrong = 0
    for image, label_file in labelled_images(args.directory)[:args.frames]:
        labels = json.loads(label_file.read_text())
        img = load_image(image)
        reads = rec.read(img)
        result = rec.merge(reads, thr)
        for card in labels["cards"]:
            if card["code"] == "face_down" or not card.get("readable", True):
                continue
            frames = true_frames(card)
            if not frames:
                continue
            kind, _ = classify_card(card, reads, result, thr)
            code = CLASS_INDEX[card["code"]]
            one = rec.classify(extract_crops(img, frames))
            three = rec.second_look(img, frames, one.copy())
            wrong = bool(((three.argmax(1) != code) & (three.max(1) >= thr)).any())
            sure_wrong += wrong
            cards[kind].append((float(one[:, code].max()), float(three[:, code].max()),
                                float(wrong)))
            if kind not in ("reported", "right code below threshold"):
                continue
            w = float(card["card_width_px"])
            for truth in frames:
                near = [r for r in reads
                        if np.linalg.norm(r.frame.point - truth.point) < ON_CORNER * w
                        and float(np.dot(r.frame.x_axis, truth.x_axis)) > 0.9]
                right = [r for r in near if r.cls == code]
                if not right:
                    continue
                f = max(right, key=lambda r: r.prob).frame
                cuts = [f, truth,
                        IndexFrame(truth.point, f.x_axis, f.y_axis, f.width, f.height, True),
                        IndexFrame(f.point, f.x_axis, f.y_axis, truth.width, truth.height,
                                   True)]
                p = rec.classify(extract_crops(img, cuts))[:, code]
                corners[kind].append((*p.tolist(),
                                      float(np.linalg.norm(f.point - truth.point)) / w,
                                      f.width / truth.width))
    print(f"{args.directory}: threshold {thr}; cards whose true index corner reads it "
          f"(one look / three looks)")
    for kind, rows in cards.items():
        v = np.array(rows)
        print(f"  {kind:28s} n={len(v):5d}  {np.mean(v[:, 0] >= thr):6.1%} / "
              f"{np.mean(v[:, 1] >= thr):6.1%}  (median of three looks {np.median(v[:, 1]):.3f})")
    print(f"  read surely wrong at the true corner: {sure_wrong}")
    print("per corner: candidate cut again / true frame / true point / true size; "
          "candidate's distance (card widths) and size ratio")
    for kind, rows in corners.items():
        v = np.array(rows)
        sure = (v[:, :4] >= thr).mean(0)
        print(f"  {kind:28s} n={len(v):5d}  " + " / ".join(f"{s:.1%}" for s in sure)
              + f"  distance median {np.median(v[:, 4]):.3f} (p90 {np.percentile(v[:, 4], 90):.3f})"
              f"  size ratio median {np.median(v[:, 5]):.3f} "
              f"(quartiles {np.percentile(v[:, 5], 25):.3f}-{np.percentile(v[:, 5], 75):.3f})")
        bands = []
        for lo, hi in SIZE_BANDS:
            s = (v[:, 5] >= lo) & (v[:, 5] < hi)
            if s.any():
                bands.append(f"{lo}-{hi}: {np.mean(v[s, 1] >= thr):.1%} of {int(s.sum())}")
        print("    true frame by size ratio: " + ", ".join(bands))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
