"""Cheap OpenCV stage: find where card index corners may be.

1. :func:`card_mask` marks pixels that differ from the local felt colour (felt of any colour;
   the felt estimate is local, so uneven light does not move the threshold) and are pale,
   from neutral or from the frame's white point (:func:`white_point`: a coloured light tints
   the cards), with thin printed lines and text opened away.
2. :func:`find_corners` walks the outline of every region and keeps convex, roughly
   right-angled corners where two straight edges meet (the intersection of the edges, so
   rounded card corners do not matter), each with its right-handed frame (x, y unit vectors
   pointing into the card).
3. :func:`card_sizes` measures the card size from corners whose edges end at neighbouring
   corners and from crossings of edge rays (:func:`paired_frames`), and keeps its modes as
   hypotheses (the outline of a hand measures too); :func:`outline` does steps 1-3.
4. :func:`index_frames` turns each corner into the places where a card's index corner can
   be under one size hypothesis: the corner itself, and the corners inferred from the card
   size for the case that it is a card's plain corner or the far corner. Index corners of
   cards that lie over other cards (white on white) are reached through these inferred
   frames. :func:`propose` does it all for one hypothesis.

Every frame is ``(point, x_axis, y_axis, width)``: the card's own top-left corner in image
pixels, unit vectors along the card's width and height, and the card width in pixels.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.tablesize import TableSize

#: Work at this fraction of the input resolution for the mask and outlines.
MASK_SCALE = 1.0
#: Close the card mask before opening it (off: opened first, as always). Closing first fills
#: the cards' own thin dark print (a border printed just inside the edge, index glyphs) before
#: the opening takes away thin pale print on the felt; opened first, the strip of stock outside
#: a printed border goes with the felt's lines, and where an overlapped hand shows little more
#: than a border and an index of each card its outline comes out ragged and the steps'
#: corners are lost. Measured in the fifty-sixth session (``models/cards_v7.md``): +1.0 and
#: +1.4 points on fresh frames of the training designs, +0.30 on the held-out typefaces'
#: sweeps with 2 misreads more: under the half point its rule asked, so not the default.
CLOSE_FIRST = False
#: Card stock is this much lighter than the local felt (8-bit Lab lightness) ...
LIGHTER_THAN_FELT = 28
#: ... and has at most this chroma (|a| + |b| in 8-bit Lab), measured from the frame's white
#: point: the median colour of its lightest pixels (:data:`WHITE_SHARE`), the cards' stock
#: under the frame's light, moved at most :data:`MAX_CAST` from neutral.
MAX_CHROMA = 40
WHITE_SHARE = 0.02
MAX_CAST = 30


def _kernel(full_res_px: float) -> np.ndarray:
    k = max(3, int(round(full_res_px * MASK_SCALE)) | 1)
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))


_K_SMALL = _kernel(3)
_K_BIG = _kernel(5)
#: Height / width of a card, used when a region does not show both edge lengths.
DEFAULT_ASPECT = 1.45
#: Extra corner passes with other arms (full-resolution pixels; :func:`find_corners` uses 10):
#: longer arms find the rounded corners of large or blurred cards, which turn too gently
#: within 10 px (shorter ones would find the small steps of tightly overlapped hands). On the
#: 380 labelled calibration frames at 0.993 a 16 px pass read 67.0 -> 69.8 % of the cards,
#: 20 px 69.2 %.
EXTRA_ARMS_PX: tuple[float, ...] = (16.0,)
#: ... whose corners count only this far (pixels) from every corner found before: the same
#: corner found again a few pixels off would only add near-copies of its frames.
EXTRA_CORNER_GAP_PX = 8.0


@dataclass(frozen=True)
class Corner:
    """A convex right-ish corner of a region outline, in full-resolution pixels."""

    point: np.ndarray  # (2,)
    x_axis: np.ndarray  # unit vector into the card along one edge
    y_axis: np.ndarray  # unit vector into the card along the other edge (right-handed)
    len_x: float  # visible length of the edge along x_axis
    len_y: float
    region: int


@dataclass(frozen=True)
class IndexFrame:
    """Where a card's top-left (index) corner may be, and the card's axes and size."""

    point: np.ndarray
    x_axis: np.ndarray
    y_axis: np.ndarray
    width: float
    height: float
    direct: bool  # the point is a corner seen on an outline, not one inferred from size


def card_steps(f: IndexFrame, d: np.ndarray) -> tuple:
    """The step ``d`` (``(2,)``, or ``(m, 2)`` for many) from ``f``'s corner point in card
    widths along its x axis and card heights along its y axis, solved in those axes (under a
    tilted view they are not at right angles: dot products with them mix the two, which
    placed a neighbour's far corner in a hand where the card's own should be).

    >>> import numpy as np
    >>> f = IndexFrame(np.zeros(2), np.array([1.0, 0.0]), np.array([0.6, 0.8]), 50.0, 70.0, True)
    >>> [round(s, 3) for s in card_steps(f, 25 * f.x_axis + 70 * f.y_axis)]
    [0.5, 1.0]
    >>> [s.round(3).tolist() for s in card_steps(f, np.array([[50.0, 0.0], [-25.0, 0.0]]))]
    [[1.0, -0.5], [0.0, 0.0]]
    """
    d = np.asarray(d, np.float64)
    u, v = axis_steps(f.x_axis, f.y_axis, f.width, f.height, d)
    return (float(u), float(v)) if d.ndim == 1 else (u, v)


def axis_steps(x: np.ndarray, y: np.ndarray, width: np.ndarray | float,
               height: np.ndarray | float, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`card_steps` on arrays: steps ``d`` (``(..., 2)``) solved in axes ``x``, ``y``
    (``(..., 2)``, or one pair for all) and divided by ``width`` / ``height``, row by row.

    >>> import numpy as np
    >>> x, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [-1.0, 0.0]])
    >>> [s.tolist() for s in axis_steps(x, y, np.array([10.0, 20.0]), 5.0,
    ...                                 np.array([[10.0, 5.0], [5.0, 10.0]]))]
    [[1.0, 0.5], [1.0, -1.0]]
    """
    det = x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0]
    u = (d[..., 0] * y[..., 1] - d[..., 1] * y[..., 0]) / (det * width)
    v = (x[..., 0] * d[..., 1] - x[..., 1] * d[..., 0]) / (det * height)
    return u, v


