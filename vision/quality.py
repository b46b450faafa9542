"""How legible a frame is: the blur of its card edges, its card size, and warnings.

The reader's recall falls with the camera's blur and with the card's size in pixels (on the
validation frames, ``models/cards_v5.md``, thirty-seventh session: frames without a warning
read 68 % of their cards, frames whose card edges are blurred by more than 2 % of the card's
width 32 %). A table whose camera has drifted out of focus, or shakes, or sees the cards too
small, loses cards silently; :func:`measure` says so for about 0.6 ms a frame, so that the
floor can fix the camera rather than wonder at the reads.

**Edge blur.** The cards are the sharpest large steps in the frame: pale stock on darker
felt. Across each outline edge near the corners the pipeline found
(:func:`vision.proposals.outline`), the grey profile rises from the felt's level to the
card's; for a step blurred by a Gaussian of ``sigma`` pixels its steepest slope is
``step / (sigma * sqrt(2 pi))``, so ``sigma`` is estimated from the step's height and its
steepest slope. Profiles that are not a clean step (a plateau that varies, a low step: a
neighbour's edge, a glyph, glare) are left out; the frame's figure is the median of the
others. Motion blur spreads edges across its direction only: the ratio of the worst to the
best edge direction's median (:attr:`ImageQuality.streak`) tells it from a focus blur, which
spreads all alike.

    >>> import numpy as np, cv2
    >>> from vision.proposals import outline
    >>> img = np.full((360, 640, 3), (40, 100, 30), np.uint8)           # green felt
    >>> _ = cv2.rectangle(img, (200, 100), (259, 186), (235, 235, 235), -1)  # a 60 x 87 px card
    >>> sharp = measure(img, outline(img), card_width_px=60.0)
    >>> blurred = cv2.GaussianBlur(img, (0, 0), 1.5)
    >>> soft = measure(blurred, outline(blurred), card_width_px=60.0)
    >>> sharp.edge_blur_px < 0.6, 1.3 < soft.edge_blur_px < 1.7, soft.warnings
    (True, True, ('blurred',))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.burst import card_width as reported_width
from vision.proposals import Outline

#: Profile samples across an edge: this many pixels each side of it (at 720 rows; scaled with
#: the frame's height), every half pixel.
PROFILE_HALF_PX = 7.0
PROFILE_STEP_PX = 0.5
#: Where along each edge of an outline corner the profiles are taken (shares of the card's
#: width along its top edge, of its height along its side edge): past the rounded tip, and
#: mostly past the index, whose glyphs would make the card's plateau uneven.
ALONG_TOP = (0.55, 0.8)
ALONG_SIDE = (0.6, 0.8)
#: A profile counts when the card's plateau is at least this much lighter than the felt's
#: (8-bit grey) ...
MIN_STEP = 40.0
#: ... and neither plateau (the outer quarter of the samples each side) varies by more than
#: this standard deviation.
MAX_PLATEAU_SD = 8.0
#: A frame's blur is its median profile's, given at least this many profiles.
MIN_EDGES = 8
#: Edge directions (mod 180 degrees) are put in this many bins for :attr:`ImageQuality.streak`;
#: a bin counts with at least this many profiles.
DIRECTION_BINS = 4
MIN_BIN_EDGES = 3
#: Warnings (:attr:`ImageQuality.warnings`), chosen on frames of the training designs
#: (``models/cards_v5.md``, thirty-seventh session): ``"blurred"`` where the edge blur is
#: more than this share of the card's width ...
BLURRED_SHARE = 0.02
#: ... ``"motion_blur"`` where it is blurred and its worst edge direction is this many times
#: as blurred as its best ...
STREAK_RATIO = 1.5
#: ... and ``"small_cards"`` where the cards are narrower than this (pixels).
SMALL_CARD_PX = 40.0


@dataclass(frozen=True)
class ImageQuality:
    """What :func:`measure` finds: the card width it judged by (``None`` where the frame shows
    no card), the Gaussian-equivalent blur of the card edges in pixels and its ratio between
    the worst and the best edge direction (``None`` where too few clean edges show), the
    number of edge profiles behind them, and the warnings they raise."""

    card_width_px: float | None
    edge_blur_px: float | None
    streak: float | None
    edges: int
    warnings: tuple[str, ...]

    @property
    def blur_share(self) -> float | None:
        """The edge blur as a share of the card's width: what decides whether an index
        glyph, drawn at a fixed share of the card, is still legible."""
        if self.edge_blur_px is None or not self.card_width_px:
            return None
        return self.edge_blur_px / self.card_width_px

    def to_json(self) -> dict:
        """The form ``recognize --json`` prints (rounded)."""
        def r(v: float | None, digits: int) -> float | None:
            return None if v is None else round(v, digits)
        return {"card_width_px": r(self.card_width_px, 1),
                "edge_blur_px": r(self.edge_blur_px, 2), "blur_share": r(self.blur_share, 4),
                "streak": r(self.streak, 2), "edges": self.edges,
                "warnings": list(self.warnings)}


#: The warnings a frame's quality carries, in the order they are listed (:func:`measure`'s,
#: then :func:`vision.exposure.with_exposure`'s, then :func:`vision.colourcast.with_colour`'s).
WARNINGS = ("blurred", "motion_blur", "small_cards", "underexposed", "colour_cast")
#: What each warning asks of the staff (the demo's log, the floor and surveillance consoles).
ADVICE = {
    "blurred": "card edges blurred: check the camera's focus and exposure",
    "motion_blur": "blur in one direction: the camera or its mount moves during exposure",
    "small_cards": "cards small in the frame: move the camera closer or raise its resolution",
    "underexposed": "frame too dark: add light, open the iris or lengthen the exposure",
    "colour_cast": "card stock tinted: set the camera's white balance for the table's light",
}


def measure(img: np.ndarray, found: Outline, card_width_px: float | None = None
            ) -> ImageQuality:
    """The :class:`ImageQuality` of BGR frame ``img`` whose outline is ``found``;
    ``card_width_px``: the width of its cards as read (:func:`card_width`), else the outline's
    best-supported card size."""
    if card_width_px is None and found.sizes:
        card_width_px = found.sizes[0].height / found.sizes[0].aspect
    sigma, angle = edge_profiles(img, found)
    blur = float(np.median(sigma)) if len(sigma) >= MIN_EDGES else None
    streak = _streak(sigma, angle) if blur is not None else None
    warnings = []
    if blur is not None and card_width_px and blur / card_width_px > BLURRED_SHARE:
        warnings.append("blurred")
        if streak is not None and streak >= STREAK_RATIO:
            warnings.append("motion_blur")
    if card_width_px and card_width_px < SMALL_CARD_PX:
        warnings.append("small_cards")
    return ImageQuality(None if not card_width_px else float(card_width_px), blur, streak,
                        int(len(sigma)), tuple(warnings))


def edge_profiles(img: np.ndarray, found: Outline) -> tuple[np.ndarray, np.ndarray]:
    """The blur (Gaussian sigma, pixels) of every clean edge profile near ``found``'s outline
    corners, and the direction of each profile (radians, mod pi)."""
    if not found.corners or not found.sizes:
        return np.zeros(0), np.zeros(0)
    points = np.array([c.point for c in found.corners], np.float64)
    x = np.array([c.x_axis for c in found.corners], np.float64)
    y = np.array([c.y_axis for c in found.corners], np.float64)
    wh = np.array(found.sizes[0].near_all(list(points)), np.float64)
    # edge e of a corner runs along `along` from its point; the profile crosses it along its
    # normal, turned towards the card (the other axis's side)
    along = np.concatenate([x, y])
    inward = np.concatenate([y, x])
    normal = np.stack([-along[:, 1], along[:, 0]], 1)
    normal *= np.sign((normal * inward).sum(1, keepdims=True) + 1e-12)
    shares = np.concatenate([np.tile(ALONG_TOP, (len(points), 1)) * wh[:, :1],
                             np.tile(ALONG_SIDE, (len(points), 1)) * wh[:, 1:]])
    starts = np.concatenate([points, points])[:, None, :] + shares[..., None] * along[:, None, :]
    starts = starts.reshape(-1, 2)
    normal = np.repeat(normal, shares.shape[1], axis=0)
    half = PROFILE_HALF_PX * max(1.0, img.shape[0] / 720)
    step = PROFILE_STEP_PX * max(1.0, img.shape[0] / 720)
    offsets = np.arange(-half, half + step / 2, step)
    xy = (starts[:, None, :] + offsets[None, :, None] * normal[:, None, :]).astype(np.float32)
    samples = cv2.remap(img, xy[..., 0], xy[..., 1], cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
    grey = cv2.cvtColor(samples, cv2.COLOR_BGR2GRAY).astype(np.float32)
    inside = ((xy[..., 0] >= 0) & (xy[..., 0] <= img.shape[1] - 1)
              & (xy[..., 1] >= 0) & (xy[..., 1] <= img.shape[0] - 1)).all(1)
    q = len(offsets) // 4
    felt, card = grey[:, :q], grey[:, -q:]
    # plateaus that pass the spread test are flat: their means are their levels
    rise = card.mean(1) - felt.mean(1)
    clean = (inside & (rise >= MIN_STEP) & (felt.std(1) <= MAX_PLATEAU_SD)
             & (card.std(1) <= MAX_PLATEAU_SD))
    # the steepest slope, by central differences a pixel wide (two samples), per pixel
    slope = np.abs(grey[:, 2:] - grey[:, :-2]).max(1) / (2 * step)
    sigma = rise[clean] / (slope[clean] * np.sqrt(2 * np.pi))
    direction = np.arctan2(normal[clean, 1], normal[clean, 0]) % np.pi
    return sigma, direction


def _streak(sigma: np.ndarray, direction: np.ndarray) -> float | None:
    """Worst over best median blur of the edge-direction bins with enough profiles."""
    bins = np.round(direction / (np.pi / DIRECTION_BINS)).astype(int) % DIRECTION_BINS
    medians = [float(np.median(sigma[bins == b])) for b in range(DIRECTION_BINS)
               if (bins == b).sum() >= MIN_BIN_EDGES]
    if len(medians) < 2 or min(medians) <= 0:
        return None
    return max(medians) / min(medians)


def card_width(cards: Sequence[dict]) -> float | None:
    """The median width (pixels) of reported cards (``recognize``'s ``"cards"``), each
    measured as :func:`vision.burst.card_width` measures one."""
    widths = [reported_width(card) for card in cards]
    return float(np.median(widths)) if widths else None


def describe_quality(quality: dict) -> str:
    """A frame's measured condition in words (``quality``: :meth:`ImageQuality.to_json`).

    >>> describe_quality({"card_width_px": 52.0, "edge_blur_px": 1.4, "streak": 2.1})
    'card edges spread 1.40 px on cards 52 px wide, 2.1 times as much one way as the other'
    >>> describe_quality({"card_width_px": 38.5, "edge_blur_px": None, "streak": None})
    'cards 38 px wide'
    >>> describe_quality({"card_width_px": 70.0, "edge_blur_px": None, "read_scale": 0.5})
    'cards 70 px wide, the frame read at 0.5 of its size'
    >>> describe_quality({"card_width_px": 50.0, "stock_level": 60, "gain": 3.33})
    'cards 50 px wide, card stock at 60 of 255, brightened 3.33 times'
    >>> describe_quality({"card_width_px": 50.0, "stock_bgr": [110, 176, 220],
    ...                   "warnings": ["colour_cast"]})
    'cards 50 px wide, card stock tinted: blue 110, green 176, red 220'

    (A frame larger than 1080p is read smaller, :mod:`vision.framesize`: its warnings judge
    the cards as read; a dark one brighter, :mod:`vision.exposure`; a tinted stock is
    :mod:`vision.colourcast`'s.)
    """
    width, blur, streak = (quality.get(k) for k in ("card_width_px", "edge_blur_px", "streak"))
    size = f"cards {width:.0f} px wide" if width else "no card measured"
    scale, gain = quality.get("read_scale"), quality.get("gain")
    read = f", the frame read at {scale:g} of its size" if scale else ""
    if gain:  # a dark frame (vision.exposure)
        read += f", card stock at {quality.get('stock_level')} of 255, brightened {gain:g} times"
    if "colour_cast" in quality.get("warnings", ()):  # (vision.colourcast)
        b, g, r = quality["stock_bgr"]
        read += f", card stock tinted: blue {b}, green {g}, red {r}"
    if blur is None:
        return size + read
    out = f"card edges spread {blur:.2f} px on {size}"
    return out + (f", {streak:.1f} times as much one way as the other" if streak else "") + read


#: The order :func:`image_warnings`' keys are listed in: frames without a warning first.
WARNING_ORDER = ("none", *WARNINGS)


def image_warnings(result: dict) -> list[str]:
    """The keys a recognised frame (``result``, with its ``"quality"``) is counted under when
    scores are broken down by the camera's condition: its warnings, or ``"none"``.

    >>> image_warnings({"quality": {"warnings": ["blurred", "small_cards"]}})
    ['blurred', 'small_cards']
    >>> image_warnings({"quality": {"warnings": []}}), image_warnings({})
    (['none'], ['none'])
    """
    return list((result.get("quality") or {}).get("warnings") or ["none"])


def with_spot_sizes(quality: dict, widths: dict[str, float]) -> dict:
    """``quality`` (:meth:`ImageQuality.to_json`) with the width in pixels of a card at each
    layout spot of a calibrated table (``widths``:
    :meth:`vision.calibration.TableCalibration.spot_card_widths`) and the spots where it is
    under :data:`SMALL_CARD_PX` (``"small_spots"``): known from the calibration alone, before
    any card lies there. The widths are the frame's pixels; a frame read smaller
    (``"read_scale"``, :mod:`vision.framesize`) is judged as read.

    >>> with_spot_sizes({"warnings": []}, {"seat1": 52.04, "seat7": 36.5})
    {'warnings': [], 'spot_card_px': {'seat1': 52.0, 'seat7': 36.5}, 'small_spots': ['seat7']}
    >>> with_spot_sizes({"read_scale": 0.5}, {"seat1": 104.0, "seat7": 73.0})["small_spots"]
    ['seat7']
    """
    scale = quality.get("read_scale", 1.0)
    return {**quality, "spot_card_px": {k: round(v, 1) for k, v in widths.items()},
            "small_spots": [k for k, v in widths.items() if v * scale < SMALL_CARD_PX]}
