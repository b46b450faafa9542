"""Frames larger than 1080p are read scaled down to it, and reported in their own pixels.

The proposals work in pixels (:mod:`vision.proposals`: corner arms of 10 and 16 px, an 8 px
gap, morphology kernels, least region areas) chosen on frames of 720p to 1080p, the range the
recogniser is made and calibrated for. A 4K camera (3840 x 2160) doubles every length, and
the pipeline lost most of its cards: on 40 frames of the validation designs rendered at 4K
(``python -m vision.dataset DIR --frames 10 --seed 12 --designs val --size 3840x2160``) the
bundled reader found 37.2 % of the cards and 13 of 35 face-down cards, in 197 ms a frame;
read at 1080p, 86.2 % and 32, in 74 ms, no misread either way. At 2560 x 1440 (40 frames,
seed 13) 78.5 -> 80.6 % of the cards, face-down 32 -> 28 of 34, 105 -> 79 ms
(``models/cards_v5.md``, thirty-eighth session). So a frame whose shorter side is over
:data:`MAX_SHORT_SIDE` is read at that size (area averaging, which keeps the glyphs' ink),
and every point and pixel measure of the result is scaled back (:func:`to_frame_pixels`): a
caller sees the frame it passed. Smaller frames are read as they are.

>>> reading_size((2160, 3840, 3)), reading_size((1080, 1920, 3)), reading_size((3840, 2160))
((1920, 1080), None, (1080, 1920))
"""

from __future__ import annotations

#: The largest shorter side (pixels) a frame is read at: 1080p, the largest frames the
#: pipeline's pixel settings and the operating threshold were chosen on.
MAX_SHORT_SIDE = 1080


def reading_size(shape: tuple[int, ...]) -> tuple[int, int] | None:
    """The (width, height) a frame of ``shape`` (rows, columns, ...) is read at, its shorter
    side scaled to :data:`MAX_SHORT_SIDE`; ``None`` for a frame read as it is."""
    rows, cols = shape[:2]
    short = min(rows, cols)
    if short <= MAX_SHORT_SIDE:
        return None
    scale = MAX_SHORT_SIDE / short
    return max(1, round(cols * scale)), max(1, round(rows * scale))


def to_frame_pixels(result: dict, fx: float, fy: float) -> dict:
    """``result`` (:meth:`vision.recognize.Recognizer.recognize` of a frame read scaled by
    ``fx`` across and ``fy`` down) in the pixels of the frame itself: every ``"center"`` and
    ``"corners"`` of its cards, face-down cards and refusals, and its quality's card width
    and edge blur (lengths, over the mean scale); ``"read_scale"`` in the quality says how
    it was read (its warnings judge the frame as read: a card 70 px wide in a 4K frame is
    read 35 px wide).

    >>> read = {"cards": [{"code": "QH", "center": [10.0, 20.0],
    ...                    "corners": [[0.0, 0.0], [20.0, 0.0], [20.0, 40.0], [0.0, 40.0]]}],
    ...         "face_down": [{"center": [5.0, 5.0]}], "unreadable": [],
    ...         "quality": {"card_width_px": 50.0, "edge_blur_px": 1.0, "warnings": []}}
    >>> out = to_frame_pixels(read, 0.5, 0.5)
    >>> out["cards"][0]["center"], out["cards"][0]["corners"][2], out["face_down"]
    ([20.0, 40.0], [40.0, 80.0], [{'center': [10.0, 10.0]}])
    >>> out["quality"]
    {'card_width_px': 100.0, 'edge_blur_px': 2.0, 'warnings': [], 'read_scale': 0.5}
    """
    def point(p: list[float]) -> list[float]:
        return [round(p[0] / fx, 1), round(p[1] / fy, 1)]

    out = dict(result)
    for key in ("cards", "face_down", "unreadable"):
        items = []
        for item in result.get(key, []):
            item = dict(item)
            if "center" in item:
                item["center"] = point(item["center"])
            if "corners" in item:
                item["corners"] = [point(p) for p in item["corners"]]
            items.append(item)
        out[key] = items
    if "quality" in result:
        scale = (fx + fy) / 2
        quality = dict(result["quality"])
        for key, digits in (("card_width_px", 1), ("edge_blur_px", 2)):
            if quality.get(key) is not None:
                quality[key] = round(quality[key] / scale, digits)
        quality["read_scale"] = round(scale, 4)
        out["quality"] = quality
    return out
