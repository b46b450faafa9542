"""Candidate index corners of covered cards, from the read corners of their hand.

A blackjack hand is pitched with a roughly even step: each later card lies over the one
before, moved along the card's width and up or down its height (or along its width only: a
hand laid in a row), so that the earlier card's index corner shows. Such a corner, lying on
the card before it, makes no outline corner, and the proposals' crossings and edge
refinement do not always reach it (of the cards without a candidate on the labelled
calibration frames, most are covered cards of hands of three or more). Two index corners
read as cards, turned alike, one hand step apart, put a third a step beyond either; two
steps apart, one halfway between; and the corners so read anchor the next walk
(:func:`walk`). A hand of which one corner alone was read has no pair to walk from: where a
model asks for it (``"lone_anchors"``), such a corner is first looked around on a grid of
hand steps, and a step found there is walked on along the hand (:func:`lone_walk`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from vision.proposals import IndexFrame, axis_steps, card_steps

#: Reads of a card code at least this probable anchor a hand walk (only their places count).
ANCHOR_FLOOR = 0.9
#: One hand step, in card widths along the card's width and card heights along its height
#: (absolute values; a hand steps up or down): the rendered scenes pitch 0.26-0.40 widths and
#: 0.12-0.30 heights (:func:`vision.synth.render_table`), widened for dealers' hands.
STEP_U = (0.2, 0.45)
STEP_V = (0.06, 0.35)
#: ... or, for a hand laid in a row (each card over the one before, moved along its width
#: only), this many card widths along and under this many heights across: a row of three or
#: more that a dealer keeps within its area pitches 0.24-0.71 widths (the renderer since
#: 2026-11-30). Half the covered cards of such rows had no candidate on 1080 calibration
#: frames of the training designs; with this step 67.17 -> 68.02 % of those frames' readable
#: cards were reported at 0.99, misreads 5 and 5 (``models/cards_v4.md``, twelfth session).
#: Widened from 0.75 and 0.06 (twenty-seventh session): the frames' card widths are measured
#: some 5 % short, so that rows of three pitched 0.63-0.83 widths on `valb` (labels) had their
#: halfway steps just outside the bounds (0.78 along; 0.064 across). On the eight held-out
#: typefaces' sweeps at 0.997 60.27 -> 60.57 % of the cards, the same 33 misreads and 25
#: false positives, the rule's threshold the same (``models/cards_v5.md``, item 8).
ROW_STEP_U = (0.2, 0.85)
ROW_STEP_V = 0.08
#: Frames turned alike: cosine of the angle between their x axes at least this.
ALIKE = 0.95
#: A walked corner this close (card widths) to a frame turned alike is not new.
SAME_PLACE = 0.1
#: In the first walk, two anchors this many hand steps apart (besides two, whose halfway
#: point every walk places) put a corner at each step between them: in a hand of five or
#: more whose reads are the first corner and the fourth, the two between had no walk to
#: place them (a pair two steps apart may be three short ones as well: both are placed, and
#: the reads decide). (3,) read 1.2 points more of 2910 cards of 216 calibration frames of
#: the training designs at 0.997 for 3.8 % more time a frame, paired; (3, 4, 5) over every
#: walk placed hundreds of corners a frame between cards of different hands and took 6.6
#: times as long. Off: on three held-out-typeface sweeps the corners (3,) added were misread
#: ten times as often as the rest, 3 in 288 reports at 0.997 (``models/cards_v5.md``,
#: thirty-second session). A model's ``"walk_splits"`` sets them for its reads (an enrolled
#: deck's, ``enroll-deck --walk-splits 3``: on a deck the reader has seen they add cards and
#: no misreads; thirty-third session).
SPLITS: tuple[int, ...] = ()
#: Whether, in the first walk, each anchor also anchors at its card's other index corner
#: (the diagonally opposite one, the card's axes turned round), paired with the anchors read
#: only: a card laid turned half round in its hand shows that corner's side to its
#: neighbours, and its read corner is not a step from theirs. Pairs of two such corners
#: (the covered far corners of a hand) took 18 % more time a frame, against 8 %, for 6 more
#: of the 2910 cards. Off: with ``SPLITS = (3,)`` +2.35 points on five held-out-typeface
#: sweeps at 0.997, but 5 more misreads in 1142 more reports, 6 more false positives, and
#: about 1.3 times the time. A model's ``"opposite_anchors"`` sets it for its reads
#: (``enroll-deck --opposite-anchors``).
OPPOSITE_ANCHORS = False
#: Whether, before the walks, an anchor that no other anchor turned alike lies a hand step
#: from (or two) is looked around on a grid of hand steps (:func:`lone_walk`): the walk needs
#: two read corners of a hand, and a hand of which one corner was read is not walked at all.
#: Off: on the held-out typefaces about 2 points more at every threshold, but misreads enough
#: to move the bundled reader's rule to 0.999; a model's ``"lone_anchors"`` sets it (an
#: enrolled deck's, ``enroll-deck --lone-anchors calibrated``: at a calibrated table's sizes
#: three decks read 1.0-1.4 points more, the rule kept; ``models/cards_v5.md``, thirty-fourth
#: session).
LONE_ANCHORS = False
#: ... the grid, in card widths along and card heights across (each both ways): the
#: renderer's pitches (0.26-0.40 widths, 0.12-0.30 heights; rows 0.24-0.71 widths) at about
#: the reader's reach apart ...
LONE_GRID_U = (0.27, 0.34, 0.41)
LONE_GRID_V = (0.13, 0.21, 0.29)
LONE_ROW_U = (0.27, 0.35, 0.43, 0.51, 0.59, 0.67)
#: ... and a step a grid point read as a card code found is walked on this many steps more,
#: both ways along the hand (its pitch is roughly even; later walks place halfway points only).
LONE_CHAIN = 4
#: Anchors this close (card widths), turned alike, are one corner to :func:`lone_anchors`.
LONE_SAME_CORNER = 0.15


def hand_walk(frames: list[IndexFrame], probs: np.ndarray, beyond: bool = True,
              splits: tuple[int, ...] | None = None,
              opposite: bool | None = None) -> list[IndexFrame]:
    """New candidate frames one hand step beyond (unless ``beyond`` is false), or halfway
    between, pairs of frames read as card codes (``probs``: their class probabilities) at
    :data:`ANCHOR_FLOOR` or more; each a copy of the nearer anchor moved to its point, none
    within :data:`SAME_PLACE` of a frame turned alike among ``frames`` or of one walked before.
    With ``beyond``, also the points of ``splits`` (:data:`SPLITS` when ``None``) and from
    opposite anchors where ``opposite`` (:data:`OPPOSITE_ANCHORS` when ``None``) says so.

    >>> import numpy as np
    >>> x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    >>> def at(px, py): return IndexFrame(np.array([px, py], float), x, y, 50.0, 70.0, False)
    >>> def sure(n): return np.tile(np.eye(54)[0], (n, 1))   # all read as AS, surely
    >>> [f.point.tolist() for f in hand_walk([at(0, 0), at(15, 14)], sure(2))]  # one step
    [[30.0, 28.0], [-15.0, -14.0]]
    >>> [f.point.tolist() for f in hand_walk([at(0, 0), at(30, 28)], sure(2))]  # two steps
    [[15.0, 14.0]]
    >>> [f.point.tolist() for f in hand_walk([at(0, 0), at(15, 14), at(30, 28)], sure(3))]
    [[-15.0, -14.0], [45.0, 42.0]]
    >>> hand_walk([at(0, 0), at(15, 14)], np.tile(np.eye(54)[53], (2, 1)))  # rejects
    []
    >>> [f.point.tolist() for f in hand_walk([at(0, 0), at(70, 1)], sure(2))]  # a row, 2 steps
    [[35.0, 0.5]]
    >>> [f.point.tolist() for f in hand_walk([at(0, 0), at(78, 9)], sure(2))]  # 0.78 a step
    [[39.0, 4.5]]
    >>> hand_walk([at(0, 0), at(15, 14)], sure(2), beyond=False)
    []
    """
    keep = np.flatnonzero(probs[:, :52].max(1, initial=0.0) >= ANCHOR_FLOOR)
    if len(keep) < 2:
        return []
    splits = SPLITS if splits is None else splits
    opposite = OPPOSITE_ANCHORS if opposite is None else opposite
    anchors = [frames[i] for i in keep]
    if opposite and beyond:
        anchors = anchors + [replace(f, point=f.point + f.width * f.x_axis + f.height * f.y_axis,
                                     x_axis=-f.x_axis, y_axis=-f.y_axis) for f in anchors]
    points = np.array([f.point for f in anchors])
    x_axes = np.array([f.x_axis for f in anchors])
    y_axes = np.array([f.y_axis for f in anchors])
    sizes = np.array([(f.width, f.height) for f in anchors])
    # every pair (a, b) of anchors, a before b, at once (a loop over the anchors and a stack
    # of places grown a point at a time cost 1.8 % of a 720p frame, paired); the walked
    # points are listed in the loop's order, which decides which of two points too close
    # together is kept: by a, then the steps beyond before the halfway points, then by b, a
    # step beyond b before the one behind a (tests/test_handwalk.py holds the loop)
    a, b = np.triu_indices(len(anchors), 1)
    # the opposite corners (listed after the anchors read) pair with read anchors only: two
    # of them are mostly a hand's covered far corners
    alike = ((x_axes[b] * x_axes[a]).sum(1) >= ALIKE) & (a < len(keep))
    a, b = a[alike], b[alike]
    d = points[b] - points[a]
    u, v = axis_steps(x_axes[a], y_axes[a], sizes[a, 0], sizes[a, 1], d)
    step = np.flatnonzero(is_step(u, v)) if beyond else np.zeros(0, int)
    half = np.flatnonzero(is_step(u / 2, v / 2))
    walked_points = np.concatenate([points[b[step]] + d[step], points[a[step]] - d[step],
                                    points[a[half]] + d[half] / 2])
    owners = np.concatenate([b[step], a[step], a[half]])
    order = np.lexsort((np.repeat([0, 1, 0], [len(step), len(step), len(half)]),
                        np.concatenate([b[step], b[step], b[half]]),
                        np.repeat([0, 0, 1], [len(step), len(step), len(half)]),
                        np.concatenate([a[step], a[step], a[half]])))
    placed = [(walked_points[k], anchors[owners[k]]) for k in order]
    for k in splits if beyond else ():
        for i in np.flatnonzero(is_step(u / k, v / k)):
            placed += [(points[a[i]] + d[i] * j / k, anchors[a[i]]) for j in range(1, k)]
    return _new_places(placed, frames)


def lone_anchors(frames: list[IndexFrame], probs: np.ndarray) -> list[int]:
    """Indices of the frames read as card codes at :data:`ANCHOR_FLOOR` or more that no other
    such frame turned alike lies one or two hand steps from (:func:`is_step`): the hands the
    walk cannot walk. One a corner: the surest of those within :data:`LONE_SAME_CORNER`
    card widths of each other, turned alike."""
    best = probs[:, :52].max(1, initial=0.0)
    keep = np.flatnonzero(best >= ANCHOR_FLOOR)
    if not len(keep):
        return []
    keep = keep[np.argsort(-best[keep], kind="stable")]
    points = np.array([frames[i].point for i in keep])
    x_axes = np.array([frames[i].x_axis for i in keep])
    lone: list[int] = []
    for k, i in enumerate(keep):
        alike = (x_axes @ x_axes[k]) >= ALIKE
        alike[k] = False
        same = alike[:k] & (np.hypot(*(points[:k] - points[k]).T) < LONE_SAME_CORNER
                            * frames[i].width)
        if same.any():  # a surer read of this corner stands for it
            continue
        if alike.any():
            u, v = card_steps(frames[i], points[alike] - points[k])
            near = (np.hypot(u, v) > SAME_PLACE) & (is_step(u, v) | is_step(u / 2, v / 2))
            if near.any():
                continue
        lone.append(int(i))
    return lone


def _grid_steps() -> np.ndarray:
    """The grid of :func:`lone_walk`'s steps (card widths along, card heights across)."""
    steps = [(u, v) for u in LONE_GRID_U for v in LONE_GRID_V]
    steps = steps + [(u, -v) for u, v in steps] + [(u, 0.0) for u in LONE_ROW_U]
    steps = np.array(steps)
    return np.concatenate([steps, -steps])


