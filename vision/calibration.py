"""Optional table calibration: map image points to layout spots (seats, dealer).

Given four layout points (table millimetres, e.g. four printed marks) and where they appear in
the image, a homography maps every image point onto the layout; each card goes to the nearest
spot within ``max_distance`` millimetres. The spot positions default to the layout that
:mod:`vision.synth` draws (:data:`vision.synth.SPOTS`).

    >>> cal = TableCalibration.from_points(image_pts, layout_pts)  # doctest: +SKIP
    >>> assign_spots(result, cal)["cards"][0]["spot"]  # doctest: +SKIP
    'seat3'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.synth import SPOTS


def _default_spots() -> dict[str, tuple[float, float]]:
    return {name: (x, y) for name, (x, y, _) in SPOTS.items()}


@dataclass
class TableCalibration:
    """Image-to-layout homography plus the layout positions of the spots."""

    image_to_layout: np.ndarray
    spots: dict[str, tuple[float, float]] = field(default_factory=_default_spots)
    max_distance: float = 150.0

    @classmethod
    def from_points(cls, image_points: Sequence[Sequence[float]],
                    layout_points: Sequence[Sequence[float]],
                    spots: Mapping[str, tuple[float, float]] | None = None,
                    max_distance: float = 150.0) -> TableCalibration:
        """Calibrate from four image points and the four layout points they show."""
        src = np.asarray(image_points, np.float32)
        dst = np.asarray(layout_points, np.float32)
        if src.shape != (4, 2) or dst.shape != (4, 2):
            raise ValueError("calibration needs exactly four image points and four layout points")
        h = cv2.getPerspectiveTransform(src, dst)
        return cls(h, dict(spots) if spots else _default_spots(), max_distance)

    def to_layout(self, point: Sequence[float]) -> np.ndarray:
        """Layout millimetres of an image point."""
        p = np.array([[point]], np.float32)
        return cv2.perspectiveTransform(p, self.image_to_layout)[0, 0].astype(float)

    def spot_for(self, point: Sequence[float]) -> str | None:
        """The nearest spot to an image point, or ``None`` if none is within range."""
        q = self.to_layout(point)
        best, best_d = None, self.max_distance
        for name, (x, y) in self.spots.items():
            d = float(np.hypot(q[0] - x, q[1] - y))
            if d < best_d:
                best, best_d = name, d
        return best


def assign_spots(result: dict, calibration: TableCalibration) -> dict:
    """A copy of a recognition result with ``"spot"`` added to every card and face-down card."""
    out = dict(result)
    for key in ("cards", "face_down", "unreadable"):
        out[key] = [{**c, "spot": calibration.spot_for(c["center"])} for c in result[key]]
    return out
