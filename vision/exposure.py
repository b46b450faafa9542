"""Dim frames are brightened before they are read.

The card mask asks card stock to be :data:`vision.proposals.LIGHTER_THAN_FELT` grey levels
lighter than the felt, and the reader was trained and calibrated on frames whose light the
renderer draws between 0.6 and 1.2 times its full level (:func:`vision.synth.render_table`).
A camera set too dark (a fixed exposure under dim table light, a closed iris) shrinks every
difference: 80 frames of `val2b` (59.4 % of their cards read) darkened to half their levels
read 49.2 %, to 0.3 of them 31.0 %; the same frames brought back by the inverse gain, 57.8 %
and 56.1 % (``models/cards_v5.md``, thirty-eighth session).

The frame's brightness is judged on its card stock, the brightest thing on a table: the
:data:`STOCK_SHARE` quantile of the brightest channel of every fourth pixel of every fourth
row (:func:`stock_level`). One below :data:`DARK_STOCK` is scaled (saturating) so that its
stock reaches :data:`TARGET_STOCK`, by at most :data:`MAX_GAIN`, and its quality carries the
``"underexposed"`` warning (:func:`with_exposure`): the camera wants more light or a longer
exposure, whatever the brightening wins back. Rendered frames measure 99 or more (median
221); 212 of 3440 frames of the validation, held-out-typeface and training-design sets are
under 150 and brightened. Chosen by the misread rule (the rule written first,
``/work/vw/RULE38.txt``): on the eight held-out sweeps (5120 frames, 308 of them under 150)
the pick stays 0.997, reading 60.27 % of the cards with 28 misreads against 60.22 % with 29
(the dim frames 48.61 -> 50.13 %); then, read once, `valb` 61.63 -> 61.91 %, `val2b` 58.81 ->
58.87 %, `val1080b` 83.53 -> 83.70 %, the same misreads (2 in the four 720p and 1080p sets).
The 80 frames at half their levels now read 58.39 % of their cards, at 0.3 of them 55.57 %,
no misread in either (one false positive at half).

>>> import numpy as np
>>> dim = np.full((40, 40, 3), 30, np.uint8); dim[10:30, 10:30] = 60   # a card at 60
>>> stock_level(dim), brightened(dim)[1]
(60, 3.3333333333333335)
>>> int(brightened(dim)[0].max())
200
"""

from __future__ import annotations

import cv2
import numpy as np

#: The quantile of the sampled brightest-channel levels taken as the card stock's level ...
STOCK_SHARE = 0.98
#: ... sampling every so many pixels of every so many rows.
SAMPLE_STEP = 4
#: A frame whose stock is below this is brightened: the dimmest 6 % of rendered frames, and
#: every darker one (100, below which no rendered frame lies, was tried first: the same reads
#: on every set the threshold was chosen on, none gained there) ...
DARK_STOCK = 150
#: ... to bring the stock to this level (about the rendered frames' median) ...
TARGET_STOCK = 200
#: ... by at most this gain (a near-black frame, a covered camera, stays dark).
MAX_GAIN = 4.0


def stock_level(img: np.ndarray) -> int:
    """The card stock's grey level in BGR frame ``img`` (module docstring; 0.4 ms a 720p
    frame)."""
    return sampled_level(img, STOCK_SHARE)


def sampled_level(img: np.ndarray, share: float, brightest: bool = True) -> int:
    """The ``share`` quantile of the brightest (or darkest) channel of every
    :data:`SAMPLE_STEP` th pixel of every :data:`SAMPLE_STEP` th row of BGR frame ``img``; 0
    for an empty frame (numpy's maximum over the channels of the strided sample took 6 ms).

    >>> img = np.zeros((40, 40, 3), np.uint8); img[:, 20:] = (10, 200, 90)
    >>> sampled_level(img, 0.9), sampled_level(img, 0.9, brightest=False)
    (200, 10)
    """
    sample = np.ascontiguousarray(img[::SAMPLE_STEP, ::SAMPLE_STEP])
    if not sample.size:
        return 0
    b, g, r = cv2.split(sample)
    level = cv2.max(cv2.max(b, g), r) if brightest else cv2.min(cv2.min(b, g), r)
    counts = cv2.calcHist([level], [0], None, [256], [0, 256]).ravel().cumsum()
    return int(np.searchsorted(counts, share * counts[-1]))


def brightened(img: np.ndarray, level: int | None = None) -> tuple[np.ndarray, float]:
    """``img`` scaled so that a stock under :data:`DARK_STOCK` reaches :data:`TARGET_STOCK`
    (``level``: its :func:`stock_level`, if known), and the gain; the frame itself and 1.0
    where it is bright enough."""
    level = stock_level(img) if level is None else level
    if level >= DARK_STOCK:
        return img, 1.0
    gain = min(TARGET_STOCK / max(level, 1), MAX_GAIN)
    return cv2.convertScaleAbs(img, alpha=gain), gain


def with_exposure(quality: dict, level: int, gain: float) -> dict:
    """``quality`` (:meth:`vision.quality.ImageQuality.to_json`) with the stock level, and
    for a brightened frame its gain and the ``"underexposed"`` warning.

    >>> with_exposure({"warnings": ["blurred"]}, 60, 3.33)
    {'warnings': ['blurred', 'underexposed'], 'stock_level': 60, 'gain': 3.33}
    >>> with_exposure({"warnings": []}, 180, 1.0)
    {'warnings': [], 'stock_level': 180}
    """
    out = {**quality, "stock_level": level}
    if gain > 1.0:
        out["warnings"] = [*quality.get("warnings", []), "underexposed"]
        out["gain"] = round(gain, 2)
    return out