def lone_walk(frames: list[IndexFrame], probs: np.ndarray,
              look: Callable[[list[IndexFrame]], tuple[list[IndexFrame], np.ndarray]]
              ) -> tuple[list[IndexFrame], np.ndarray]:
    """``frames`` and ``probs`` with candidates around the lone anchors
    (:func:`lone_anchors`) on a grid of hand steps, read by ``look``; where a grid point is
    read as a card code at :data:`ANCHOR_FLOOR` or more, its step from the anchor is walked on
    :data:`LONE_CHAIN` steps both ways, and read too.

    >>> x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    >>> def at(px, py=0.0): return IndexFrame(np.array([px, py]), x, y, 50.0, 70.0, False)
    >>> corners = [(0.0, 0.0), (17.5, 10.0), (35.0, 20.0), (52.5, 30.0)]  # a hand of four
    >>> def look(walked):  # a card's corner (within 4 px) reads as AS; anywhere else a reject
    ...     on = [min(np.hypot(*(f.point - c)) for c in corners) < 4 for f in walked]
    ...     return walked, np.array([np.eye(54)[0 if hit else 53] for hit in on])
    >>> frames, probs = lone_walk([at(0.0)], np.eye(54)[:1], look)
    >>> [[round(float(v), 1) for v in f.point] for f, p in zip(frames, probs) if p[0] == 1]
    [[0.0, 0.0], [17.0, 9.1], [20.5, 9.1], [34.0, 18.2], [51.0, 27.3]]

    (two grid points read the second card's corner; where their chains' points lie within
    :data:`SAME_PLACE` of each other, the first one's are kept.)
    """
    lone = lone_anchors(frames, probs)
    if not lone:
        return frames, probs
    steps = _grid_steps()
    placed = []
    for i in lone:
        f = frames[i]
        for u, v in steps:
            placed.append((f.point + u * f.width * f.x_axis + v * f.height * f.y_axis, f))
    walked = _new_places(placed, frames, among=False)
    if not walked:
        return frames, probs
    added, added_probs = look(walked)
    frames, probs = frames + added, np.concatenate([probs, added_probs])
    # the grid's sure reads: a step of the lone anchor's hand, walked on both ways
    sure = np.flatnonzero(added_probs[:, :52].max(1, initial=0.0) >= ANCHOR_FLOOR)
    chained = []
    for k in sure:
        g = added[k]
        owner = min(lone, key=lambda i: float(np.linalg.norm(frames[i].point - g.point)))
        a = frames[owner]
        if float(np.dot(a.x_axis, g.x_axis)) < ALIKE:
            continue
        d = g.point - a.point
        chained += [(a.point + j * d, a) for j in range(2, LONE_CHAIN + 2)]
        chained += [(a.point - j * d, a) for j in range(1, LONE_CHAIN + 1)]
    more = _new_places(chained, frames)
    if more:
        added, added_probs = look(more)
        frames, probs = frames + added, np.concatenate([probs, added_probs])
    return frames, probs


