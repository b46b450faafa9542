"""Draw what the reader made of a frame onto a copy of it: each card read with its outline,
code and confidence, each face-down card, each place a card could not be read; with a table
calibration the layout's areas (seats and dealer) and each card's area; with labels (a lab's
suite), its misreads, the readable cards it missed and its reports on no card.

What a person checks by eye: an installer that the four calibration points put the seats
where the layout prints them; a lab where its suite's misses lie; surveillance what the
camera saw. ``recognize --annotate DIR`` and ``vision-eval --annotate DIR`` write them.

    >>> import numpy as np
    >>> frame = np.zeros((720, 1280, 3), np.uint8)
    >>> result = {"cards": [{"code": "QH", "confidence": 0.9991, "center": [640, 360],
    ...                      "corners": [[615, 324], [665, 324], [665, 396], [615, 396]]}],
    ...           "face_down": [{"center": [300, 300]}], "unreadable": [], "elapsed_ms": 41.0}
    >>> drawn = annotate(frame, result)
    >>> drawn.shape == frame.shape, bool(frame.any())        # a copy: the frame is left alone
    (True, False)
    >>> tuple(int(v) for v in drawn[324, 640]) == READ    # the card's top edge, in READ's colour
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

# Colours (BGR), chosen apart from each other and from green, red and blue felt.
READ = (80, 220, 80)
MISREAD = (60, 60, 255)
MISSED = (0, 220, 255)
FALSE_POSITIVE = (255, 80, 255)
FACE_DOWN = (255, 170, 40)
UNREADABLE = (0, 150, 255)
AREA = (235, 235, 235)
TEXT = (255, 255, 255)
TEXT_BACK = (25, 25, 25)

FONT = cv2.FONT_HERSHEY_SIMPLEX
#: JPEG quality of a drawing written by :func:`save`: its small text stays sharp at a sixth
#: of a PNG's size.
QUALITY = 92


@dataclass
class _Labels:
    """Text boxes placed so far on one drawing, and the marks they should not cover: a new
    label goes where it covers no label and as few marks as it can (a hand's cards lie a
    fifth of a card apart, closer than their labels are wide), joined to its anchor by a
    thin line when moved off it."""

    scale: float
    boxes: list[tuple[int, int, int, int]] = field(default_factory=list)
    marks: list[tuple[int, int, int, int]] = field(default_factory=list)

    def place(self, img: np.ndarray, text: str, anchor: Sequence[float],
              colour: tuple[int, int, int]) -> None:
        """``text`` near ``anchor``, inside the image: of the places around it (above first,
        then the seven other ways, each way further out, six steps at most), the first that
        covers no label and no mark, else the one covering the fewest labels, then the fewest
        marks, then the nearest."""
        thick = max(1, round(self.scale * 2))
        (tw, th), base = cv2.getTextSize(text, FONT, self.scale, thick)
        pad = max(2, round(3 * self.scale))
        w, h = tw + 2 * pad, th + base + 2 * pad
        ax, ay = int(round(anchor[0])), int(round(anchor[1]))
        gap = round(8 * self.scale / 0.42)
        best, best_cost = (0, 0, w, h), None
        for ring in range(6):
            far = gap + ring * (h + 2)
            for dx, dy in ((0, -1), (0, 1), (-1, 0), (1, 0), (-1, -1), (1, -1), (-1, 1),
                           (1, 1)):
                x = ax - w // 2 + dx * (far + w // 2)
                y = ay - h // 2 + dy * (far + h // 2)
                x = int(np.clip(x, 0, max(0, img.shape[1] - w)))
                y = int(np.clip(y, 0, max(0, img.shape[0] - h)))
                box = (x, y, x + w, y + h)
                cost = (1000 * sum(_overlap(box, b) for b in self.boxes)
                        + 10 * sum(_overlap(box, m) for m in self.marks) + ring)
                if best_cost is None or cost < best_cost:
                    best, best_cost = box, cost
            if best_cost is not None and best_cost < 10:
                break  # free of labels and marks at this distance
        self.boxes.append(best)
        x0, y0, x1, y1 = best
        nearest = (int(np.clip(ax, x0, x1)), int(np.clip(ay, y0, y1)))
        if abs(nearest[0] - ax) + abs(nearest[1] - ay) > gap + 2:
            cv2.line(img, (ax, ay), nearest, colour, 1, cv2.LINE_AA)
        cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), TEXT_BACK, -1)
        cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), colour, 1)
        cv2.putText(img, text, (x0 + pad, y1 - pad - base), FONT, self.scale, TEXT, thick,
                    cv2.LINE_AA)


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _outline(img: np.ndarray, corners: Sequence[Sequence[float]],
             colour: tuple[int, int, int], thick: int) -> None:
    pts = np.round(np.asarray(corners, np.float64)).astype(np.int32).reshape(-1, 1, 2)
    cv2.polylines(img, [pts], True, colour, thick, cv2.LINE_AA)


def _ring(img: np.ndarray, centre: Sequence[float], radius: float,
          colour: tuple[int, int, int], thick: int) -> None:
    c = (int(round(centre[0])), int(round(centre[1])))
    cv2.circle(img, c, max(3, int(round(radius))), colour, thick, cv2.LINE_AA)


def _cross(img: np.ndarray, centre: Sequence[float], size: float,
           colour: tuple[int, int, int], thick: int) -> None:
    x, y, s = int(round(centre[0])), int(round(centre[1])), max(3, int(round(size)))
    cv2.line(img, (x - s, y - s), (x + s, y + s), colour, thick, cv2.LINE_AA)
    cv2.line(img, (x - s, y + s), (x + s, y - s), colour, thick, cv2.LINE_AA)


def _top(corners: Sequence[Sequence[float]] | None, centre: Sequence[float]) -> list[float]:
    """Where a card's label points: its outline's highest point, else its centre."""
    if not corners:
        return [float(centre[0]), float(centre[1])]
    q = np.asarray(corners, np.float64)
    return q[int(np.argmin(q[:, 1]))].tolist()


def _card_width(result: dict, height: int) -> float:
    """The frame's card width in pixels (the reported cards' median), for the size of the
    marks drawn where no outline is known."""
    widths = [float(np.linalg.norm(np.subtract(c["corners"][1], c["corners"][0])))
              for c in result.get("cards", []) if c.get("corners")]
    return float(np.median(widths)) if widths else 50.0 * height / 720


def _spot(item: dict) -> str:
    if "spot" not in item:
        return ""
    return f" {item['spot'] or 'off-layout'}"


def _box(points: np.ndarray, margin: float = 0.0) -> tuple[int, int, int, int]:
    lo, hi = points.min(0) - margin, points.max(0) + margin
    return int(lo[0]), int(lo[1]), int(np.ceil(hi[0])), int(np.ceil(hi[1]))


def area_map(calibration, size: tuple[int, int], step: int = 4) -> np.ndarray:  # noqa: ANN001
    """Which layout area each pixel of a ``size`` (width, height) frame lies in, as
    :meth:`vision.calibration.TableCalibration.spot_at` places a point (the nearest spot
    within ``max_distance`` millimetres): ``(height, width)`` of indices into
    ``calibration.spots``, -1 for none; worked out every ``step`` pixels.

    >>> from vision.calibration import TableCalibration
    >>> cal = TableCalibration(np.diag([2.0, 2.0, 1.0]), {"a": (100.0, 100.0),
    ...                        "b": (300.0, 100.0)}, max_distance=60.0)   # 2 mm a pixel
    >>> m = area_map(cal, (200, 100))
    >>> int(m[50, 50]), int(m[50, 150]), int(m[50, 100]), int(m[5, 50])
    (0, 1, -1, -1)
    """
    w, h = size
    xs, ys = np.meshgrid(np.arange(0, w, step) + step / 2, np.arange(0, h, step) + step / 2)
    v = np.stack([xs, ys, np.ones_like(xs)], -1) @ np.asarray(calibration.image_to_layout,
                                                               np.float64).T
    q = v[..., :2] / v[..., 2:3]
    spots = np.array(list(calibration.spots.values()), np.float64).reshape(-1, 2)
    if not len(spots):
        return np.full((h, w), -1, np.int32)
    d = np.linalg.norm(q[..., None, :] - spots, axis=-1)
    near = np.argmin(d, -1).astype(np.int32)
    near[(np.take_along_axis(d, near[..., None], -1)[..., 0] >= calibration.max_distance)
         | (v[..., 2] <= 0)] = -1  # too far, or behind the camera
    return cv2.resize(near, (w, h), interpolation=cv2.INTER_NEAREST)


def draw_areas(img: np.ndarray, calibration) -> list[tuple[str, np.ndarray]]:  # noqa: ANN001
    """The outline of each layout area of :class:`vision.calibration.TableCalibration`
    ``calibration`` (where a card is placed at that spot: :func:`area_map`) drawn on
    ``img`` (in place); each shown area's name and where its spot lies in the image."""
    areas = area_map(calibration, (img.shape[1], img.shape[0]), step=2)
    to_image = np.linalg.inv(np.asarray(calibration.image_to_layout, np.float64))
    named = []
    for i, (name, (x, y)) in enumerate(calibration.spots.items()):
        inside = (areas == i).astype(np.uint8)
        contours, _ = cv2.findContours(inside, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            continue
        # (the map's 4-pixel steps smoothed away: the true edges are arcs and lines)
        smooth = [cv2.approxPolyDP(c, 3.0, True) for c in contours]
        cv2.polylines(img, smooth, True, AREA, max(1, round(img.shape[0] / 720)),
                      cv2.LINE_AA)
        c = to_image @ (x, y, 1.0)
        named.append((name, c[:2] / c[2]))
    return named


def annotate(img: np.ndarray, result: dict, labels: dict | None = None,
             calibration=None, caption: str = "") -> np.ndarray:  # noqa: ANN001
    """A copy of the BGR frame ``img`` with ``result`` (:meth:`vision.recognize.Recognizer.
    recognize`'s, placed or not) drawn on it, and a line at the top saying what it holds.

    Cards read by code: their outline and ``code confidence`` (and their area, where the
    result was placed), in :data:`READ`. Face-down cards: a ring at the centre, ``down``,
    in :data:`FACE_DOWN`. Cards not read: a cross, ``?`` (with the rank and colour where the
    reader is sure of them), in :data:`UNREADABLE`. With ``labels`` (the frame's labels,
    :func:`vision.evaluate.read_labels`), matched as ``vision-eval`` matches them
    (:func:`vision.evaluate.frame_report`): a misread in :data:`MISREAD`
    (``labelled->read``), a readable card missed in :data:`MISSED` (a ring where it lies,
    ``code missed``) and a report on no card in :data:`FALSE_POSITIVE` (``(no card)``).
    With ``calibration`` (:class:`vision.calibration.TableCalibration`) the layout's areas
    are drawn under them, named (:func:`draw_areas`). ``caption``: a second line under the
    first (what the record says of the frame, for one).
    """
    out = img.copy() if img.ndim == 3 else cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    scale = out.shape[0] / 720
    thick = max(1, round(2 * scale))
    width = _card_width(result, out.shape[0])
    areas = draw_areas(out, calibration) if calibration is not None else []
    notes: list[str | None] = [None] * len(result["cards"])
    report = None
    if labels is not None:
        from vision.evaluate import frame_report, match_reports

        report = frame_report(result, labels)
        truth = labels["cards"]
        for i, (card, (best, _)) in enumerate(zip(
                result["cards"], match_reports(result["cards"], truth), strict=True)):
            if best is None:
                notes[i] = "no card"
            elif truth[best]["code"] != card["code"]:
                notes[i] = f"{truth[best]['code']}->{card['code']}"
    # (label text, where it points, colour), drawn once every mark is down
    texts: list[tuple[str, Sequence[float], tuple[int, int, int]]] = []
    text = _Labels(0.42 * scale)
    for card, note in zip(result["cards"], notes, strict=True):
        colour = READ if note is None else FALSE_POSITIVE if note == "no card" else MISREAD
        if card.get("corners"):
            _outline(out, card["corners"], colour, thick)
            text.marks.append(_box(np.asarray(card["corners"], np.float64)))
        else:
            _ring(out, card["center"], 0.5 * width, colour, thick)
            text.marks.append(_box(np.asarray([card["center"]], np.float64), 0.5 * width))
        sure = f"{card['confidence']:.3f}".removeprefix("0")
        shown = f"{note} {sure}" if colour == MISREAD else f"{card['code']} {sure}"
        if colour == FALSE_POSITIVE:
            shown += " (no card)"
        texts.append((shown + _spot(card), _top(card.get("corners"), card["center"]), colour))
    for card in result["face_down"]:
        _ring(out, card["center"], 0.35 * width, FACE_DOWN, thick)
        text.marks.append(_box(np.asarray([card["center"]], np.float64), 0.35 * width))
        texts.append(("down" + _spot(card), card["center"], FACE_DOWN))
    for card in result["unreadable"]:
        _cross(out, card["center"], 0.18 * width, UNREADABLE, thick)
        what = f"{card['rank']}-{card['color']}?" if "rank" in card else "?"
        texts.append((what + _spot(card), card["center"], UNREADABLE))
    if report is not None:
        sizes = {tuple(c["center"]): float(c["card_width_px"]) for c in labels["cards"]}
        for m in report["missed_cards"]:
            radius = 0.55 * sizes.get(tuple(m["center"]), width)
            _ring(out, m["center"], radius, MISSED, thick)
            text.marks.append(_box(np.asarray([m["center"]], np.float64), radius))
            texts.append((f"{m['code']} missed", m["center"], MISSED))
    text.boxes.append(_headline(out, [headline(result, report)] + [caption] * bool(caption),
                                scale))
    for words, anchor, colour in texts + [(name, c, AREA) for name, c in areas]:
        text.place(out, words, anchor, colour)
    return out


def headline(result: dict, report: dict | None = None) -> str:
    """The line drawn at the top of an annotated frame.

    >>> headline({"cards": [{}, {}], "face_down": [{}], "unreadable": [], "elapsed_ms": 52.4})
    '2 read, 1 face down, 0 not read | 52 ms'
    >>> print(headline({"cards": [], "face_down": [], "unreadable": [{}], "elapsed_ms": 9.0,
    ...                 "calibration_error": "saw 2 markers"},
    ...                {"missed_cards": [{}], "misread_cards": [], "false_positive_cards": []}))
    ... # doctest: +NORMALIZE_WHITESPACE
    0 read, 0 face down, 1 not read | 9 ms | missed 1, misread 0, no card 0
    | not placed: saw 2 markers
    """
    words = (f"{len(result['cards'])} read, {len(result['face_down'])} face down, "
             f"{len(result['unreadable'])} not read | {result.get('elapsed_ms', 0.0):.0f} ms")
    if report is not None:
        words += (f" | missed {len(report['missed_cards'])}, misread "
                  f"{len(report['misread_cards'])}, no card "
                  f"{len(report['false_positive_cards'])}")
    if result.get("warning"):
        words += f" | {result['warning']}"
    if result.get("calibration_error"):
        words += f" | not placed: {result['calibration_error']}"
    return words


def _headline(img: np.ndarray, lines: list[str], scale: float) -> tuple[int, int, int, int]:
    """``lines`` drawn at the top left, each shrunk to the frame's width if need be; the
    box they take."""
    thick = max(1, round(scale * 1.5))
    boxes, y = [], 0
    for words in lines:
        size = 0.5 * scale
        (tw, th), base = cv2.getTextSize(words, FONT, size, thick)
        if tw > img.shape[1] - 8:  # a long reason: shrunk to the frame's width
            size *= (img.shape[1] - 8) / tw
            (tw, th), base = cv2.getTextSize(words, FONT, size, thick)
        cv2.rectangle(img, (0, y), (tw + 8, y + th + base + 8), TEXT_BACK, -1)
        cv2.putText(img, words, (4, y + th + 4), FONT, size, TEXT, thick, cv2.LINE_AA)
        boxes.append(tw + 8)
        y += th + base + 8
    return 0, 0, max(boxes), y


def encode(drawing: np.ndarray) -> bytes:
    """``drawing`` as JPEG bytes (:data:`QUALITY`); :class:`ValueError` if it cannot be.

    >>> import numpy as np
    >>> encode(np.zeros((8, 8, 3), np.uint8))[:2] == b"\\xff\\xd8"   # a JPEG's start
    True
    """
    ok, buf = cv2.imencode(".jpg", drawing, [cv2.IMWRITE_JPEG_QUALITY, QUALITY])
    if not ok:
        raise ValueError("the drawing could not be encoded as JPEG")
    return buf.tobytes()


def save(path: Path, drawing: np.ndarray) -> None:
    """``drawing`` written as a JPEG (:func:`encode`) to ``path``, its folder made:
    :class:`OSError`, naming the file, if it cannot be."""
    try:
        data = encode(drawing)
    except ValueError as exc:
        raise OSError(f"{path}: {exc}") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise OSError(f"{path}: {exc.strerror or exc}") from None
