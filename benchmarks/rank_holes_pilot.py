"""Pilot: do the rank glyphs of the cards reported as an 8 have holes, and the 3s misread as 8s not?

    python benchmarks/rank_holes_pilot.py r1009.npz r1039.npz ...   # vision.sweep --save-reads
    python benchmarks/rank_holes_pilot.py --threshold 0.995 --dump cards.jsonl r1009.npz ...

Most held-out misreads at the operating threshold are 3s read as 8s (C059's 3) and suits
within a colour. A 3 has no closed loop, an 8 has two, in any typeface: a check of the
glyph's topology would know nothing of the typeface. For every card the reader reports as
a 3 or an 8 (flat threshold, the committed merge) on a sweep's saved reads, the frame is
rendered again (the sweep's own seeding), the card warped upright to 240 px wide from its
reported corners, the top-left 0.3 x 0.3 card widths binarised (Otsu on the darkest
channel), the largest dark component of a glyph's size taken, and its holes counted
(inner contours of at least 0.03 % of the card's area). It prints the counts of
(truth -> read, holes) (-1: no glyph-sized component) and the right 8s' holes by width.

Sixty-third session, three spent held-out sweeps (seeds 1009 1039 1049): 8 of the 10 3s
misread as 8 have no hole, but so do 373 of the 1449 right 8s, and 156 more give no
component: blur closes the loops of small 8s, thin strokes break them open, and the
reported corners cut some glyphs off. Not usable as it is (``models/cards_v7.md``).

Sixty-fourth session: the largest component was often the suit (a solid heart outweighs a
thin 3); the glyph is now the topmost (:data:`TOPMOST`), and ``--dump`` writes each card's
two finer measures besides its holes: :func:`open_left` (where the ink begins at the rows
of the bowls) and :func:`counter_depth` (the deepest enclosed counter on the grey levels,
no threshold). On the eight spent sweeps 1009-1049 (13 3s misread as 8, 3731 right 8s)
neither tells them apart: the misread 3s are C059's, whose ball terminals reach back to
the bowls, so they measure closed on the left (median 0.07 of the width at the lower bowl;
at 0.3 or more, 3 of 13 misreads against 2.4 % of the right 8s) and their counters nearly
enclosed (depth median 0.38 against the right 8s' 0.63; under 0.1, 2 of 13 against 11.0 %).
Looked at, the reader's own crops of these 3s are sharp and plainly 3s: the reader, not the
picture, is what fails on them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision import readsfile  # noqa: E402
from vision.evaluate import match_reports  # noqa: E402
from vision.recognize import DEFAULT_MODEL, Recognizer  # noqa: E402
from vision.sweep import sweep_frame  # noqa: E402

#: The upright card's width (pixels) and the index region looked at (card widths).
WIDTH, REGION = 240, 0.30
#: Smallest glyph and hole, as shares of the upright card's width squared.
MIN_GLYPH, MIN_HOLE = 0.003, 0.0003
#: The rank glyph is the topmost glyph-sized component clear of the region's top and left
#: edges (sixty-fourth session); False: the largest (the sixty-third session's pilot).
TOPMOST = True


def _index_region(img: np.ndarray, corners: list) -> np.ndarray:
    """The darkest channel (a black or a red glyph) of the top-left :data:`REGION` of the
    card whose reported ``corners`` (its index corner first) lie in ``img``, warped upright
    to :data:`WIDTH` pixels a card width."""
    q = np.array(corners, np.float32)
    height = int(round(WIDTH * np.linalg.norm(q[3] - q[0]) / np.linalg.norm(q[1] - q[0])))
    upright = cv2.getPerspectiveTransform(
        q, np.float32([[0, 0], [WIDTH, 0], [WIDTH, height], [0, height]]))
    card = cv2.warpPerspective(img, upright, (WIDTH, height), flags=cv2.INTER_CUBIC)
    side = int(REGION * WIDTH)
    return card[:side, :side].min(axis=2)


def find_glyph(img: np.ndarray, corners: list) -> tuple[np.ndarray, np.ndarray,
                                                       tuple[int, int, int, int]] | None:
    """The upright index region (:func:`_index_region`) of the card whose reported
    ``corners`` lie in ``img``, its rank glyph as a mask cut to the glyph's bounding box, and
    that box ``(x, y, w, h)`` in the region: the topmost dark component (Otsu) of a glyph's
    size; ``None`` where there is none. Warped and labelled once for every measure below."""
    region = _index_region(img, corners)
    side = region.shape[0]
    _, dark = cv2.threshold(region, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(dark, connectivity=8)
    glyphs = [i for i in range(1, n)
              if stats[i, 2] <= 0.8 * side and stats[i, 3] <= 0.8 * side
              and stats[i, 4] >= MIN_GLYPH * WIDTH * WIDTH
              and (TOPMOST is False or (stats[i, 0] > 0 and stats[i, 1] > 0))]
    if not glyphs:
        return None
    # the rank lies above the suit; the largest component is often the suit (a solid heart
    # outweighs a thin 3), so the topmost is taken, clear of the region's top and left edges
    # (the card's edge, the felt beyond it)
    g = (min(glyphs, key=lambda i: stats[i, 1]) if TOPMOST
         else max(glyphs, key=lambda i: stats[i, 4]))
    x, y, w, h = (int(v) for v in stats[g, :4])
    return region, (labels[y:y + h, x:x + w] == g).astype(np.uint8), (x, y, w, h)


def rank_glyph(img: np.ndarray, corners: list) -> np.ndarray | None:
    """The rank glyph of the card whose reported ``corners`` (its index corner first) lie in
    ``img``, as a mask cut to its bounding box (:func:`find_glyph`); ``None`` where there is
    none."""
    found = find_glyph(img, corners)
    return None if found is None else found[1]


#: Margin around the rank glyph's box (pixels of the upright card) for :func:`counter_depth`.
COUNTER_MARGIN = 3


def counter_depth(img: np.ndarray, corners: list) -> float | None:
    """How much lighter than the ink around it the rank glyph's deepest enclosed counter is,
    as a share of the glyph's contrast, on the grey levels (no threshold): the grey-level
    fill of holes (morphological reconstruction by erosion from the box's border) less the
    glyph. An 8's counters are enclosed, so blur makes them shallower but keeps them; a 3's
    open onto the paper at its left, so they are not filled at all. ``None`` where no glyph
    is found.

    >>> card = np.full((400, 300, 3), 255, np.uint8)
    >>> quad = [[0, 0], [300, 0], [300, 400], [0, 400]]
    >>> for rank in "83":
    ...     card[:] = 255
    ...     _ = cv2.putText(card, rank, (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (0, 0, 0), 5)
    ...     print(rank, round(counter_depth(cv2.GaussianBlur(card, (0, 0), 3.0), quad), 1))
    8 0.8
    3 0.1
    """
    found = find_glyph(img, corners)
    return None if found is None else _depth(found[0], found[2])


def _depth(region: np.ndarray, box: tuple[int, int, int, int]) -> float:
    """:func:`counter_depth` of the glyph in ``box`` of the upright index ``region``."""
    x, y, w, h = box
    m = COUNTER_MARGIN
    window = region[max(y - m, 0):y + h + m, max(x - m, 0):x + w + m]
    ink = 255.0 - window.astype(np.float32)  # ink bright, paper dark: counters are pits
    fill = ink.copy()
    fill[1:-1, 1:-1] = ink.max()
    cross = cv2.getStructuringElement(cv2.MORPH_CROSS, (3, 3))
    while True:  # reconstruction by erosion: the pits not reached from the border stay up
        nxt = np.maximum(cv2.erode(fill, cross), ink)
        if np.array_equal(nxt, fill):
            break
        fill = nxt
    contrast = float(np.percentile(ink, 95) - np.percentile(ink, 5))
    return float((fill - ink).max()) / max(contrast, 1.0)


def rank_holes(img: np.ndarray, corners: list) -> int:
    """Holes in the rank glyph of the card whose reported ``corners`` (its index corner
    first) lie in ``img``; -1 where no component of a glyph's size is found.

    >>> card = np.full((400, 300, 3), 255, np.uint8)
    >>> _ = cv2.putText(card, "8", (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (0, 0, 0), 5)
    >>> quad = [[0, 0], [300, 0], [300, 400], [0, 400]]
    >>> rank_holes(card, quad)
    2
    >>> card[:] = 255
    >>> _ = cv2.putText(card, "3", (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (0, 0, 0), 5)
    >>> rank_holes(card, quad)
    0
    """
    glyph = rank_glyph(img, corners)
    return -1 if glyph is None else _holes(glyph)


def _holes(glyph: np.ndarray) -> int:
    """:func:`rank_holes` of a glyph mask cut to its box."""
    contours, hierarchy = cv2.findContours(np.pad(glyph, 1), cv2.RETR_CCOMP,
                                           cv2.CHAIN_APPROX_NONE)
    return sum(1 for c, h in zip(contours, hierarchy[0], strict=True)
               if h[3] >= 0 and cv2.contourArea(c) >= MIN_HOLE * WIDTH * WIDTH)


#: Rows of the glyph's upper and lower bowl (shares of its height) where :func:`open_left`
#: looks for ink from the left.
UPPER_BOWL, LOWER_BOWL = (0.22, 0.40), (0.60, 0.78)


def open_left(glyph: np.ndarray) -> tuple[float, float]:
    """How far in from the left of its bounding box (a share of its width) the ``glyph``'s
    ink begins, the median over the rows of its upper and of its lower bowl: an 8 is closed
    on the left at both bowls (near 0), a 3 open (about half its width). Blur fills a
    bowl's hole long before it closes a 3's open side.

    >>> card = np.full((400, 300, 3), 255, np.uint8)
    >>> quad = [[0, 0], [300, 0], [300, 400], [0, 400]]
    >>> for rank in "83":
    ...     card[:] = 255
    ...     _ = cv2.putText(card, rank, (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 2.0, (0, 0, 0), 5)
    ...     print(rank, [round(v, 1) for v in open_left(rank_glyph(card, quad))])
    8 [0.0, 0.0]
    3 [0.4, 0.7]
    """
    h, w = glyph.shape
    first = np.where(glyph.any(axis=1), glyph.argmax(axis=1), w) / max(w, 1)
    return tuple(float(np.median(first[int(a * h):max(int(b * h), int(a * h) + 1)]))
                 for a, b in (UPPER_BOWL, LOWER_BOWL))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reads", type=Path, nargs="+", help="vision.sweep --save-reads files")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--threshold", type=float, default=None,
                    help="merge at this flat threshold (default: the reader's)")
    ap.add_argument("--dump", type=Path, default=None,
                    help="one JSON line a card read as 3 or 8: its truth, read, confidence, "
                         "width, holes and open_left")
    args = ap.parse_args(argv)
    rec = Recognizer(args.model, threshold=0.5)
    threshold = rec.model_threshold if args.threshold is None else args.threshold
    bar = rec.extra_walk_bar()
    counts: Counter = Counter()
    by_width: dict[tuple[int, int], Counter] = {}
    bins = ((0, 45), (45, 55), (55, 70), (70, 90), (90, 10_000))
    dump = args.dump.open("w") if args.dump else None
    for path in args.reads:
        meta, frames = readsfile.load(path)
        readsfile.check_identity(meta, readsfile.reader_identity(rec), path)
        seed = int(meta["seed"])
        for packed, labels in frames:
            merged = rec.merge(readsfile.at_bar(readsfile.unpack(packed), bar), threshold)
            cards = merged["cards"]
            if not any(c["code"][0] in "38" for c in cards):
                continue
            img, _ = sweep_frame(*labels["sweep_frame"], seed)
            for card, (best, _) in zip(cards, match_reports(cards, labels["cards"]),
                                       strict=True):
                if card["code"][0] not in "38" or best is None:
                    continue
                kind = f"{labels['cards'][best]['code'][0]}->{card['code'][0]}"
                found = find_glyph(img, card["corners"])  # (warped once a card)
                holes = -1 if found is None else _holes(found[1])
                counts[kind, holes] += 1
                width = float(np.linalg.norm(np.subtract(card["corners"][1],
                                                         card["corners"][0])))
                if kind == "8->8":
                    span = next(b for b in bins if b[0] <= width < b[1])
                    by_width.setdefault(span, Counter())[holes] += 1
                if dump is not None:
                    dump.write(json.dumps({
                        "reads": path.name, "frame": labels["sweep_frame"], "kind": kind,
                        "code": card["code"], "confidence": card["confidence"],
                        "width": round(width, 1), "holes": holes,
                        "open_left": None if found is None else open_left(found[1]),
                        "counter_depth": None if found is None else _depth(found[0], found[2]),
                    }) + "\n")
    if dump is not None:
        dump.close()
    for (kind, holes), n in sorted(counts.items()):
        print(f"{kind} holes {holes:>2}: {n}")
    for span in bins:
        got = by_width.get(span, Counter())
        print(f"right 8s {span[0]}-{span[1]} px: " + ", ".join(
            f"{h} holes {n}" for h, n in sorted(got.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
