"""Optional table calibration: map image points to layout spots (seats, dealer).

Two ways to get the image-to-layout homography:

* four layout points (table millimetres, e.g. four printed marks) and where they appear in the
  image (:meth:`TableCalibration.from_points`), for a camera that does not move;
* ArUco markers printed on the layout at known places (:meth:`TableCalibration.from_aruco`):
  the markers are found in each frame, so a camera that is knocked or re-aimed recalibrates
  itself. At least four known markers must be seen; their centres give the homography
  (RANSAC, so one misplaced marker is outvoted when five or more are seen).

Each card then goes to the nearest spot within ``max_distance`` millimetres. The spot positions
default to the layout that :mod:`vision.synth` draws (:data:`vision.synth.SPOTS`).

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


class CalibrationError(ValueError):
    """The frame cannot be calibrated (too few known markers seen, degenerate points)."""


def aruco_dictionary(name: str):  # noqa: ANN201 - an OpenCV object
    """The predefined ArUco dictionary ``name`` (``"DICT_4X4_50"``, ...)."""
    code = getattr(cv2.aruco, name, None) if name.startswith("DICT_") else None
    if not isinstance(code, int):
        raise CalibrationError(f"unknown ArUco dictionary {name!r} (e.g. DICT_4X4_50)")
    return cv2.aruco.getPredefinedDictionary(code)


def detect_markers(image: np.ndarray, dictionary: str = "DICT_4X4_50") -> dict[int, np.ndarray]:
    """Centre (image pixels) of every ArUco marker of ``dictionary`` found in a BGR frame."""
    detector = cv2.aruco.ArucoDetector(aruco_dictionary(dictionary),
                                       cv2.aruco.DetectorParameters())
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    corners, ids, _ = detector.detectMarkers(grey)
    if ids is None:
        return {}
    return {int(i): c.reshape(4, 2).mean(0) for i, c in zip(ids.ravel(), corners, strict=True)}


def _default_spots() -> dict[str, tuple[float, float]]:
    return {name: (x, y) for name, (x, y, _) in SPOTS.items()}


def homography_jacobian(h: np.ndarray, point: Sequence[float]) -> np.ndarray:
    """The 2x2 derivative of the homography ``h`` (3x3) at ``point`` (in its source plane).

    >>> import numpy as np
    >>> homography_jacobian(np.diag([2.0, 3.0, 1.0]), (5.0, 7.0)).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    x, y = float(point[0]), float(point[1])
    w = h[2, 0] * x + h[2, 1] * y + h[2, 2]
    mapped = (h[:2, :2] @ (x, y) + h[:2, 2]) / w
    return (h[:2, :2] - np.outer(mapped, h[2, :2])) / w


def _jacobian_det(h: np.ndarray, point: np.ndarray) -> float:
    """The determinant of the homography ``h``'s derivative at image ``point``: its sign says
    whether it keeps or reverses the turning sense there."""
    return float(np.linalg.det(homography_jacobian(h, point)))


def orientation_problem(image_to_layout: np.ndarray, image_points: np.ndarray) -> str | None:
    """Why ``image_to_layout`` cannot be a camera's view of the layout, or ``None``.

    Layout millimetres run the way the picture does (x to the right, y down, as the camera
    sees the table from above: :mod:`vision.synth` renders so, at every tilt and turn), so the
    map keeps the turning sense everywhere on the table. Reversed at every calibration point,
    the picture is mirrored (a camera or driver setting); reversed at some only, two points are
    given in the wrong order (the quadrilateral is folded over itself).

    >>> import numpy as np
    >>> square = np.array([[0, 0], [100, 0], [100, 100], [0, 100]], np.float32)
    >>> orientation_problem(np.eye(3), square) is None
    True
    >>> orientation_problem(np.diag([-1.0, 1.0, 1.0]), square)[:60]  # x flipped: a mirror
    'the image points run the other way round from their layout p'
    """
    h = np.asarray(image_to_layout, np.float64)
    dets = [_jacobian_det(h, p) for p in image_points]
    if all(d > 0 for d in dets):
        return None
    if all(d < 0 for d in dets):
        return ("the image points run the other way round from their layout points: the "
                "camera's picture is mirrored (set the camera or its driver not to mirror it, "
                "or check the points)")
    return ("the image points and layout points do not make one view of the table (two of "
            "them are given in a different order, or three lie on a line)")