def card_mask(img: np.ndarray) -> np.ndarray:
    """Binary mask (at :data:`MASK_SCALE`) of card stock: pale, low-chroma and lighter than
    the local felt. The felt lightness is estimated by a grey-level opening on a coarse grid,
    so uneven light moves the threshold with it; thin printed lines and text are opened away
    (and, with :data:`CLOSE_FIRST`, the cards' own thin dark print closed over first).
    """
    small = (img if MASK_SCALE == 1.0 else
             cv2.resize(img, None, fx=MASK_SCALE, fy=MASK_SCALE, interpolation=cv2.INTER_AREA))
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    # one split into contiguous planes: OpenCV copies a strided channel view on every call
    light, a, b = cv2.split(lab)
    pale = _chroma(a, b, 128, 128) < MAX_CHROMA
    a0, b0 = white_point(lab)
    if (a0, b0) != (128, 128):
        pale |= _chroma(a, b, a0, b0) < MAX_CHROMA
    h, w = light.shape
    grid = (max(8, img.shape[1] // 32), max(8, img.shape[0] // 32))
    coarse = area_downsize(light, grid)
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (7, 7))
    felt = cv2.morphologyEx(coarse, cv2.MORPH_OPEN, kernel)
    felt = cv2.GaussianBlur(felt, (0, 0), 1.5)
    felt = cv2.resize(felt, (w, h), interpolation=cv2.INTER_LINEAR)
    mask = ((cv2.subtract(light, felt) > LIGHTER_THAN_FELT) & pale).astype(np.uint8) * 255
    for op in ((cv2.MORPH_CLOSE, cv2.MORPH_OPEN) if CLOSE_FIRST
               else (cv2.MORPH_OPEN, cv2.MORPH_CLOSE)):
        mask = cv2.morphologyEx(mask, op, _K_SMALL)
    return mask


def area_downsize(plane: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """An 8-bit plane's mean over each cell of a ``size`` (width, height) grid, as
    ``cv2.resize(..., INTER_AREA)`` gives it, in a fifth of the time where the width divides
    into whole cells (a 720p frame's 40 x 22 felt grid: 0.4 instead of 2.1 ms).

    OpenCV's area resize takes a slow general path when either scale is fractional (720 rows
    into 22); here the columns are averaged in whole blocks (its fast path) and the rows by
    a matrix of each row's share in each cell. The same means; a mean a hair from a half may
    round the other way (on 600 validation frames' felt grids, 161 of 556,160 cells differ,
    by one grey level; ``recognize`` gave the same cards, face-down cards and refusals on
    1359 of 1360 frames, and on the other one refusal's marker 10 px apart). Other widths,
    and fewer rows than cells, take OpenCV's own path.

    >>> import numpy as np, cv2
    >>> plane = np.random.default_rng(1).integers(0, 256, (720, 1280), np.uint8)
    >>> ours = area_downsize(plane, (40, 22))
    >>> theirs = cv2.resize(plane, (40, 22), interpolation=cv2.INTER_AREA)
    >>> int(np.abs(ours.astype(int) - theirs).max()) <= 1, float((ours != theirs).mean()) < 0.01
    (True, True)
    >>> narrow = np.ascontiguousarray(plane[:, :1270])        # 1270 columns into 39 cells
    >>> np.array_equal(area_downsize(narrow, (39, 22)),
    ...                cv2.resize(narrow, (39, 22), interpolation=cv2.INTER_AREA))
    True
    >>> low = np.ascontiguousarray(plane[:5, :64])               # 5 rows into 8: upward
    >>> np.array_equal(area_downsize(low, (8, 8)),
    ...                cv2.resize(low, (8, 8), interpolation=cv2.INTER_AREA))
    True
    """
    width, height = size
    h, w = plane.shape
    if w % width or h < height:  # (upward, OpenCV's area resize interpolates instead)
        return cv2.resize(plane, size, interpolation=cv2.INTER_AREA)
    columns = cv2.resize(plane.astype(np.float32), (width, h), interpolation=cv2.INTER_AREA)
    share = _row_shares(h, height)
    return np.clip(np.rint(share @ columns.astype(np.float64)), 0, 255).astype(np.uint8)


@functools.lru_cache(maxsize=8)
def _row_shares(rows: int, cells: int) -> np.ndarray:
    """``(cells, rows)``: the share of each row in each of ``cells`` equal cells (rows sum to
    one cell's mean)."""
    edges = np.arange(cells + 1) * (rows / cells)
    row = np.arange(rows)[None, :]
    overlap = np.minimum(edges[1:, None], row + 1) - np.maximum(edges[:-1, None], row)
    shares = np.clip(overlap, 0, None) / (rows / cells)
    shares.setflags(write=False)  # cached: one array for every call
    return shares


def _chroma(a: np.ndarray, b: np.ndarray, a0: int, b0: int) -> np.ndarray:
    """City-block distance of Lab planes ``a``, ``b`` from ``(a0, b0)``, saturated at 255."""
    return cv2.add(cv2.absdiff(a, a0), cv2.absdiff(b, b0))


def white_point(lab: np.ndarray) -> tuple[int, int]:
    """The (a, b) of white card stock in an 8-bit Lab frame: the median of its lightest
    :data:`WHITE_SHARE` of pixels, at most :data:`MAX_CAST` from neutral (128) on each axis.

    An uncalibrated camera under casino light tints white cards (a white balance off by 15 %
    per channel turns them pink, beyond :data:`MAX_CHROMA` of neutral, and no card was found);
    the cards are the lightest large things on the table, so their colour is the frame's white.

    >>> import numpy as np, cv2
    >>> img = np.full((40, 40, 3), (40, 110, 30), np.uint8)   # green felt, BGR
    >>> img[10:30, 10:30] = (235, 200, 240)                     # a white card under pink light
    >>> a, b = white_point(cv2.cvtColor(img, cv2.COLOR_BGR2LAB))
    >>> a > 140 and b < 120
    True
    """
    sample = lab[::4, ::4]  # every 16th pixel: thousands of card pixels, a sixteenth the time
    light = sample[..., 0]
    hist = np.bincount(light.ravel(), minlength=256)
    level = int(np.searchsorted(np.cumsum(hist[::-1]), WHITE_SHARE * light.size))
    lightest = light >= 255 - level
    out = []
    for ch in (1, 2):
        v = int(np.median(sample[..., ch][lightest]))
        out.append(int(np.clip(v, 128 - MAX_CAST, 128 + MAX_CAST)))
    return out[0], out[1]


def _merge_collinear(poly: np.ndarray, max_turn: float = 0.985) -> np.ndarray:
    """Drop vertices where the outline turns by less than ~10 degrees (the first such vertex,
    then look again from the start). Plain floats: this runs for every region of every frame,
    and numpy calls on 2-vectors cost more than the arithmetic."""
    pts = [(float(x), float(y)) for x, y in poly]

    def straight(a: tuple[float, float], b: tuple[float, float],
                 c: tuple[float, float]) -> bool:
        ux, uy, vx, vy = b[0] - a[0], b[1] - a[1], c[0] - b[0], c[1] - b[1]
        norms = max(math.hypot(ux, uy), 1e-9) * max(math.hypot(vx, vy), 1e-9)
        return (ux * vx + uy * vy) / norms > max_turn

    # Same result as rescanning from the start after each drop, without the rescans: a drop
    # at i changes only the turns at its neighbours, i - 1 and (when i was the last vertex)
    # vertex 0, and the vertices before i - 1 were already found not straight.
    i = 0
    while i < len(pts) and len(pts) > 3:
        if straight(pts[i - 1], pts[i], pts[(i + 1) % len(pts)]):
            last = i == len(pts) - 1
            del pts[i]
            i = 0 if last else max(i - 1, 0)
        else:
            i += 1
    return np.array(pts)


def _arm_directions(runs: np.ndarray) -> np.ndarray:
    """Unit directions ``(K, 2)`` of runs of contour points ``(K, m, 2)``, each ordered away
    from its corner: the principal axis of each run's 2x2 scatter matrix, in closed form."""
    centred = runs - runs.mean(1, keepdims=True)
    sxx = (centred[..., 0] * centred[..., 0]).sum(1)
    syy = (centred[..., 1] * centred[..., 1]).sum(1)
    sxy = (centred[..., 0] * centred[..., 1]).sum(1)
    angle = 0.5 * np.arctan2(2.0 * sxy, sxx - syy)
    d = np.stack([np.cos(angle), np.sin(angle)], 1)
    backwards = ((runs[:, -1] - runs[:, 0]) * d).sum(1) < 0
    d[backwards] *= -1.0
    return d


def find_corners(mask: np.ndarray, arm_px: float = 10.0, min_area_px: float = 600.0,
                 extra_arms_px: Sequence[float] = ()) -> tuple[list[Corner], list[float]]:
    """Convex near-right-angle corners of every region in ``mask``, in full-resolution pixels.

    A corner is a contour point where the outline turns by 55-125 degrees between the points
    ``arm`` steps before and after it (the sharpest such point nearby). Its two edges are
    fitted to the contour runs on either side, skipping the rounded tip, and the corner is
    placed where the two fitted edges cross. With ``extra_arms_px``, the corners found with
    those arms too, each kept only :data:`EXTRA_CORNER_GAP_PX` from every corner before it
    (the contours are traced once for all arms). Also returns the outlines of the regions
    large enough to measure a card by (:func:`longest_edges` measures them: the card size is
    estimated from their longest straight edges when no better estimate exists, which is
    seldom, so they are measured only then).
    """
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    arms_px = (arm_px, *extra_arms_px)
    measurable: list[np.ndarray] = []
    arms = [max(3, int(round(a * MASK_SCALE / 2))) for a in arms_px]
    min_area = min_area_px * MASK_SCALE**2
    # per arm, the contours long enough for it, with their orientations and region numbers
    batches: list[tuple[list[np.ndarray], list[float], list[int]]] = [([], [], [])
                                                                     for _ in arms]
    for ci, cnt in enumerate(contours):
        # signed: its sign is the outline's orientation (the shoelace sum, in exact
        # integer arithmetic either way)
        area = cv2.contourArea(cnt, oriented=True)
        if abs(area) < min_area or len(cnt) < 6 * min(arms):
            continue
        pts = cnt.reshape(-1, 2).astype(np.float64)
        if len(cnt) >= 6 * arms[0]:
            measurable.append(cnt)
        orient = np.sign(area) or 1.0
        for batch, arm in zip(batches, arms, strict=True):
            if len(cnt) >= 6 * arm:
                batch[0].append(pts)
                batch[1].append(orient)
                batch[2].append(ci)
    found = [_contour_corners(batch[0], arm, batch[1], batch[2])
             for batch, arm in zip(batches, arms, strict=True)]
    corners = found[0]
    for more in found[1:]:
        known = np.array([c.point for c in corners]).reshape(-1, 2)
        corners += [c for c in more if not len(known) or
                    float(np.min(np.hypot(*(known - c.point).T))) > EXTRA_CORNER_GAP_PX]
    return corners, measurable


def longest_edges(outlines: list[np.ndarray]) -> list[float]:
    """The longest straight edge of each region outline (mask pixels, as
    :func:`find_corners` returns them), in full-resolution pixels: the longest side of its
    polygon once vertices where it turns by less than ~10 degrees are dropped.

    >>> import numpy as np, cv2
    >>> mask = np.zeros((100, 100), np.uint8)
    >>> mask[10:60, 20:50] = 255                     # a 30 x 50 px rectangle
    >>> contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    >>> [round(v / MASK_SCALE) for v in longest_edges(list(contours))]
    [49]
    """
    out = []
    for cnt in outlines:
        poly = _merge_collinear(cv2.approxPolyDP(cnt, 1.5, True).reshape(-1, 2).astype(float))
        steps = poly - np.roll(poly, 1, axis=0)
        out.append(float(np.sqrt((steps * steps).sum(1)).max()) * (1.0 / MASK_SCALE))
    return out


def _contour_corners(contours: list[np.ndarray], arm: int, orients: list[float],
                     regions: list[int]) -> list[Corner]:
    """:func:`find_corners` with ``arm`` steps on contours ``contours`` (mask pixels, each at
    least ``6 * arm`` points) of orientations ``orients`` and region numbers ``regions``, all
    at once: every point is scored against the points ``arm`` steps around it on its own
    contour (indices wrap within each contour), so the corners, and their order (by contour,
    then along it), are those of one contour at a time, with a few dozen numpy calls a frame
    instead of a few dozen a contour."""
    if not contours:
        return []
    inv = 1.0 / MASK_SCALE
    tip = max(1, arm // 3)
    lengths = np.array([len(c) for c in contours])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    pts = np.concatenate(contours)
    contour = np.repeat(np.arange(len(contours)), lengths)
    base, n = starts[contour], lengths[contour]
    local = np.arange(len(pts)) - base

    def along(index: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """Global indices of the points ``steps`` after the points ``index`` on their own
        contours (``steps`` broadcast against ``index[:, None]``)."""
        return (base[index][:, None] + (local[index][:, None] + steps)
                % n[index][:, None])

    every = np.arange(len(pts))
    back = pts[along(every, np.array([-arm]))[:, 0]] - pts
    fwd = pts[along(every, np.array([arm]))[:, 0]] - pts
    nb = np.linalg.norm(back, axis=1) + 1e-9
    nf = np.linalg.norm(fwd, axis=1) + 1e-9
    cosang = np.sum(back * fwd, axis=1) / (nb * nf)
    turn = -_cross(back, fwd) * np.asarray(orients, np.float64)[contour]  # > 0: convex turn
    score = np.where((np.abs(cosang) < 0.57) & (turn > 0), -np.abs(cosang) + 1, 0.0)
    # keep local maxima of the score along each contour (looked for only where it is
    # positive, about one point in ten: the same peaks in a fraction of the gathers)
    scored = np.flatnonzero(score > 0)
    win = score[along(scored, np.arange(-arm, arm + 1))].max(1, initial=0.0)
    peaks = scored[score[scored] >= win]
    kept, last, last_contour = [], 0, -1
    for g, c, k in zip(peaks.tolist(), contour[peaks].tolist(), local[peaks].tolist(),
                       strict=True):
        if c != last_contour:
            last, last_contour = -10 * arm, c
        if k - last >= arm:  # the first of peaks closer than an arm apart
            kept.append(g)
            last = k
    if not kept:
        return []
    ks = np.array(kept)
    run = np.arange(tip, 2 * arm + 1)
    before = pts[along(ks, -run[None, :])]  # (K, m, 2), away from the corner
    after = pts[along(ks, run[None, :])]
    da, db = _arm_directions(before), _arm_directions(after)
    # the two fitted edges cross at before[0] + t * da = after[0] + s * db
    det = db[:, 0] * da[:, 1] - da[:, 0] * db[:, 1]
    gap = after[:, 0] - before[:, 0]
    ok = (np.abs((da * db).sum(1)) <= 0.57) & (np.abs(det) >= 1e-6)
    t = (db[:, 0] * gap[:, 1] - db[:, 1] * gap[:, 0]) / np.where(ok, det, 1.0)
    cross_at = before[:, 0] + t[:, None] * da
    ok &= np.hypot(*(cross_at - pts[ks]).T) <= arm
    corners = []
    for i in np.flatnonzero(ok):
        ax, bx = da[i], db[i]
        if ax[0] * bx[1] - ax[1] * bx[0] < 0:
            ax, bx = bx, ax
        corners.append(Corner(point=(cross_at[i] + 0.5) * inv - 0.5, x_axis=ax, y_axis=bx,
                              len_x=0.0, len_y=0.0, region=regions[contour[ks[i]]]))
    return corners


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def paired_frames(corners: list[Corner], mask: np.ndarray) -> list[IndexFrame]:
    """Card corners where edge rays of two outline corners of one region meet at a right angle.

    A card lying over another has its top-left corner inside the region (white on white), but
    its other two neighbouring corners are usually on the outline: the card's corner is where
    their edges, followed inwards, cross. The two distances are the card's width and height,
    so no size estimate is needed. Only crossings that are index corners (the shorter edge
    along the right-handed x axis) and lie on the mask are kept.
    """
    frames: list[IndexFrame] = []
    h, w = mask.shape
    by_region: dict[int, list[Corner]] = {}
    for c in corners:
        by_region.setdefault(c.region, []).append(c)
    for group in by_region.values():
        if len(group) < 2:
            continue
        origin = np.array([c.point for c in group for _ in (0, 1)])
        dirs = np.array([d for c in group for d in (c.x_axis, c.y_axis)])
        owner = np.repeat(np.arange(len(group)), 2)
        i, j = np.triu_indices(len(origin), 1)
        keep = owner[i] != owner[j]
        i, j = i[keep], j[keep]
        den = _cross(dirs[i], dirs[j])
        ok = np.abs(den) > 0.75
        i, j, den = i[ok], j[ok], den[ok]
        delta = origin[j] - origin[i]
        s = _cross(delta, dirs[j]) / den
        t = _cross(delta, dirs[i]) / den
        short, long_ = np.minimum(s, t), np.maximum(s, t)
        ok = (short > 12) & (long_ / np.maximum(short, 1e-6) > 1.15) & (
            long_ / np.maximum(short, 1e-6) < 1.9)
        for a, b, sa, sb in zip(i[ok], j[ok], s[ok], t[ok], strict=True):
            p = origin[a] + sa * dirs[a]
            mx, my = int(p[0] * MASK_SCALE), int(p[1] * MASK_SCALE)
            if not (0 <= mx < w and 0 <= my < h) or not mask[my, mx]:
                continue
            ea, eb = -dirs[a], -dirs[b]  # from the crossing towards each outline corner
            if _cross(ea, eb) < 0:
                ea, eb, sa, sb = eb, ea, sb, sa
            if sa < sb:  # the right-handed x edge is the short one: an index corner
                frames.append(IndexFrame(p, ea, eb, float(sa), float(sb), False))
    return frames


def _full_edges(corners: list[Corner]) -> list[tuple[np.ndarray, float, float]]:
    """(corner, width, height) of cards whose corner shows both full edges to neighbours.

    Corner B ends corner A's edge when B lies on A's edge ray and one of B's edges points back
    at A; a corner with both edges ended measures its card.
    """
    if len(corners) < 2:
        return []
    pts = np.array([c.point for c in corners])
    axes = np.array([(c.x_axis, c.y_axis) for c in corners])  # (n, 2, 2)
    region = np.array([c.region for c in corners])
    v = pts[None, :, :] - pts[:, None, :]  # v[a, b] = b - a
    same = (region[:, None] == region[None, :]) & ~np.eye(len(corners), dtype=bool)
    out = []
    ends = np.full((len(corners), 2), np.inf)
    for k in (0, 1):
        ray = axes[:, k, :]  # (n, 2) for corner a
        along = np.einsum("abj,aj->ab", v, ray)
        perp = np.abs(ray[:, None, 0] * v[..., 1] - ray[:, None, 1] * v[..., 0])
        back = np.max(np.einsum("bkj,aj->abk", axes, -ray), axis=2)
        ok = same & (along >= 12) & (perp <= 0.08 * along) & (back >= 0.95)
        ends[:, k] = np.where(ok, along, np.inf).min(axis=1)
    for i in np.nonzero(np.isfinite(ends).all(axis=1))[0]:
        short, long_ = sorted(ends[i])
        if 1.15 < long_ / short < 1.9:
            out.append((pts[i], float(short), float(long_)))
    return out


@dataclass(frozen=True)
class CardSize:
    """One hypothesis of the card size across a frame: the frame-wide height and aspect
    (height / width), the card measurements behind it (points ``(n, 2)``, sizes ``(n, 2)`` as
    width, height) for the size near a point (:meth:`near`), and its support (weighted count
    of agreeing measurements)."""

    height: float
    aspect: float
    at: np.ndarray
    wh: np.ndarray
    support: float

    def near(self, p: np.ndarray) -> tuple[float, float]:
        """Card (width, height) near ``p``: the median of the three nearest measurements
        within three card heights (the scale changes across a tilted view) that agree with
        the frame's size (within -25/+33 %) and aspect (within 0.15), else the frame's.

        >>> import numpy as np
        >>> size = CardSize(100.0, 1.4, np.array([[0.0, 0.0], [500.0, 0.0]]),
        ...                 np.array([[70.0, 98.0], [80.0, 112.0]]), 4.0)
        >>> size.near(np.array([480.0, 10.0]))    # the measurement beside it
        (80.0, 112.0)
        >>> [round(v, 1) for v in size.near(np.array([2000.0, 0.0]))]  # none near: the frame's
        [71.4, 100.0]
        """
        return self.near_all([p])[0]

    def near_all(self, points: Sequence[np.ndarray]) -> list[tuple[float, float]]:
        """:meth:`near` for many points at once (the proposals ask it for every corner)."""
        fallback = (self.height / self.aspect, self.height)
        if not len(self.at) or not len(points):
            return [fallback] * len(points)
        d = np.linalg.norm(np.asarray(points)[:, None, :] - self.at[None, :, :], axis=2)
        order = np.argsort(d, axis=1)[:, :3]
        h, w = self.wh[:, 1], self.wh[:, 0]
        # a measurement may serve: it agrees with the frame's size and aspect
        fits = ((h > 0.75 * self.height) & (h < 1.33 * self.height)
                & (np.abs(h / w - self.aspect) < 0.15))
        # the median of the (up to three) serving ones, for all points at once: sorted with
        # the others last, it is the first of one, the mean of two, the middle of three
        # (the values np.median gives, to the bit)
        serve = ((np.take_along_axis(d, order, axis=1) < 3 * self.height) & fits[order])
        # fewer than three measurements: inf in the place of the others (in wh's own type)
        ranked = np.full((len(order), 3, 2), np.inf, self.wh.dtype)
        ranked[:, :order.shape[1]] = np.sort(np.where(serve[..., None], self.wh[order],
                                                      np.inf), axis=1)
        count = serve.sum(1)
        mid = np.where((count == 2)[:, None], (ranked[:, 0] + ranked[:, 1]) / 2,
                       np.where((count == 3)[:, None], ranked[:, 1], ranked[:, 0]))
        return [(float(mw), float(mh)) if n else fallback
                for (mw, mh), n in zip(mid.tolist(), count.tolist(), strict=True)]


def index_frames(corners: list[Corner], size: CardSize, paired: Sequence[IndexFrame] = (),
                 direct_only: bool = False, table: TableSize | None = None) -> list[IndexFrame]:
    """Candidate index-corner frames from outline corners and a card size (module docstring);
    ``direct_only``: only the outline corners themselves, as index corners. With ``table``
    (a calibrated table, :mod:`vision.tablesize`) each corner's card size is the table's
    there, along each of its edges, instead of ``size``'s."""
    frames: list[IndexFrame] = []
    if table is None:
        sizes = [(w, h, w, h) for w, h in size.near_all([c.point for c in corners])]
    else:
        sizes = table.corner_sizes(np.array([c.point for c in corners]).reshape(-1, 2),
                                   np.array([c.x_axis for c in corners]).reshape(-1, 2),
                                   np.array([c.y_axis for c in corners]).reshape(-1, 2)
                                   ).tolist()
    for c, (w, h, w_y, h_x) in zip(corners, sizes, strict=True):
        p, x, y = c.point, c.x_axis, c.y_axis
        if c.len_x <= 1.2 * w:  # x may run along the width: p is an index or far corner
            frames.append(IndexFrame(p, x, y, w, h, True))
            if not direct_only:
                frames.append(IndexFrame(p + w * x + h * y, -x, -y, w, h, False))
        if c.len_y <= 1.2 * w_y and not direct_only:  # y may run along the width: plain corner
            frames.append(IndexFrame(p + w_y * y, -y, x, w_y, h_x, False))
            frames.append(IndexFrame(p + h_x * x, y, -x, w_y, h_x, False))
    return _dedupe([f for f in frames if f.direct] + list(paired)
                   + [f for f in frames if not f.direct])


def card_sizes(corners: list[Corner], measurable: list[np.ndarray], mask: np.ndarray,
               paired: list[IndexFrame]) -> list[CardSize]:
    """Hypotheses of the frame's card size, best supported first (at most
    :data:`MAX_SIZES`); empty when the frame has no region.

    Measurements are corners whose two edges both end at neighbouring corners
    (:func:`_full_edges`, weight :data:`FULL_WEIGHT`) and the crossings of
    :func:`paired_frames` (weight 1); only those whose card rectangle is card stock in
    ``mask`` (:func:`_solid_share` at least :data:`MIN_FILL`), if any is. A hypothesis is
    a mode of their heights (Gaussian support in log height, :data:`MODE_BANDWIDTH`) with the
    measurements within 15 % of it; the next is the mode of the rest, if its support is at
    least :data:`RIVAL_SUPPORT` of the first's. Not one median: the outline of two or three
    overlapped cards has full edges too, 1.4-1.9 times a card, and in frames of many hands
    they were the majority; the reader tells which mode is a card
    (:meth:`vision.recognize.Recognizer.pick_size`). Without measurements, the longest
    straight edges of the ``measurable`` region outlines (:func:`find_corners`) give the one
    hypothesis; without such regions there is none.
    """
    if not measurable:
        return []
    full = _full_edges(corners)
    sizes = full + [(f.point, f.width, f.height) for f in paired]
    if not sizes:
        return [CardSize(float(np.percentile(longest_edges(measurable), 75)), DEFAULT_ASPECT,
                         np.zeros((0, 2)), np.zeros((0, 2)), 0.0)]
    weights = np.array([FULL_WEIGHT] * len(full) + [1.0] * len(paired))
    pts = np.array([p for p, _, _ in sizes])
    wh = np.array([(w, h) for _, w, h in sizes])
    axes = {tuple(c.point): (c.x_axis, c.y_axis) for c in corners}
    axes.update({tuple(f.point): (f.x_axis, f.y_axis) for f in paired})
    xy = np.array([axes[tuple(p)] for p in pts])  # (n, 2, 2)
    solid = _solid(mask)
    # which edge is the width is not recorded: the other way round the rectangle leaves
    # the card, so the better of the two is the share
    ok = np.maximum(_solid_share(solid, pts, xy, wh),
                    _solid_share(solid, pts, xy, wh[:, ::-1])) >= MIN_FILL
    if ok.any():
        pts, wh, weights = pts[ok], wh[ok], weights[ok]
    logh = np.log(wh[:, 1])
    kernel = np.exp(-0.5 * ((logh[:, None] - logh[None, :]) / MODE_BANDWIDTH) ** 2)
    left = np.ones(len(pts), bool)
    out: list[CardSize] = []
    while left.any() and len(out) < MAX_SIZES:
        support = kernel[:, left] @ weights[left]
        support[~left] = -1.0
        centre = logh[int(np.argmax(support))]
        member = left & (np.abs(logh - centre) < 0.15)
        size = CardSize(float(np.median(wh[member, 1])),
                        float(np.median(wh[member, 1] / wh[member, 0])),
                        pts[member], wh[member], float(weights[member].sum()))
        if out and size.support < RIVAL_SUPPORT * out[0].support:
            break
        out.append(size)
        left &= ~member
    return out


#: Least share of a measured card rectangle that must be card stock (:func:`card_sizes`).
MIN_FILL = 0.95
#: Weight of a full-edge measurement against a paired crossing (:func:`card_sizes`).
FULL_WEIGHT = 2.0
#: Width of the support of one measurement, in log height (:func:`card_sizes`).
MODE_BANDWIDTH = 0.08
#: Most card-size hypotheses of a frame (:func:`card_sizes`) ...
MAX_SIZES = 3
#: ... each with at least this share of the best one's support. On 144 calibration frames the
#: reader chose another hypothesis than the best supported in 5, all with 0.33 or more; the
#: weak ones are not worth reading the frame's corners again (about 5 ms each at 720p).
RIVAL_SUPPORT = 0.3


def _solid(mask: np.ndarray) -> np.ndarray:
    """``mask`` with every region filled: card faces print colour (court cards, big pips)
    that is not pale card stock, and a card's rectangle is all card all the same."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    solid = np.zeros_like(mask)
    cv2.drawContours(solid, contours, -1, 255, cv2.FILLED)
    return solid


#: Sample grid of :func:`_solid_share`, inset from the card edges (rounded corners, blur).
_GRID = np.stack(np.meshgrid(np.linspace(0.08, 0.92, 7), np.linspace(0.06, 0.94, 9)),
                 -1).reshape(-1, 2)


def _solid_share(solid: np.ndarray, p: np.ndarray, axes: np.ndarray,
                 wh: np.ndarray) -> np.ndarray:
    """Per rectangle ``p + [0, w] x + [0, h] y`` (``p``: ``(n, 2)`` full-resolution pixels,
    ``axes``: ``(n, 2, 2)`` the x and y unit vectors, ``wh``: ``(n, 2)``), the share of a grid
    of its points that falls on ``solid`` (at :data:`MASK_SCALE`); points outside the frame
    miss.

    >>> import numpy as np
    >>> solid = np.zeros((100, 100), np.uint8); solid[10:50, 10:40] = 255
    >>> axes = np.array([[[1.0, 0.0], [0.0, 1.0]]] * 2)
    >>> _solid_share(solid, np.array([[10.0, 10.0]] * 2), axes,
    ...              np.array([[30.0, 40.0], [60.0, 40.0]])).round(2).tolist()
    [1.0, 0.43]
    """
    u = _GRID[None, :, :1] * wh[:, None, :1]  # (n, k, 1) along x
    v = _GRID[None, :, 1:] * wh[:, None, 1:]
    pts = (p[:, None, :] + u * axes[:, None, 0, :] + v * axes[:, None, 1, :]) * MASK_SCALE
    ix, iy = np.round(pts[..., 0]).astype(int), np.round(pts[..., 1]).astype(int)
    inside = (ix >= 0) & (iy >= 0) & (ix < solid.shape[1]) & (iy < solid.shape[0])
    hits = np.zeros(ix.shape, bool)
    hits[inside] = solid[iy[inside], ix[inside]] > 0
    return hits.mean(1)


def _dedupe(frames: list[IndexFrame]) -> list[IndexFrame]:
    """Drop frames within 0.1 card widths and ~25 degrees of an earlier one (order = priority).

    Frame j is a near copy of an earlier frame i when their points lie within 0.1 of frame
    j's width and their x axes within ~25 degrees (dot product above 0.9). Only pairs within
    the widest frame's reach along x are tested (found by sorting), not all n x n of some
    hundreds; then the frames with an earlier near copy are decided in order: one is dropped
    when a frame it copies was kept."""
    if not frames:
        return []
    pts = np.array([f.point for f in frames])
    xs = np.array([f.x_axis for f in frames])
    widths = np.array([f.width for f in frames])
    # a hair beyond the widest reach: a sorted value plus the reach may round below a
    # partner that the exact test below finds near
    first, later = _pairs_within(pts[:, 0], 0.1 * float(widths.max()) * 1.001)
    dx = pts[first, 0] - pts[later, 0]
    dy = pts[first, 1] - pts[later, 1]
    near = dx * dx + dy * dy < (0.1 * widths[later]) ** 2
    turned = xs[first, 0] * xs[later, 0] + xs[first, 1] * xs[later, 1] > 0.9
    first, later = first[near & turned], later[near & turned]
    keep = np.ones(len(frames), bool)
    if len(later):
        by_later = np.lexsort((first, later))
        first, later = first[by_later], later[by_later]
        copies, starts = np.unique(later, return_index=True)
        for j, earlier in zip(copies, np.split(first, starts[1:]), strict=True):
            if keep[earlier].any():
                keep[j] = False
    return [f for f, k in zip(frames, keep, strict=True) if k]


def _pairs_within(values: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)``, ``i < j``, of ``values`` at most ``reach`` apart.

    >>> [a.tolist() for a in _pairs_within(np.array([0.0, 5.0, 1.0, 9.0]), 1.5)]
    [[0], [2]]
    """
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    end = np.searchsorted(ranked, ranked + reach, side="right")
    start = np.arange(len(ranked)) + 1  # each pair once: the partner later in the ranking
    counts = np.maximum(end - start, 0)
    a = np.repeat(np.arange(len(ranked)), counts)
    b = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + start[a]
    i, j = order[a], order[b]
    return np.minimum(i, j), np.maximum(i, j)


@dataclass(frozen=True)
class Outline:
    """What :func:`outline` finds in a frame: corners, the card-size hypotheses (best
    supported first) and the crossings of :func:`paired_frames`."""

    corners: list[Corner]
    sizes: list[CardSize]
    paired: list[IndexFrame]


def outline(img: np.ndarray) -> Outline:
    """The card mask's outline corners of a BGR frame and the card sizes they measure."""
    mask = card_mask(img)
    corners, measurable = find_corners(mask, extra_arms_px=EXTRA_ARMS_PX)
    paired = paired_frames(corners, mask)
    return Outline(corners, card_sizes(corners, measurable, mask, paired), paired)


def propose(img: np.ndarray, refine_inferred: bool = True, found: Outline | None = None,
            size: int = 0, grads: np.ndarray | None = None,
            table: TableSize | None = None) -> list[IndexFrame]:
    """All candidate index-corner frames in a BGR frame under card-size hypothesis ``size``
    of its outline (``found``, else :func:`outline`), or the card sizes of a calibrated
    ``table``: those of :func:`index_frames`, and (``refine_inferred``) copies of the
    inferred ones moved onto nearby card edges (:func:`vision.refine.refine`, on ``grads``
    if given)."""
    from vision.refine import refine

    found = found if found is not None else outline(img)
    if not found.sizes:
        return []
    frames = index_frames(found.corners, found.sizes[size], found.paired, table=table)
    if refine_inferred:
        frames = _dedupe(frames + refine(img, frames, grads))
    return frames
