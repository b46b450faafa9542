"""The hand walk's pairs taken all at once place what the loop over anchors it replaced placed."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from vision.handwalk import ALIKE, ANCHOR_FLOOR, SAME_PLACE, hand_walk, is_step
from vision.proposals import IndexFrame, card_steps


def _loop_walk(frames: list[IndexFrame], probs: np.ndarray, beyond: bool) -> list[IndexFrame]:
    """The walk as written before the twenty-seventh session: a loop over the anchors, and
    the walked points checked one by one against a growing stack of places."""
    keep = np.flatnonzero(probs[:, :52].max(1, initial=0.0) >= ANCHOR_FLOOR)
    if len(keep) < 2:
        return []
    anchors = [frames[i] for i in keep]
    points = np.array([f.point for f in anchors])
    x_axes = np.array([f.x_axis for f in anchors])
    walked = []
    for i, a in enumerate(anchors[:-1]):
        later = np.arange(i + 1, len(anchors))
        later = later[x_axes[later] @ a.x_axis >= ALIKE]
        if not len(later):
            continue
        d = points[later] - a.point
        u, v = card_steps(a, d)
        for k in np.flatnonzero(is_step(u, v)) if beyond else ():
            b = anchors[later[k]]
            walked += [(b.point + d[k], b), (a.point - d[k], a)]
        for k in np.flatnonzero(is_step(u / 2, v / 2)):
            walked.append((a.point + d[k] / 2, a))
    if not walked:
        return []
    places = np.array([f.point for f in frames])
    axes = np.array([f.x_axis for f in frames])
    limits = (SAME_PLACE * np.array([f.width for f in frames])) ** 2
    out = []
    for point, anchor in walked:
        near = ((places - point) ** 2).sum(1) < limits
        if near.any() and (axes[near] @ anchor.x_axis > 0.9).any():
            continue
        out.append(replace(anchor, point=point, direct=False))
        places = np.vstack([places, point])
        axes = np.vstack([axes, anchor.x_axis])
        limits = np.append(limits, (SAME_PLACE * anchor.width) ** 2)
    return out


def _hands(rng: np.random.Generator) -> tuple[list[IndexFrame], np.ndarray]:
    """Index corners of a few hands (even and uneven steps, rows, some turned), stray
    candidates, some of them read as codes and some as rejects."""
    frames = []
    for _ in range(rng.integers(1, 6)):
        angle = rng.uniform(-np.pi, np.pi) if rng.random() < 0.8 else 0.0
        x = np.array([np.cos(angle), np.sin(angle)])
        y = np.array([-np.sin(angle), np.cos(angle)]) + rng.normal(0, 0.05, 2)
        width = rng.uniform(40, 80)
        height = width * 1.4
        start = rng.uniform(0, 1280, 2)
        su, sv = rng.uniform(0.15, 0.8), rng.choice([0.0, rng.uniform(-0.35, 0.35)])
        for n in range(rng.integers(2, 7)):
            jitter = rng.normal(0, 0.05, 2) * width if rng.random() < 0.5 else 0.0  # uneven
            step = n * su * width * x + n * sv * height * y + jitter
            frames.append(IndexFrame(start + step, x, y, width, height, bool(rng.random() < 0.5)))
    for _ in range(rng.integers(0, 20)):
        angle = rng.uniform(-np.pi, np.pi)
        x = np.array([np.cos(angle), np.sin(angle)])
        frames.append(IndexFrame(rng.uniform(0, 1280, 2), x, np.array([-x[1], x[0]]),
                                 50.0, 70.0, False))
    order = rng.permutation(len(frames))
    frames = [frames[i] for i in order]
    probs = np.zeros((len(frames), 54))
    classes = rng.integers(0, 54, len(frames))
    probs[np.arange(len(frames)), classes] = rng.choice([0.5, 0.95, 1.0], len(frames))
    return frames, probs


@pytest.mark.parametrize("beyond", [True, False])
def test_the_walk_places_what_the_loop_over_anchors_placed(beyond: bool) -> None:
    rng = np.random.default_rng(27)
    placed = 0
    for _ in range(300):
        frames, probs = _hands(rng)
        ours = hand_walk(frames, probs, beyond=beyond)
        theirs = _loop_walk(frames, probs, beyond)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert np.array_equal(a.point, b.point) and np.array_equal(a.x_axis, b.x_axis)
            assert (a.width, a.height, a.direct) == (b.width, b.height, b.direct)
        placed += len(ours)
    assert placed > 500   # the hands gave the walk something to place (1879; 852 halfway only)


def _at(px: float, py: float, turned: bool = False) -> IndexFrame:
    """An index corner of a 50 x 70 card lying square, or turned half round (``turned``)."""
    x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    return IndexFrame(np.array([px, py]), -x if turned else x, -y if turned else y,
                      50.0, 70.0, False)


def _sure(n: int) -> np.ndarray:
    return np.tile(np.eye(54)[0], (n, 1))   # every corner read as AS, surely


def test_splits_place_the_steps_between_anchors_three_steps_apart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 0.99 widths and 0.6 heights apart: too far for one step or two, three of 0.33 and 0.2
    hand = [_at(0, 0), _at(49.5, 42)]
    assert hand_walk(hand, _sure(2)) == []
    monkeypatch.setattr("vision.handwalk.SPLITS", (3,))
    assert [f.point.tolist() for f in hand_walk(hand, _sure(2))] == [[16.5, 14.0], [33.0, 28.0]]
    assert all(not f.direct and f.width == 50.0 for f in hand_walk(hand, _sure(2)))
    assert hand_walk(hand, _sure(2), beyond=False) == []     # the first walk only
    # a pair one step apart is not three steps of a third of one
    near = [_at(0, 0), _at(15, 14)]
    assert [f.point.tolist() for f in hand_walk(near, _sure(2))] == [[30.0, 28.0], [-15.0, -14.0]]


def test_opposite_anchors_walk_from_a_card_turned_half_round(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a hand of three stepping 15 along and 14 down; the middle card lies turned half round,
    # so that its read corner is its far one: (15 + 50, 14 + 70), its axes reversed
    hand = [_at(0, 0), _at(65, 84, turned=True)]
    assert hand_walk(hand, _sure(2)) == []
    monkeypatch.setattr("vision.handwalk.OPPOSITE_ANCHORS", True)
    walked = hand_walk(hand, _sure(2))
    # its near corner (15, 14) is one step from the first card's: the walk places a step on
    # from it, a copy of its near corner turned as the hand, and one behind the first card;
    # and, seen from the turned card, the first card's far corner (50, 70) is one step from
    # its read one: a step on and one behind them, turned as it
    assert [(f.point.tolist(), f.x_axis[0]) for f in walked] == [
        ([30.0, 28.0], 1.0), ([-15.0, -14.0], 1.0), ([35.0, 56.0], -1.0), ([80.0, 98.0], -1.0)]
    assert hand_walk(hand, _sure(2), beyond=False) == []
    # two cards both read at their near corners place no more than without the setting:
    # their far corners pair with no anchor read (only with each other, which is not asked)
    plain = [_at(0, 0), _at(15, 14)]
    assert [f.point.tolist() for f in hand_walk(plain, _sure(2))] == [[30.0, 28.0], [-15.0, -14.0]]


def test_lone_anchors_are_the_corners_no_walk_can_pair() -> None:
    """A corner with another read corner one or two hand steps away is walked already; a
    corner alone (or with a corner turned the other way, or out of a hand's reach) is lone;
    two reads of one corner count once, the surer standing for it; rejects anchor nothing."""
    from vision.handwalk import lone_anchors

    probs = _sure(6)
    probs[4] = np.eye(54)[0] * 0.95 + np.eye(54)[53] * 0.05  # a weaker read of corner 3
    frames = [_at(0, 0), _at(15, 14),        # a pair one step apart: walked
              _at(200, 0),                   # alone
              _at(400, 0), _at(403, 1),      # one corner read twice
              _at(200, 300, turned=True)]    # alone, turned
    assert lone_anchors(frames, probs) == [2, 3, 5]
    rejects = np.tile(np.eye(54)[53], (6, 1))
    assert lone_anchors(frames, rejects) == []


def test_lone_walk_finds_the_hand_of_a_single_read_corner_and_walks_it() -> None:
    """From a hand's one read corner the grid places points a hand step away both ways; a
    point read surely sets the hand's step, walked on both ways; the walk then pairs them.
    Without the grid a hand of one read corner is not walked at all."""
    from vision.handwalk import _grid_steps, lone_walk, walk

    # a hand of four stepping 0.34 widths along and 0.21 heights down (a grid step), the
    # second card's corner read
    corners = [np.array([17.0 * k, 14.7 * k]) for k in range(-1, 3)]
    looked: list[int] = []

    def look(walked: list[IndexFrame]) -> tuple[list[IndexFrame], np.ndarray]:
        looked.append(len(walked))
        on = [min(np.hypot(*(f.point - c)) for c in corners) < 1.0 for f in walked]
        return walked, np.array([np.eye(54)[0 if hit else 53] for hit in on])

    def read(frames: list[IndexFrame], probs: np.ndarray) -> list[list[float]]:
        return sorted([round(float(v), 1) for v in f.point]
                      for f, p in zip(frames, probs, strict=True) if p[0] == 1)

    start, start_probs = [_at(0, 0)], _sure(1)
    assert read(*walk(start, start_probs, look, 3)) == [[0.0, 0.0]]  # no pair, no walk
    assert looked == []
    frames, probs = lone_walk(start, start_probs, look)
    assert looked[0] == len(_grid_steps()) == 2 * (2 * 9 + 6)  # the grid, once
    assert read(frames, probs) == [[-17.0, -14.7], [0.0, 0.0], [17.0, 14.7], [34.0, 29.4]]
    assert all(not f.direct and f.width == 50.0 for f in frames[1:])
    looked.clear()
    assert read(*walk(start, start_probs, look, 3, lone=True)) == read(frames, probs)
    # a corner in a pair is not lone: the grid places nothing
    pair = [_at(0, 0), _at(17, 14.7)]
    assert lone_walk(pair, _sure(2), look)[0] == pair
