"""What a frame must be before it is read: an 8-bit BGR image, in colour.

The reader tells a heart from a spade and a diamond from a club partly by the colour of the
ink. A frame without colour (a monochrome camera, a colour camera in its night mode, a
greyscale file) loses that: on the 160 `val` frames turned grey the bundled reader misread
113 of 798 cards it reported at its operating threshold (14 %, against 2 of 1440 in colour),
109 of them a diamond read as the spade of the same rank. So the face-up
cards of a colourless frame are refused (:func:`refuse_codes`), with a warning that says why;
face-down cards and the refusals' positions are still reported.

Colour is measured as chroma, the largest minus the smallest of the three channels of a
pixel, on every fourth pixel of every fourth row (0.2 ms a 720p frame): a frame with chroma of
:data:`MIN_CHROMA` or more in fewer than :data:`MIN_COLOUR_SHARE` (0.5 %) of them has no
colour. Of 1320 colour frames rendered for this project (validation, calibration, clean and
degraded sets), the least coloured had 4.0 %; greyscale files have none. A colour frame with
nothing coloured in it at all (grey felt, no chips, only black cards) would be refused, on
the safe side. A blank frame (black: a covered or failed camera; white; any flat grey)
gets the warning too, which is what the table's cross-check should hear.

A monochrome picture with a tint (an infrared or night-mode cast, a colour map) has chroma,
but its colour follows its brightness alone: :func:`tint_residual_share` takes from each
sampled pixel the mean colour of the pixels about as bright as it (32 levels) and counts
those left with chroma of :data:`MIN_CHROMA`; a frame in which cards were read needs
:data:`MIN_TINT_RESIDUAL` (0.2 %) of them (:func:`colour_follows_brightness`). Measured on
1016 colour frames (`val`, `val2`, `valclean`, `valq`, `val1080all`, `calib` to `calib3`):
at least 1.8 % (median 9.8 %); the same frames made grey and then tinted (a warm infrared
cast, a green night-vision one, the bone and pink colour maps): 0.00 % every one. A sepia
filter of a colour frame lets a little colour through: median 0.06 %, at most 3.0 %; 805 of
the 1016 are caught (the `val` frames that pass still take diamonds for spades: 27 misreads
in 234 reports). The 400 `val` / `val2` frames with every pixel not of the felt's hue made
grey (no chips, no red ink, no print: the felt the only colour) keep at least 0.76 % (median
9.3 %): a card's greys (ink edges, shadows) are as bright as the felt and not green. The
felt of an empty table alone is all one tint, and so is a card image alone (white card, one
ink): :mod:`vision.deckdir` asks only :func:`has_colour`.

>>> import numpy as np
>>> grey = np.full((8, 8, 3), 128, np.uint8)
>>> has_colour(grey)
False
>>> grey[2:6, 2:6] = (40, 40, 200)   # red ink
>>> has_colour(grey)
True
"""

from __future__ import annotations

import cv2
import numpy as np

#: Chroma (8-bit levels) that counts as colour in a pixel.
MIN_CHROMA = 12
#: A frame with colour in fewer than this share of its pixels has no colour.
MIN_COLOUR_SHARE = 0.005
#: The warning put on the result of a frame without colour.
NO_COLOUR = ("no colour in the frame (a monochrome or night-mode camera, tinted or not, a "
             "greyscale file, or a blank picture): red and black suits cannot be told apart, "
             "so no face-up card is reported")

#: The warning put on the result of a frame that reads as a mirror image
#: (:meth:`vision.recognize.Recognizer.looks_mirrored`).
MIRRORED = ("the frame looks mirrored (its card corners read when the picture is flipped left "
            "to right): set the camera or its driver not to mirror the picture; no face-up "
            "card is reported")