def walk(frames: list[IndexFrame], probs: np.ndarray,
         look: Callable[[list[IndexFrame]], tuple[list[IndexFrame], np.ndarray]],
         walks: int, splits: tuple[int, ...] | None = None,
         opposite: bool | None = None, lone: bool | None = None,
         lone_look: Callable[[list[IndexFrame]], tuple[list[IndexFrame], np.ndarray]]
         | None = None) -> tuple[list[IndexFrame], np.ndarray]:
    """Up to ``walks`` hand walks (:func:`hand_walk`) one after another, each anchored on the
    corners the ones before it read as well: in a hand of five whose first and last corners
    read, the first walk places the middle card and the second the two between. Only the
    first places points a step beyond its pairs, later walks only halfway points: three walks
    placing both took 1.35-1.48 times one walk's time a frame and misread more covered
    corners of the held-out typefaces; halfway only, 1.04-1.10 times and no more misreads
    (``models/cards_v5.md``, twenty-sixth and twenty-seventh sessions). ``look``
    reads the walked frames: it gives the frames to add (those, and any copies of them moved
    onto card edges) with their class probabilities. Stops when a walk places nothing new.
    ``splits`` and ``opposite``: the first walk's extra places (:func:`hand_walk`).

    >>> x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    >>> def at(px): return IndexFrame(np.array([px, 0.0]), x, y, 50.0, 70.0, False)
    >>> corners = [0.0, 17.5, 35.0, 52.5, 70.0]      # a row of five, 0.35 card widths apart
    >>> placed = []                                  # what each walk placed
    >>> def look(walked):  # a card's corner reads as AS, surely; anywhere else a reject
    ...     placed.append([float(f.point[0]) for f in walked])
    ...     on = [min(abs(f.point[0] - c) for c in corners) < 1 for f in walked]
    ...     return walked, np.array([np.eye(54)[0 if hit else 53] for hit in on])
    >>> def read(walks):
    ...     frames, probs = walk([at(0), at(70)], np.tile(np.eye(54)[0], (2, 1)), look, walks)
    ...     return sorted(float(f.point[0]) for f, p in zip(frames, probs) if p[0] == 1)
    >>> read(0), read(1), read(3)
    ([0.0, 70.0], [0.0, 35.0, 70.0], [0.0, 17.5, 35.0, 52.5, 70.0])
    >>> placed[-3:]    # read(3)'s walks: the later ones halfway only (not -35 and 105 too)
    [[35.0], [17.5, 52.5], [26.25, 43.75]]
    """
    if walks and (LONE_ANCHORS if lone is None else lone):
        frames, probs = lone_walk(frames, probs, lone_look or look)
    for n in range(walks):
        walked = hand_walk(frames, probs, beyond=n == 0, splits=splits, opposite=opposite)
        if not walked:
            break
        added, added_probs = look(walked)
        frames = frames + added
        probs = np.concatenate([probs, added_probs])
    return frames, probs