@dataclass
class TableCalibration:
    """Image-to-layout homography plus the layout positions of the spots."""

    image_to_layout: np.ndarray
    spots: dict[str, tuple[float, float]] = field(default_factory=_default_spots)
    max_distance: float = 150.0
    #: Card width and height on the table (millimetres): standard poker size.
    card_mm: tuple[float, float] = (63.5, 88.9)
    #: Place whole hands (:mod:`vision.handspots`): a long hand's stray end card goes to its
    #: hand's spot; otherwise every card goes to the spot nearest it.
    by_hand: bool = False

    @classmethod
    def from_points(cls, image_points: Sequence[Sequence[float]],
                    layout_points: Sequence[Sequence[float]],
                    spots: Mapping[str, tuple[float, float]] | None = None,
                    max_distance: float = 150.0,
                    card_mm: tuple[float, float] = (63.5, 88.9),
                    by_hand: bool = False) -> TableCalibration:
        """Calibrate from four image points and the four layout points they show."""
        src = np.asarray(image_points, np.float32)
        dst = np.asarray(layout_points, np.float32)
        if src.shape != (4, 2) or dst.shape != (4, 2):
            raise ValueError("calibration needs exactly four image points and four layout points")
        h = cv2.getPerspectiveTransform(src, dst)
        problem = orientation_problem(h, src)
        if problem:
            raise CalibrationError(problem)
        return cls(h, dict(spots) if spots else _default_spots(), max_distance, card_mm, by_hand)

    @classmethod
    def from_aruco(cls, image: np.ndarray, markers: Mapping[int, Sequence[float]],
                   dictionary: str = "DICT_4X4_50",
                   spots: Mapping[str, tuple[float, float]] | None = None,
                   max_distance: float = 150.0, max_error_mm: float = 15.0,
                   card_mm: tuple[float, float] = (63.5, 88.9),
                   by_hand: bool = False) -> TableCalibration:
        """Calibrate from the ArUco markers seen in ``image``; ``markers`` maps each marker id
        to the layout millimetres of its centre. Raises :class:`CalibrationError` when fewer
        than four known markers are seen, or when they do not fit one homography within
        ``max_error_mm``."""
        seen = detect_markers(image, dictionary)
        known = sorted(set(seen) & {int(k) for k in markers})
        if len(known) < 4:
            raise CalibrationError(
                f"ArUco calibration needs four known markers; saw {len(known)} "
                f"({', '.join(map(str, known)) or 'none'}) of {len(markers)}")
        src = np.array([seen[k] for k in known], np.float32)
        dst = np.array([markers[k] for k in known], np.float32)
        h, inliers = cv2.findHomography(src, dst, cv2.RANSAC, max_error_mm)
        if h is None or int(inliers.sum()) < 4:
            raise CalibrationError("the markers seen do not fit one table plane")
        problem = orientation_problem(h, src[inliers.ravel() > 0])
        if problem:
            raise CalibrationError(problem)
        return cls(h, dict(spots) if spots else _default_spots(), max_distance, card_mm, by_hand)

    def to_layout(self, point: Sequence[float]) -> np.ndarray:
        """Layout millimetres of an image point."""
        p = np.array([[point]], np.float32)
        return cv2.perspectiveTransform(p, self.image_to_layout)[0, 0].astype(float)

    def card_centre(self, corners: Sequence[Sequence[float]]) -> np.ndarray:
        """Layout millimetres of a card's centre from its reported corners (its own top-left,
        top-right, bottom-right, bottom-left): the top-left index corner and the card's axes,
        with the card's real size on the table. A reported centre rests on the card size
        estimated in the image, which can be far off when only one index corner was read;
        the corner point and the edge directions are what the recogniser measured."""
        q = np.asarray(corners, np.float32)[[0, 1, 3]].reshape(-1, 1, 2)
        tl, tr, bl = cv2.perspectiveTransform(q, self.image_to_layout).reshape(3, 2)
        x, y = tr - tl, bl - tl
        x, y = x / max(float(np.linalg.norm(x)), 1e-9), y / max(float(np.linalg.norm(y)), 1e-9)
        return (tl + 0.5 * (self.card_mm[0] * x + self.card_mm[1] * y)).astype(float)

    def spot_card_widths(self) -> dict[str, float]:
        """The width in image pixels of a card lying at each spot: the card's width along
        the layout's two axes mapped into the image, the shorter of the two (however the card
        is turned, it is at least that wide there). A camera that shows some spot's cards
        under :data:`vision.quality.SMALL_CARD_PX` reads few of them: this tells an installer
        so from one frame of the empty layout.

        >>> cal = TableCalibration(np.diag([2.0, 2.0, 1.0]), {"seat1": (100.0, 200.0)})
        >>> {k: round(v, 2) for k, v in cal.spot_card_widths().items()}  # 2 mm a pixel
        {'seat1': 31.75}
        """
        to_image = np.linalg.inv(np.asarray(self.image_to_layout, np.float64))
        width = float(self.card_mm[0])
        out = {}
        for name, (x, y) in self.spots.items():
            q = np.array([[x, y], [x + width, y], [x, y + width]], np.float64)
            v = q @ to_image[:, :2].T + to_image[:, 2]
            p = v[:, :2] / v[:, 2:3]
            out[name] = float(min(np.linalg.norm(p[1] - p[0]), np.linalg.norm(p[2] - p[0])))
        return out

    def spot_for(self, point: Sequence[float]) -> str | None:
        """The nearest spot to an image point, or ``None`` if none is within range."""
        return self.spot_at(self.to_layout(point))

    def spot_at(self, q: np.ndarray) -> str | None:
        """The nearest spot to a layout point (millimetres), or ``None`` if none is within
        range."""
        best, best_d = None, self.max_distance
        for name, (x, y) in self.spots.items():
            d = float(np.hypot(q[0] - x, q[1] - y))
            if d < best_d:
                best, best_d = name, d
        return best


