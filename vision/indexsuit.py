"""How tall a deck prints the suit symbol under the rank in its index, measured on its faces.

The twentieth session found the held-out decks' suit misreads where that symbol is small
(under 0.10 card widths tall): at 720p a 50 px card gives it 5 px. A training label that asks
for the exact suit of such a crop teaches the reader to guess (``models/cards_v4.md``,
"Where the surer readers go wrong: the labels"). Training needs the symbol's size for every
design it draws: procedural decks know it from their draws
(:func:`vision.procedural.index_suit_span`), aisleriot designs and deck directories do not,
so it is measured here, the same way for all, from the ink of a few number cards' top-left
index (the rank glyph on top, the suit symbol the next blob below it), and checked against
the procedural decks' own figures in ``tests/test_indexsuit.py``.

    >>> top, bottom = suit_span("proc:3:17")   # its draws: from 0.291, 0.150 tall
    >>> round(top, 3), round(bottom - top, 3)
    (0.294, 0.159)
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from vision.designs import CardDesign, get_design

#: Number cards measured (their index corner holds only rank and suit; the court cards'
#: pictures may reach it), one of each suit.
CODES = ("2S", "5H", "8D", "4C", "6S", "9H", "3D", "7C")
#: The index region searched, in card widths (u across, v down from the top-left corner).
REGION_U, REGION_V = 0.3, 0.62
#: A pixel is ink when it differs from the card stock by at least this (summed over the three
#: colour channels).
INK_STEP = 120
#: Ink blobs smaller than this share of the region are specks (anti-aliasing, a border's dots).
MIN_BLOB = 0.002


def _blobs(face: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Ink blobs (x, y, w, h) of the index region of an RGBA face, top-down."""
    w = face.shape[1]
    region = face[: int(REGION_V * w), : int(REGION_U * w)]
    rgb = region[..., :3].astype(np.int32)
    opaque = region[..., 3] > 200
    # the stock: the commonest colour of the card's opaque pixels (a face is mostly stock)
    flat = face[..., :3][face[..., 3] > 200].reshape(-1, 3).astype(np.int32) // 8
    keys, counts = np.unique(flat[:, 0] * 1024 + flat[:, 1] * 32 + flat[:, 2],
                             return_counts=True)
    k = int(keys[counts.argmax()])
    stock = np.array([k // 1024, (k // 32) % 32, k % 32]) * 8 + 4
    ink = ((np.abs(rgb - stock).sum(2) >= INK_STEP) & opaque).astype(np.uint8)
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    floor = MIN_BLOB * ink.size
    rh, rw = ink.shape
    found = []
    for i in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        # a border line or frame spans the region; a pip of the card's middle is cut by
        # the region's right edge
        if area >= floor and bw < 0.8 * rw and bh < 0.8 * rh and x + bw < rw:
            found.append((x, y, bw, bh))
    return sorted(found, key=lambda b: b[1])


def _suit_of(blobs: list[tuple[int, int, int, int]]) -> tuple[int, int] | None:
    """(top, bottom) in pixels of the suit symbol under the rank: the rank is the blob
    nearest the corner (least x + y) among the three top-most, and the suit the highest blob
    that starts below the rank's middle and overlaps it across; ``None`` without one."""
    if len(blobs) < 2:
        return None
    # the rank: among the three top-most blobs, the one nearest the corner
    rank = min(blobs[:3], key=lambda b: b[0] + b[1])
    rank_mid = rank[1] + rank[3] / 2
    below = [b for b in blobs if b[1] > rank_mid and b[0] < rank[0] + rank[2]
             and b[0] + b[2] > rank[0]]
    if not below:
        return None
    suit = min(below, key=lambda b: b[1])
    return suit[1], suit[1] + suit[3]


def measure(design: CardDesign) -> tuple[float, float]:
    """(top, bottom) of the index suit symbol in card widths from the card's top edge: the
    median over :data:`CODES` (NaNs when no card shows one)."""
    w = design.size[0]
    spans = [s for s in (_suit_of(_blobs(design.faces[c])) for c in CODES) if s is not None]
    if not spans:
        return float("nan"), float("nan")
    top, bottom = np.median(np.array(spans, float), axis=0)
    return float(top) / w, float(bottom) / w


@lru_cache(maxsize=4096)
def suit_span(name: str) -> tuple[float, float]:
    """:func:`measure` of the design called ``name`` (:func:`vision.designs.get_design`)."""
    return measure(get_design(name))