def is_step(u: np.ndarray | float, v: np.ndarray | float,
            steps: tuple[tuple[float, float], tuple[float, float], tuple[float, float], float]
            | None = None, row: bool = True) -> np.ndarray:
    """Whether steps ``u`` card widths along and ``v`` card heights across (signs ignored) are
    one hand step. ``steps``: the bounds along and across, the bounds along a row and the most
    across it; by default the walk's (:data:`STEP_U`, :data:`STEP_V`, :data:`ROW_STEP_U`,
    :data:`ROW_STEP_V`, read at each call). ``row=False`` leaves out the row.

    >>> is_step(np.array([0.3, -0.3, 0.1, 0.5]), np.array([0.2, -0.2, 0.2, 0.0])).tolist()
    [True, True, False, True]
    >>> bool(is_step(0.5, 0.0, row=False))
    False
    """
    step_u, step_v, row_u, row_across = steps or (STEP_U, STEP_V, ROW_STEP_U, ROW_STEP_V)
    u, v = np.abs(u), np.abs(v)
    pitched = (u >= step_u[0]) & (u <= step_u[1]) & (v >= step_v[0]) & (v <= step_v[1])
    if not row:
        return pitched
    return pitched | ((u >= row_u[0]) & (u <= row_u[1]) & (v < row_across))


