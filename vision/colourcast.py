"""A camera whose white balance is set for another light: the card stock, measured inside the
cards the frame reads, tinted.

Casino light is often warmer than daylight, and a camera balanced once for other lamps, or
left on a fixed preset, sees every card tinted. The reader pays for it: 80 frames of `val2b`
under a tungsten cast read 49.7 % of their cards against 60.1 % as rendered
(``benchmarks/camera_conditions.py``, ``models/cards_v5.md``, thirty-ninth session).
Balancing such frames in the reader was tried and dropped (a wrong card is worse than none);
the camera's own white balance is the fix, and :func:`with_colour` says when it is needed.

The stock is measured inside the cards read, not over the card mask (which takes in glare,
chips and yellow layout print, and in a frame of few cards is tinted by them: the thirty-ninth
session's measure flagged untinted frames of a plastic deck). Each reported card's outline is
shrunk to :data:`INNER` of itself about its centre (so no felt is inside) and every
:data:`SAMPLE_STEP` th pixel of every :data:`SAMPLE_STEP` th row within it is taken; the stock
is the per-channel median of the brighter half of them all (pips and court pictures are the
darker half). A stock brighter in one channel than in another by more than :data:`CAST_LIMIT`
raises the ``"colour_cast"`` warning. The limit comes from the renderer, not from frames: it
draws each channel's white balance between 0.85 and 1.15, at most 1.35 apart.

    >>> import numpy as np
    >>> img = np.full((200, 200, 3), (30, 90, 20), np.uint8)        # green felt
    >>> img[40:160, 60:140] = (110, 176, 220)                        # a white card, tungsten
    >>> card = {"corners": [[60, 40], [139, 40], [139, 159], [60, 159]]}
    >>> with_colour({"warnings": []}, stock_colour(img, [card]))
    {'warnings': ['colour_cast'], 'stock_bgr': [110, 176, 220]}
    >>> img[40:160, 60:140] = (226, 232, 235)                        # the same card, balanced
    >>> with_colour({"warnings": []}, stock_colour(img, [card]))
    {'warnings': [], 'stock_bgr': [226, 232, 235]}
    >>> stock_colour(img, []) is None                                # no card read: no measure
    True
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

#: Each card's outline shrunk to this share of itself about its centre.
INNER = 0.8
#: Every so many pixels of every so many rows are sampled ...
SAMPLE_STEP = 4
#: ... and at least this many are needed for a measure.
MIN_PIXELS = 50
#: Channels of the stock further apart than this ratio raise ``"colour_cast"``.
CAST_LIMIT = 1.35


def stock_colour(img: np.ndarray, cards: Sequence[dict]) -> tuple[int, int, int] | None:
    """The card stock's (B, G, R) in BGR frame ``img``, measured inside ``cards`` (reported
    cards, each with its ``"corners"`` in ``img``'s pixels); ``None`` where they cover fewer
    than :data:`MIN_PIXELS` samples."""
    if not cards:
        return None
    small = img[::SAMPLE_STEP, ::SAMPLE_STEP]
    mask = np.zeros(small.shape[:2], np.uint8)
    for card in cards:
        quad = np.asarray(card["corners"], np.float32)
        centre = quad.mean(0)
        inner = (centre + INNER * (quad - centre)) / SAMPLE_STEP
        cv2.fillConvexPoly(mask, np.round(inner).astype(np.int32), 255)
    pixels = small[mask > 0]
    if len(pixels) < MIN_PIXELS:
        return None
    b, g, r = (int(v) for v in brighter_half(pixels))
    return b, g, r


def brighter_half(pixels: np.ndarray) -> np.ndarray:
    """The per-channel median of the brighter half of ``pixels`` (``(N, 3)``, by the sum of
    their channels): a stock's colour, the darker print on it left out.

    >>> brighter_half(np.array([[10, 10, 10], [200, 210, 220], [190, 200, 230]])).tolist()
    [195.0, 205.0, 225.0]
    """
    brightness = pixels.sum(1, dtype=np.int32)
    return np.median(pixels[brightness >= np.median(brightness)], axis=0)


def tinted(stock: Sequence[float]) -> bool:
    """Whether a stock's channels are more than :data:`CAST_LIMIT` apart.

    >>> tinted((110, 176, 220)), tinted((226, 232, 235))
    (True, False)
    """
    return max(stock) > CAST_LIMIT * max(min(stock), 1)


def with_colour(quality: dict, stock: tuple[int, int, int] | None) -> dict:
    """``quality`` (:meth:`vision.quality.ImageQuality.to_json`) with the measured stock
    (``"stock_bgr"``) and, where it is :func:`tinted`, the ``"colour_cast"`` warning;
    unchanged where nothing was measured."""
    if stock is None:
        return quality
    out = {**quality, "stock_bgr": list(stock)}
    if tinted(stock):
        out["warnings"] = [*quality.get("warnings", []), "colour_cast"]
    return out
