"""Move inferred index-corner frames onto the card edges next to them.

A frame inferred from the card size (:func:`vision.proposals.index_frames`: the far corner of a
card, or the corner of a card under another) is off by the error of the size estimate, which
under a tilted camera is often 0.1-0.4 card widths: too far for the classifier, which is
trained on frames within 0.12 card widths. A card corner has two straight edges running from
it along the frame's axes (card on felt, or the shadow line of a card on a card), so the
image gradient across each edge is strong along its whole length. :func:`refine` searches a
grid of offsets around each inferred frame (coarse, then finer) for the place where both edges
are strongest (the second-weakest of eight samples along each edge, so one glyph cannot make
an edge) and proposes a copy of the frame there when it is clearly better than the frame's
own place; and likewise at later peaks (:data:`SEARCH_PEAKS` in all), each the best place at
least :data:`PEAK_GAP` card widths from those before and at least :data:`PEAK_SHARE` as strong
as the first: in a hand the edges of the card above are often stronger than the shadow line
of the corner searched for (with a second peak, of 110 cards without a candidate in 80 `valq`
frames, 24 got one). The original frame stays a candidate too.

    >>> import numpy as np
    >>> from vision.proposals import IndexFrame
    >>> img = np.full((200, 200, 3), 60, np.uint8)
    >>> img[50:122, 40:90] = 230  # a card 50 px wide whose top-left corner is at (40, 50)
    >>> guess = IndexFrame(np.array([49.0, 57.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0]),
    ...                    50.0, 72.0, False)
    >>> [f.point.round().tolist() for f in refine(img, [guess])]
    [[39.0, 50.0]]
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.proposals import IndexFrame

#: Sample positions along the edge that runs along the card's width / height (card widths).
ALONG_WIDTH = np.linspace(0.06, 0.34, 8)
ALONG_HEIGHT = np.linspace(0.06, 0.44, 8)


def _grid(values: np.ndarray) -> np.ndarray:
    a, b = np.meshgrid(values, values, indexing="ij")
    return np.stack([a.reshape(-1), b.reshape(-1)], 1)


#: Offsets searched (card widths along the frame's x and y axes): coarse, then finer twice.
COARSE = _grid(np.linspace(-0.4, 0.4, 9))
#: The coarse grid's own place (offset exactly 0, 0): its score is the frame's own score.
HERE = int(np.flatnonzero((COARSE == 0.0).all(1))[0])
#: Distances between the coarse offsets (card widths): ``[i, j]`` from offset i to offset j.
_COARSE_GAPS = np.linalg.norm(COARSE[None, :, :] - COARSE[:, None, :], axis=2)
FINE = (_grid(np.array([-0.05, 0.0, 0.05])), _grid(np.array([-0.025, 0.0, 0.025])))
#: A moved frame is proposed only if its edge score is at least this (8-bit grey gradient,
#: Sobel 3x3) ...
MIN_EDGE = 20.0
#: ... and this many times the score at the frame's own place ...
BETTER_BY = 1.3
#: ... and it moved at least this far (card widths): less is within the classifier's reach.
MIN_MOVE = 0.08
#: Places proposed per frame: the best, and each next best at least PEAK_GAP card widths
#: from those before ...
SEARCH_PEAKS = 4
PEAK_GAP = 0.2
#: ... where its coarse score is at least this share of the first's. On the 380 labelled
#: calibration frames at 0.993 (``models/cards_v4.md``): two peaks 63.99 %, four 64.87 %
#: (+4.7 ms a 720p frame), four with this share 64.56 % (+2 ms), 1 misread in each.
PEAK_SHARE = 0.4


def gradients(img: np.ndarray) -> np.ndarray:
    """Horizontal and vertical Sobel gradients of the lightly smoothed grey frame, as the two
    channels of one image (16-bit integers: the 8-bit smoothing and the 16-bit Sobel are
    several times faster than float; one image, so one remap samples both)."""
    grey = cv2.GaussianBlur(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), (0, 0), 0.8)
    return cv2.merge([cv2.Sobel(grey, cv2.CV_16S, 1, 0, ksize=3),
                      cv2.Sobel(grey, cv2.CV_16S, 0, 1, ksize=3)])


def _edge_scores(grads: np.ndarray, p: np.ndarray, x: np.ndarray,
                 y: np.ndarray, w: np.ndarray, offsets: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Edge score ``(F, G)`` and corner point ``(F, G, 2)`` of each frame moved by each of its
    offsets ``(F, G, 2)``; ``grads`` as :func:`gradients` makes them."""
    p, x, y, w = (a.astype(np.float32) for a in (p, x, y, w))
    offsets = offsets.astype(np.float32)
    n_frames, n_offsets = offsets.shape[:2]
    ww = w[:, None, None]
    xf, yf = x[:, None, :], y[:, None, :]  # (F, 1, 2)
    base = p[:, None, :] + (offsets[..., :1] * xf + offsets[..., 1:] * yf) * ww
    k = len(ALONG_WIDTH)
    # sample points (F, 2k, G), x and y coordinates apart: the first k along the width edge,
    # the next k along the height edge, each for every offset; a row of the maps per frame,
    # so one remap samples both gradient channels at all of them (at most 16 x 81 columns).
    # Sample-major, so that each sample's scores over the offsets are one contiguous run for
    # second_weakest below (remap reads each point alike in any order).
    steps_x = (ALONG_WIDTH.astype(np.float32)[None, :] * w[:, None])[:, :, None]  # (F, k, 1)
    steps_y = (ALONG_HEIGHT.astype(np.float32)[None, :] * w[:, None])[:, :, None]
    maps = []
    for c in (0, 1):
        m = np.empty((n_frames, 2 * k, n_offsets), np.float32)
        m[:, :k] = base[:, None, :, c] + steps_x * x[:, None, None, c]
        m[:, k:] = base[:, None, :, c] + steps_y * y[:, None, None, c]
        maps.append(m.reshape(n_frames, -1))
    both = np.concatenate([
        cv2.remap(grads, maps[0][a:a + 32766], maps[1][a:a + 32766], cv2.INTER_LINEAR,
                  borderMode=cv2.BORDER_CONSTANT)
        for a in range(0, n_frames, 32766)])  # remap's maps stay under 32767 rows
    both = both.reshape(n_frames, 2 * k, n_offsets, 2).astype(np.float32)
    sx, sy = both[..., 0], both[..., 1]
    # the gradient across each edge: along the width edge its normal is y, and vice versa;
    # unsigned: a card's shadow on another card is a thin dark line, whose two sides step
    # opposite ways
    across_x = np.abs(sx[:, :k] * y[:, None, None, 0] + sy[:, :k] * y[:, None, None, 1])
    across_y = np.abs(sx[:, k:] * x[:, None, None, 0] + sy[:, k:] * x[:, None, None, 1])
    return np.minimum(second_weakest(across_x), second_weakest(across_y)), base