def _new_places(walked: list[tuple[np.ndarray, IndexFrame]],
                frames: list[IndexFrame], among: bool = True) -> list[IndexFrame]:
    """The walked points as copies of their anchors, leaving out those within
    :data:`SAME_PLACE` card widths of a frame turned alike, in ``frames`` or (unless not
    ``among``: a grid finer than that) walked before.

    >>> x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    >>> a = IndexFrame(np.zeros(2), x, y, 50.0, 70.0, True)
    >>> def at(px): return np.array([px, 0.0])
    >>> [float(f.point[0]) for f in _new_places([(at(3), a), (at(20), a), (at(24), a),
    ...                                          (at(30), a)], [a])]
    [20.0, 30.0]
    >>> [float(f.point[0]) for f in _new_places([(at(20), a), (at(24), a)], [a], among=False)]
    [20.0, 24.0]
    """
    if not walked:
        return []
    places = np.array([point for point, _ in walked])
    turns = np.array([anchor.x_axis for _, anchor in walked])
    # the pairs close enough to matter, found by their x coordinates in order (a walk of many
    # anchors places thousands of points, most of them on one another, against a frame's
    # hundreds of candidates: every pair's distance took a quarter of the extra walks' time)
    taken = np.zeros(len(walked), bool)
    if frames:
        points = np.array([f.point for f in frames])
        limits = (SAME_PLACE * np.array([f.width for f in frames])) ** 2
        i, j = _pairs_within(places, points, float(np.sqrt(limits.max())))
        near = ((((places[i] - points[j]) ** 2).sum(1) < limits[j])
                & ((turns[i] * np.array([f.x_axis for f in frames])[j]).sum(1) > 0.9))
        taken[i[near]] = True
    fresh = np.flatnonzero(~taken)
    if among and len(fresh) > 1:
        fresh = fresh[_first_of_each(places[fresh], turns[fresh], (SAME_PLACE * np.array(
            [walked[k][1].width for k in fresh])) ** 2)]
    return [IndexFrame(walked[k][0], walked[k][1].x_axis, walked[k][1].y_axis,
                       walked[k][1].width, walked[k][1].height, False) for k in fresh]