def as_bgr(img: np.ndarray) -> np.ndarray:
    """``img`` as an 8-bit, 3-channel BGR frame: a greyscale frame gets three equal channels,
    an alpha channel is dropped, 16-bit levels are scaled down; anything else is refused.

    >>> as_bgr(np.zeros((2, 3), np.uint8)).shape
    (2, 3, 3)
    >>> as_bgr(np.full((1, 1, 4), 65535, np.uint16)).tolist()
    [[[255, 255, 255]]]
    >>> as_bgr(np.zeros((2, 2, 2), np.uint8))
    Traceback (most recent call last):
    ...
    ValueError: a frame must be H x W greyscale or H x W x 3 (BGR) or 4 (BGRA), not (2, 2, 2)
    """
    if img.dtype == np.uint16:
        img = (img // 257).astype(np.uint8)
    elif img.dtype != np.uint8:
        raise ValueError(f"a frame must be 8- or 16-bit, not {img.dtype}")
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.ndim == 3 and img.shape[2] == 3:
        return img
    if img.ndim == 3 and img.shape[2] == 4:
        return np.ascontiguousarray(img[..., :3])
    raise ValueError("a frame must be H x W greyscale or H x W x 3 (BGR) or 4 (BGRA), "
                     f"not {img.shape}")


def colour_share(img: np.ndarray) -> float:
    """The share of pixels (every fourth of every fourth row) whose chroma is
    :data:`MIN_CHROMA` or more, in an 8-bit BGR frame."""
    sample = np.ascontiguousarray(img[::4, ::4])
    if not sample.size:
        return 0.0
    b, g, r = cv2.split(sample)
    spread = cv2.subtract(cv2.max(cv2.max(b, g), r), cv2.min(cv2.min(b, g), r))
    return cv2.countNonZero((spread >= MIN_CHROMA).astype(np.uint8)) / spread.size


def has_colour(img: np.ndarray) -> bool:
    """Whether the suits' ink colour can be seen in ``img`` (8-bit BGR): at least
    :data:`MIN_COLOUR_SHARE` of it has chroma."""
    return colour_share(img) >= MIN_COLOUR_SHARE


#: The share of sampled pixels whose colour must differ from that of the pixels about as
#: bright as them for a frame to have colour (module docstring).
MIN_TINT_RESIDUAL = 0.002


def tint_residual_share(img: np.ndarray) -> float:
    """The share of pixels (every eighth of every eighth row) whose colour differs by
    :data:`MIN_CHROMA` or more from the mean colour of the sampled pixels of their brightness
    (one of 32 levels), in an 8-bit BGR frame: 0 for any picture whose colour is a function of
    its brightness (grey, or grey with a tint).

    >>> ramp = np.repeat(np.arange(0, 256, 4, dtype=np.uint8)[None, :, None], 64, 0)
    >>> tint_residual_share(np.concatenate([ramp // 2, ramp, ramp], axis=2))  # a cyan cast
    0.0
    >>> frame = np.full((64, 64, 3), 80, np.uint8)
    >>> frame[:32] = (40, 120, 40)          # green felt and grey card stock of one brightness
    >>> tint_residual_share(frame)
    1.0
    """
    sample = np.ascontiguousarray(img[::8, ::8]).astype(np.int16)  # 0.2 ms a 720p frame
    if not sample.size:
        return 0.0
    b, g, r = sample[..., 0], sample[..., 1], sample[..., 2]
    level = ((b + 2 * g + r) >> 5).ravel()  # brightness (0-1020) in 32 levels
    u, v = (r - g).ravel().astype(np.float32), (b - g).ravel().astype(np.float32)
    count = np.maximum(np.bincount(level, minlength=32), 1)
    du = u - (np.bincount(level, u, 32) / count)[level]
    dv = v - (np.bincount(level, v, 32) / count)[level]
    return float(np.count_nonzero(du * du + dv * dv >= MIN_CHROMA ** 2)) / level.size


def colour_follows_brightness(img: np.ndarray) -> bool:
    """Whether the colour of a table frame (8-bit BGR) is all one tint that follows its
    brightness (:func:`tint_residual_share` under :data:`MIN_TINT_RESIDUAL`): a monochrome
    camera's picture, tinted or not. Asked only of frames in which cards were read: the felt
    of an empty table under falling light is all one tint too."""
    return tint_residual_share(img) < MIN_TINT_RESIDUAL


def refuse_codes(result: dict, warning: str = NO_COLOUR) -> dict:
    """``result`` (:meth:`vision.recognize.Recognizer.merge`) with every face-up card moved to
    the refusals and ``warning`` added; a refusal keeps its centre alone (a rank and colour
    read in such a frame are no surer than its codes: :mod:`vision.rankcolour`).

    >>> refuse_codes({"cards": [{"code": "QH", "confidence": 1.0, "center": [1.0, 2.0],
    ...                          "corners": []}], "face_down": [],
    ...               "unreadable": [{"center": [5.0, 6.0], "rank": "Q", "color": "red"}]}
    ...              )["unreadable"]
    [{'center': [5.0, 6.0]}, {'center': [1.0, 2.0]}]
    """
    return {**result, "cards": [],
            "unreadable": [{"center": c["center"]}
                           for c in [*result["unreadable"], *result["cards"]]],
            "warning": warning}