def assign_spots(result: dict, calibration: TableCalibration) -> dict:
    """A copy of a recognition result with ``"spot"`` added to every card (placed by
    :meth:`TableCalibration.card_centre`), face-down card and unreadable card (by their
    centres; an unreadable card that carries its corners, with its rank and colour, as a
    card); ``None`` off the layout. With the calibration's ``by_hand`` the stray end of a long
    hand goes to its hand's spot (:mod:`vision.handspots`); otherwise each goes to the spot
    nearest it. Its ``"quality"`` gains the card width at each spot
    (:func:`vision.quality.with_spot_sizes`)."""
    out = dict(result)
    if "quality" in result:  # the frame's condition, and what the calibration says of it
        from vision.quality import with_spot_sizes

        out["quality"] = with_spot_sizes(result["quality"], calibration.spot_card_widths())
    keys = ("cards", "face_down", "unreadable")
    items = [c for key in keys for c in result[key]]
    centres = [calibration.card_centre(c["corners"]) if "corners" in c
               else calibration.to_layout(c["center"]) for c in items]
    spots = [calibration.spot_at(q) for q in centres]
    if calibration.by_hand:
        from vision.handspots import hand_spots

        spots = hand_spots(centres, spots, calibration.spots, calibration.card_mm[1],
                           calibration.max_distance)
    placed = iter(zip(items, spots, strict=True))
    for key in keys:
        out[key] = [{**c, "spot": spot} for c, spot in (next(placed) for _ in result[key])]
    return out
