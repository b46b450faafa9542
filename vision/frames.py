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
degraded sets), the least coloured had 4.0 %; greyscale files have none. A monochrome picture
with a tint (sepia, an infrared cast) has chroma and is not caught; a colour frame with
nothing coloured in it at all (grey felt, no chips, only black cards) would be refused, on
the safe side. A blank frame (black: a covered or failed camera; white; any flat grey)
gets the warning too, which is what the table's cross-check should hear.

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
NO_COLOUR = ("no colour in the frame (a monochrome or night-mode camera, a greyscale file, or "
             "a blank picture): red and black suits cannot be told apart, so no face-up card "
             "is reported")

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


def refuse_codes(result: dict, warning: str = NO_COLOUR) -> dict:
    """``result`` (:meth:`vision.recognize.Recognizer.merge`) with every face-up card moved to
    the refusals and ``warning`` added.

    >>> refuse_codes({"cards": [{"code": "QH", "confidence": 1.0, "center": [1.0, 2.0],
    ...                          "corners": []}], "face_down": [], "unreadable": []})["unreadable"]
    [{'center': [1.0, 2.0]}]
    """
    return {**result, "cards": [],
            "unreadable": result["unreadable"] + [{"center": c["center"]}
                                                  for c in result["cards"]],
            "warning": warning}
