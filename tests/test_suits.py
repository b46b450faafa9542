"""Suit symbols of random proportions (vision.suits) and the procedural decks that use them."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from vision.suits import SuitShapes


def _ink(shapes: SuitShapes, suit: str, size: float = 60, flip: bool = False) -> np.ndarray:
    img = np.zeros((100, 100), np.uint8)
    shapes.draw(img, suit, 50, 50, size, (255,), flip=flip)
    return img > 127


@pytest.mark.parametrize("seed", range(20))
def test_every_suit_fills_the_height_asked_for_centred(seed: int) -> None:
    shapes = SuitShapes.random(np.random.default_rng(seed))
    for suit in "SHDC":
        for outline in shapes.outlines(suit):
            assert outline.ndim == 2 and outline.shape[1] == 2
        pts = np.concatenate(shapes.outlines(suit))
        assert pts[:, 1].min() == pytest.approx(-1.0) and pts[:, 1].max() == pytest.approx(1.0)
        assert pts[:, 0].min() == pytest.approx(-pts[:, 0].max())
        ys, xs = np.nonzero(_ink(shapes, suit))
        assert 57 <= ys.max() - ys.min() + 1 <= 62, (suit, ys.min(), ys.max())
        assert abs((ys.max() + ys.min()) / 2 - 50) <= 1.0
        assert 0.25 < (xs.max() - xs.min()) / (ys.max() - ys.min()) < 1.5
        # a solid shape: most of its bounding box is ink, none of it stray
        assert 0.3 < _ink(shapes, suit).sum() / ((np.ptp(xs) + 1) * (np.ptp(ys) + 1)) < 0.95


def test_the_four_suits_are_told_apart_and_a_heart_is_a_spade_turned_over() -> None:
    """The shapes that the reader must tell apart overlap far less than a shape with itself,
    and spades point up where hearts point down (ink at the top row: narrow for a spade)."""
    shapes = SuitShapes.random(np.random.default_rng(3))
    masks = {s: _ink(shapes, s) for s in "SHDC"}
    for a in "SHDC":
        for b in "SHDC":
            if a < b:
                iou = (masks[a] & masks[b]).sum() / (masks[a] | masks[b]).sum()
                assert iou < 0.8, (a, b, iou)
    heart, spade = masks["H"], masks["S"]
    rows_h = np.flatnonzero(heart.any(1))
    rows_s = np.flatnonzero(spade.any(1))
    assert heart[rows_h[-1]].sum() < heart[rows_h[0]].sum()   # heart: wide top, tip below
    assert spade[rows_s[0]].sum() < spade[rows_s[-1]].sum()   # spade: tip above, foot below
    # flipped about row 50: row r lands on row 100 - r
    mirrored = np.roll(_ink(shapes, "S", flip=True)[::-1], 1, axis=0)
    assert (mirrored ^ spade).mean() < 0.003


def test_decks_differ_in_their_suits() -> None:
    """Two seeds give differently proportioned suits; one seed always the same."""
    a, b = (SuitShapes.random(np.random.default_rng(s)) for s in (1, 2))
    assert a == SuitShapes.random(np.random.default_rng(1))
    for suit in "SHDC":
        assert (_ink(a, suit) ^ _ink(b, suit)).mean() > 0.01
    with pytest.raises(ValueError, match="unknown suit"):
        a.outlines("X")


def test_a_varied_suit_deck_is_its_plain_twin_with_other_suits() -> None:
    """``proc:F:S:suits`` is deck ``proc:F:S`` with its suit symbols redrawn: a court card
    (no pips) differs only in its two index corners, the pips of the others differ too, the
    back is the same; an unknown suffix is refused."""
    from vision.designs import get_design

    plain, varied = get_design("proc:1:7"), get_design("proc:1:7:suits")
    assert plain.name == "proc:1:7" and varied.name == "proc:1:7:suits"
    assert plain.faces.keys() == varied.faces.keys()
    for code in ("2S", "7C", "9D", "AH"):
        assert not np.array_equal(plain.faces[code], varied.faces[code]), code
    for code in ("KH", "QS", "JD"):
        ys, xs = np.nonzero((plain.faces[code] != varied.faces[code]).any(2))
        h, w = plain.faces[code].shape[:2]
        top_left, bottom_right = (xs < 0.3 * w) & (ys < 0.35 * h), (xs > 0.7 * w) & (ys > 0.65 * h)
        assert top_left.any() and bottom_right.any() and (top_left | bottom_right).all(), code
    assert np.array_equal(plain.backs[0], varied.backs[0])
    with pytest.raises(ValueError, match="unknown procedural design"):
        get_design("proc:1:7:stripes")


def test_varied_suits_leave_the_older_draws_alone() -> None:
    """At ``varied_suits=0`` :func:`vision.train.training_designs` draws exactly what it drew
    before the option existed (the first 500 names of seed 4, hashed at commit 9633081), so
    the commands in the model cards remake their data; above 0 a share of the procedural decks
    get ``:suits``."""
    from vision.train import DesignMix, training_designs

    rng = np.random.default_rng(4)
    names = [training_designs(rng, 0.8, extra_fonts=True) for _ in range(500)]
    assert hashlib.sha256("\n".join(names).encode()).hexdigest()[:16] == "7977c9acb463bc34"
    mix = DesignMix(ttf_share=0.8, extra_fonts=True, varied_suits=0.7)
    rng = np.random.default_rng(5)
    drawn = [mix.draw(rng) for _ in range(3000)]
    procedural = [d for d in drawn if d.startswith("proc:")]
    share = sum(d.endswith(":suits") for d in procedural) / len(procedural)
    assert 0.65 < share < 0.75
    assert not any(d.endswith(":suits") for d in drawn if not d.startswith("proc:"))