def _first_of_each(places: np.ndarray, turns: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Indices of the points kept when each, in order, is kept unless a point kept before it
    lies within its squared reach (``limits``, the earlier point's) turned alike: as a loop
    over the points would keep them, but resolved a round at a time over the close pairs (a
    point with a kept point before it is left out; one with only left-out points before it
    is kept), so that a pile of points on one another takes a round or two.

    >>> x = np.array([[1.0, 0.0]] * 4)
    >>> _first_of_each(np.array([[0.0, 0], [4, 0], [8, 0], [20, 0]]), x, np.full(4, 25.0))
    array([0, 2, 3])
    """
    a, b = _pairs_within(places, places, float(np.sqrt(limits.max())))
    earlier = a < b
    a, b = a[earlier], b[earlier]
    close = ((((places[b] - places[a]) ** 2).sum(1) < limits[a])
             & ((turns[a] * turns[b]).sum(1) > 0.9))
    a, b = a[close], b[close]
    state = np.zeros(len(places), np.int8)  # 1 kept, -1 left out, 0 not known yet
    while not state.all():
        open_ = state == 0
        after_kept = np.bincount(b[state[a] == 1], minlength=len(places)) > 0
        after_open = np.bincount(b[state[a] == 0], minlength=len(places)) > 0
        state[open_ & after_kept] = -1
        state[open_ & ~after_kept & ~after_open] = 1
    return np.flatnonzero(state == 1)


def _pairs_within(a: np.ndarray, b: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)`` of the points ``a[i]`` and ``b[j]`` whose x coordinates lie
    within ``reach`` of each other (widened a hair, so that no pair closer than ``reach`` is
    missed to rounding): every pair closer than ``reach``, and some others.

    >>> i, j = _pairs_within(np.array([[0.0, 0], [10, 0]]), np.array([[1.0, 5], [30, 0]]), 2.0)
    >>> i.tolist(), j.tolist()
    ([0], [0])
    """
    reach = reach * 1.001 + 1e-6
    order = np.argsort(b[:, 0], kind="stable")
    xs = b[order, 0]
    lo = np.searchsorted(xs, a[:, 0] - reach, "left")
    counts = np.searchsorted(xs, a[:, 0] + reach, "right") - lo
    i = np.repeat(np.arange(len(a)), counts)
    # each pair's place among its point's: its running number less its point's first one
    starts = np.repeat(lo - (np.cumsum(counts) - counts), counts)
    return i, order[starts + np.arange(len(i))]
