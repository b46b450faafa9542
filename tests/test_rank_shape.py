"""benchmarks/rank_holes_pilot.py: the rank glyph's shape measures (a pilot that tells a 3
from an 8 by the glyph's topology, whatever the typeface)."""

from __future__ import annotations

import doctest

import cv2
import numpy as np


def test_the_glyph_measures_tell_a_drawn_8_from_a_drawn_3(bench_script) -> None:
    """Holes, the ink's start at the bowls and the counters' depth, on a Hershey 8 and 3 drawn
    on a card, sharp and blurred; the glyph is the rank above the suit, not the larger suit
    below it."""
    mod = bench_script("rank_holes_pilot")
    assert doctest.testmod(mod).failed == 0
    quad = [[0, 0], [300, 0], [300, 400], [0, 400]]
    measured = {}
    for rank in "83":
        card = np.full((400, 300, 3), 255, np.uint8)
        cv2.putText(card, rank, (10, 50), cv2.FONT_HERSHEY_SIMPLEX, 1.6, (0, 0, 0), 4)
        cv2.circle(card, (35, 85), 22, (0, 0, 200), -1)  # a solid suit, larger than the rank
        sharp, blurred = card, cv2.GaussianBlur(card, (0, 0), 2.0)
        glyph = mod.rank_glyph(sharp, quad)
        assert glyph is not None and glyph.shape[0] > glyph.shape[1]  # the rank, not the suit
        measured[rank] = (mod.rank_holes(sharp, quad), mod.open_left(glyph),
                          mod.counter_depth(blurred, quad))
    assert measured["8"][0] == 2 and measured["3"][0] == 0
    assert max(measured["8"][1]) < 0.15 < max(measured["3"][1])
    assert measured["3"][2] < 0.2 < measured["8"][2]
    blank = np.full((400, 300, 3), 255, np.uint8)
    assert mod.rank_glyph(blank, quad) is None and mod.counter_depth(blank, quad) is None
    assert mod.rank_holes(blank, quad) == -1