def second_weakest(v: np.ndarray) -> np.ndarray:
    """The second-smallest of ``v`` ``(F, k, G)`` along its middle axis (``k`` >= 2; the
    smallest again when it occurs twice): ``(F, G)``, as ``np.partition(v, 1, axis=1)[:, 1]``
    gives it, by a running smallest and second-smallest over the ``k`` slices (each a
    contiguous block per frame: a quarter of the time of the partition of short rows).

    >>> import numpy as np
    >>> v = np.array([[[3.0, 1.0], [1.0, 3.0], [2.0, 5.0], [1.0, 4.0]]])   # F=1, k=4, G=2
    >>> second_weakest(v).tolist()
    [[1.0, 3.0]]
    """
    first = np.minimum(v[:, 0], v[:, 1])
    second = np.maximum(v[:, 0], v[:, 1])
    for i in range(2, v.shape[1]):
        np.minimum(second, np.maximum(first, v[:, i]), out=second)
        np.minimum(first, v[:, i], out=first)
    return second


def refine(img: np.ndarray, frames: list[IndexFrame],
           grads: np.ndarray | None = None) -> list[IndexFrame]:
    """Moved copies of the inferred (not ``direct``) frames whose edges lie elsewhere
    (``grads``: the frame's :func:`gradients`, when already made)."""
    h, w_img = img.shape[:2]

    def reachable(f: IndexFrame) -> bool:  # its search window overlaps the image
        m = 0.45 * f.width
        return -m < f.point[0] < w_img + m and -m < f.point[1] < h + m

    inferred = [f for f in frames if not f.direct and reachable(f)]
    if not inferred:
        return []
    grads = gradients(img) if grads is None else grads
    p = np.array([f.point for f in inferred], np.float64)
    x = np.array([f.x_axis for f in inferred], np.float64)
    y = np.array([f.y_axis for f in inferred], np.float64)
    w = np.array([f.width for f in inferred], np.float64)
    n = len(inferred)
    coarse, _ = _edge_scores(grads, p, x, y, w, np.broadcast_to(COARSE, (n, *COARSE.shape)))
    here = coarse[:, HERE]  # each offset is scored on its own: the same score as alone
    starts = [coarse.argmax(1)]
    left = coarse
    for _ in range(SEARCH_PEAKS - 1):
        # the next peak: the best coarse offset at least PEAK_GAP from those before
        gap = _COARSE_GAPS[starts[-1]]
        left = np.where(gap >= PEAK_GAP, left, -1.0)
        starts.append(left.argmax(1))
    first = coarse[np.arange(n), starts[0]]
    # A later peak is searched only where it is nearly as strong as the first. The peaks'
    # fine searches run as one: every frame and offset is scored on its own, so the scores
    # and the moved copies (in peak order) are those of one search per peak, in a quarter of
    # the calls.
    sels = [np.arange(n) if k == 0 else
            np.flatnonzero(coarse[np.arange(n), start] >= PEAK_SHARE * first)
            for k, start in enumerate(starts)]
    sel = np.concatenate(sels)
    best_offset = np.concatenate([COARSE[start[s]] for start, s in zip(starts, sels,
                                                                       strict=True)])
    rows = np.arange(len(sel))
    for step in FINE:
        offsets = best_offset[:, None, :] + step[None]
        fine, points = _edge_scores(grads, p[sel], x[sel], y[sel], w[sel], offsets)
        j = fine.argmax(1)
        best_offset = offsets[rows, j]
    best, moved = fine[rows, j], best_offset
    ok = (best >= MIN_EDGE) & (best >= BETTER_BY * here[sel])
    ok &= np.hypot(moved[:, 0], moved[:, 1]) >= MIN_MOVE
    # built field by field: dataclasses.replace costs five times as much, for some hundreds
    # of copies a frame
    moved_copies = []
    for i in np.flatnonzero(ok):
        f = inferred[sel[i]]
        moved_copies.append(IndexFrame(points[i, j[i]], f.x_axis, f.y_axis, f.width, f.height,
                                       f.direct))
    return moved_copies
