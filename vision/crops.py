"""Canonical index-corner crops: the one view of a candidate that the classifier sees."""

from __future__ import annotations

import cv2
import numpy as np

from vision.proposals import IndexFrame

#: Crop size in pixels (width, height) and the card region it covers, in card widths.
CROP_W, CROP_H = 28, 36
U0, U1 = -0.04, 0.36
V0, V1 = -0.04, 0.48


def crop_affine(frame: IndexFrame) -> np.ndarray:
    """2x3 matrix mapping image pixels to crop pixels for ``frame``."""
    w = frame.width
    # crop pixel (i, j) -> card units u = U0 + (i + .5) / CROP_W * (U1 - U0), same for v
    su, sv = (U1 - U0) / CROP_W, (V1 - V0) / CROP_H
    x, y = frame.x_axis * w, frame.y_axis * w
    a = np.column_stack([x * su, y * sv])  # crop -> image linear part
    b = frame.point + x * (U0 + 0.5 * su) + y * (V0 + 0.5 * sv)
    fwd = np.column_stack([a, b])
    return cv2.invertAffineTransform(fwd)


def extract_crops(img: np.ndarray, frames: list[IndexFrame]) -> np.ndarray:
    """``(N, 3, CROP_H, CROP_W)`` float32 crops scaled to [0, 1] (BGR channel order)."""
    out = np.empty((len(frames), 3, CROP_H, CROP_W), np.float32)
    for i, f in enumerate(frames):
        c = cv2.warpAffine(img, crop_affine(f), (CROP_W, CROP_H), flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REPLICATE)
        out[i] = c.transpose(2, 0, 1)
    out *= 1.0 / 255.0
    return out
