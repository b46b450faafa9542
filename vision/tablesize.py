"""Card sizes in a frame from a calibrated table, instead of estimated from the frame.

Without calibration the recogniser estimates the card size from the outlines it finds
(:func:`vision.proposals.card_sizes`: one size for the frame, refined near each corner by the
measurements beside it). Under a tilted camera cards near it are up to twice the size of
those far from it, and where no measurement lies near a corner the frame's size serves: on
frames of the training designs 38 % of the readable cards had a local width estimate 10 % or
more off, 17 % 20 % or more, and recall fell with the error (``models/cards_v5.md``,
twenty-eighth session). A calibrated table (:class:`vision.calibration.TableCalibration`:
four layout points or ArUco markers) knows the plane of the table, so the size of a card of
known millimetres at every point of the frame, along every direction, follows exactly.

:meth:`TableSize.lengths` is that: the pixel length of so many table millimetres from an image
point along the table direction the image shows in a given direction (a card edge seen in the
frame). :meth:`TableSize.corner_sizes` gives an outline corner's card width and height both
ways round (its x edge along the card's width, or its y edge).

Measured with the bundled reader (twenty-eighth session): +2.5 points of the held-out
typefaces' cards at every threshold and a third of the false positives, but its misreads
grew with the cards it read (36 against 33 at 0.997 on 5760 frames), so that the misread rule
asks 0.999 of such reads, where they read fewer cards than the frame's own sizes at 0.997.
So it is offered (``Recognizer.recognize(img, table)``, ``vision-eval --calibrated``,
``vision.sweep --calibrated``), and the table's camera does not use it.

    >>> import numpy as np
    >>> size = TableSize(np.diag([0.5, 0.5, 1.0]), (63.0, 88.0))   # 2 pixels a millimetre
    >>> size.lengths(np.array([[100.0, 100.0]]), np.array([[1.0, 0.0]]), 63.0).tolist()
    [126.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TableSize:
    """The table plane (``image_to_layout``: the 3x3 homography from image pixels to layout
    millimetres) and the card's width and height on it (millimetres)."""

    image_to_layout: np.ndarray
    card_mm: tuple[float, float]

    @classmethod
    def from_calibration(cls, calibration) -> TableSize:  # noqa: ANN001 - TableCalibration
        """The table of a :class:`vision.calibration.TableCalibration` (its homography and
        card size)."""
        return cls(np.asarray(calibration.image_to_layout, np.float64),
                   tuple(float(v) for v in calibration.card_mm))

    def scaled(self, fx: float, fy: float) -> TableSize:
        """The same table in a frame scaled by ``fx`` across and ``fy`` down (a frame read
        smaller than it was taken, :mod:`vision.framesize`).

        >>> import numpy as np
        >>> size = TableSize(np.diag([0.5, 0.5, 1.0]), (63.0, 88.0))   # 2 pixels a millimetre
        >>> size.scaled(0.5, 0.5).lengths(np.array([[50.0, 50.0]]), np.array([[1.0, 0.0]]),
        ...                               63.0).tolist()
        [63.0]
        """
        return TableSize(np.asarray(self.image_to_layout, np.float64)
                         @ np.diag([1.0 / fx, 1.0 / fy, 1.0]), self.card_mm)

    def lengths(self, points: np.ndarray, directions: np.ndarray, mm: float) -> np.ndarray:
        """``(n,)``: for each image point ``(n, 2)`` and image direction ``(n, 2)``, the pixel
        distance from the point to where ``mm`` table millimetres along the table direction
        shown in that direction end (exact under perspective: the far end is mapped back,
        not the near end's scale extended).

        Under a tilted view a millimetre across the tilt is shorter than one along it:

        >>> import numpy as np
        >>> tilted = TableSize(np.diag([1.0, 2.0, 1.0]), (63.0, 88.0))  # y squeezed twice
        >>> tilted.lengths(np.zeros((2, 2)), np.eye(2), 10.0).tolist()
        [10.0, 5.0]
        """
        h = np.asarray(self.image_to_layout, np.float64)
        p = np.asarray(points, np.float64).reshape(-1, 2)
        u = np.asarray(directions, np.float64).reshape(-1, 2)
        layout = _apply(h, p)
        # the table direction the image direction shows: the homography's derivative at p
        w = p @ h[2, :2] + h[2, 2]
        jac = (h[None, :2, :2] - layout[:, :, None] * h[None, 2:3, :2]) / w[:, None, None]
        d = np.einsum("nij,nj->ni", jac, u)
        d /= np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
        far = _apply(np.linalg.inv(h), layout + mm * d)
        return np.linalg.norm(far - p, axis=1)

    def corner_sizes(self, points: np.ndarray, x_axes: np.ndarray, y_axes: np.ndarray
                     ) -> np.ndarray:
        """``(n, 4)`` per outline corner: the card's width along its x axis and height along
        its y axis (the x edge runs along the width), then its width along y and height
        along x (the y edge does), in pixels."""
        w, h = self.card_mm
        return np.stack([self.lengths(points, x_axes, w), self.lengths(points, y_axes, h),
                         self.lengths(points, y_axes, w), self.lengths(points, x_axes, h)],
                        axis=1)


def _apply(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Points ``(n, 2)`` through the homography ``h``."""
    v = pts @ h[:, :2].T + h[:, 2]
    return v[:, :2] / v[:, 2:3]


def from_labels(labels: dict) -> TableSize:
    """The table of a labelled frame (:mod:`vision.synth`'s labels, ``sample_images/``): its
    ``table_to_image`` homography, and the card's millimetres measured on its labelled cards
    (their corners taken to the layout: the median width and height), as a casino configures
    its own deck's size. Raises ``ValueError`` for labels without a homography or cards.

    >>> import numpy as np
    >>> labels = {"table_to_image": np.diag([2.0, 2.0, 1.0]).tolist(),
    ...           "cards": [{"corners": [[0, 0], [126, 0], [126, 176], [0, 176]]}]}
    >>> from_labels(labels).card_mm
    (63.0, 88.0)
    """
    if not labels.get("table_to_image") or not labels.get("cards"):
        raise ValueError("these labels carry no table homography or no card")
    to_image = np.asarray(labels["table_to_image"], np.float64)
    to_layout = np.linalg.inv(to_image)
    quads = np.array([c["corners"] for c in labels["cards"]], np.float64)
    q = _apply(to_layout, quads.reshape(-1, 2)).reshape(-1, 4, 2)
    width = (np.linalg.norm(q[:, 1] - q[:, 0], axis=1) + np.linalg.norm(q[:, 2] - q[:, 3], axis=1))
    height = (np.linalg.norm(q[:, 3] - q[:, 0], axis=1) + np.linalg.norm(q[:, 2] - q[:, 1], axis=1))
    return TableSize(to_layout, (round(float(np.median(width)) / 2, 1),
                                 round(float(np.median(height)) / 2, 1)))
