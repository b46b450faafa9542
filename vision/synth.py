"""Synthetic table scenes with exact labels.

:func:`render_table` draws given cards on a felt layout seen by a tilted overhead camera, with
chips, printed text, overlapped hands, glare, uneven light, blur, noise and JPEG. It is what
made ``sample_images/``, the training data and the validation set, and what the demo uses.

Labels (one dict per image, also the on-disk format of ``sample_images/*.json``)::

    {"width": 1280, "height": 720, "design": "plastic",
     "cards": [{"code": "QH" | "face_down", "spot": "seat3", "center": [x, y],
                "corners": [[x, y] x 4],   # the card's own TL, TR, BR, BL
                "card_width_px": 61.2, "readable": true,
                "index_visible": [1.0, 0.0]}],   # TL and BR index regions, fraction visible
     "table_to_image": [[...] x 3],   # homography from layout millimetres to image pixels
     "photometric": {"glare": 1, "gaussian_blur": 0.0, "motion_blur_px": 4, "noise": 2.1,
                     "jpeg_quality": 71}}   # what degraded the frame ({"clean": true}: nothing)

A face-up card is *readable* when one of its two index regions is at least 85 % visible and
inside the frame.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import cv2
import numpy as np

from vision.codes import CARD_CODES
from vision.designs import CardDesign, get_design

CARD_W_MM = 63.0
FACE_DOWN_CODES = ("XX", "face_down")
#: Index regions in card units (u across the width, v down the height).
INDEX_BOX = (0.0, 0.0, 0.24, 0.32)
READABLE_FRACTION = 0.85
#: No card of a hand is placed further than this from the hand's middle along the hand (in
#: any direction with ``hands_in_area``, :func:`render_burst`; millimetres): neighbouring
#: seats are 165 mm apart, so a side-by-side hand of three or more cards would otherwise
#: reach the next seat's area; this leaves the camera's position error (up to ~20 mm) a
#: margin of ~25 mm before the midpoint between seats.
HAND_REACH_MM = 45.0

SPOTS: dict[str, tuple[float, float, float]] = {"dealer": (0.0, -250.0, 180.0)}
for _i in range(1, 8):
    _a = math.radians(90 + (4 - _i) * 17)
    SPOTS[f"seat{_i}"] = (560 * math.cos(_a), -330 + 560 * math.sin(_a), 90 - math.degrees(_a))

_FELTS = [(40, 110, 30), (120, 60, 20), (30, 30, 140), (40, 40, 40), (100, 30, 90),
          (90, 130, 150), (20, 90, 90), (60, 100, 60)]
_TEXTS = ["BLACKJACK PAYS 3 TO 2", "DEALER MUST DRAW TO 16 AND STAND ON ALL 17S",
          "INSURANCE PAYS 2 TO 1", "MONSTER MATCH", "SPANISH 21"]


def _camera(rng: np.random.Generator, size: tuple[int, int], tilt_max: float,
            card_px: float) -> np.ndarray:
    """Homography from table millimetres to image pixels for a random camera pose."""
    w, h = size
    yaw = rng.uniform(-math.pi, math.pi) if rng.random() < 0.3 else rng.normal(0, 0.15)
    tilt = math.radians(rng.uniform(0, tilt_max))
    tilt_dir = rng.uniform(-math.pi, math.pi)
    dist = 1500.0
    f = card_px / CARD_W_MM * dist
    rz = np.array([[math.cos(yaw), -math.sin(yaw), 0], [math.sin(yaw), math.cos(yaw), 0],
                   [0, 0, 1]])
    ax = np.array([math.cos(tilt_dir), math.sin(tilt_dir), 0.0])
    rvec = ax * tilt
    rt, _ = cv2.Rodrigues(rvec)
    r = rt @ rz
    centre = np.array([rng.normal(0, 60), rng.uniform(-60, 90), 0.0])
    t = np.array([0, 0, dist]) - r @ centre
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    hmat = k @ np.column_stack([r[:, 0], r[:, 1], t])
    return hmat / hmat[2, 2]


def _project(hmat: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.column_stack([pts, np.ones(len(pts))]) @ hmat.T
    return p[:, :2] / p[:, 2:3]


#: Side of the ArUco markers :func:`render_table` prints on the layout (millimetres).
MARKER_MM = 60.0
#: Where a table with calibration markers has them (id -> layout millimetres of the centre):
#: the open felt between the dealer and the players' arc, clear of every spot, where a
#: camera aimed at the layout sees them whatever its turn.
DEFAULT_MARKERS: dict[int, tuple[float, float]] = {
    0: (-360.0, -130.0), 1: (360.0, -130.0), 2: (-180.0, -200.0), 3: (180.0, -200.0),
    4: (0.0, -40.0), 5: (0.0, 60.0),
}


def _draw_markers(canvas: np.ndarray, markers: Mapping[int, tuple[float, float]],
                  to_canvas: Callable[[float, float], tuple[int, int]]) -> None:
    """Print ArUco markers (DICT_4X4_50, white quiet zone) on the felt canvas."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    side = int(MARKER_MM)
    for marker_id, (x, y) in markers.items():
        tile = cv2.aruco.generateImageMarker(dictionary, int(marker_id), side)
        x0, y0 = to_canvas(x - MARKER_MM / 2, y - MARKER_MM / 2)
        q = side // 6  # quiet zone: one module
        cv2.rectangle(canvas, (x0 - q, y0 - q), (x0 + side + q, y0 + side + q),
                      (235, 235, 235), -1)
        canvas[y0:y0 + side, x0:x0 + side] = tile[..., None]


def _felt(rng: np.random.Generator, hmat: np.ndarray, size: tuple[int, int],
          markers: Mapping[int, tuple[float, float]] | None = None) -> np.ndarray:
    """Felt with printed layout and chips, drawn in table millimetres and warped to the frame."""
    scale = 1.0  # canvas pixels per mm
    x0, y0, cw, ch = -900, -700, 1800, 1300
    base = np.array(_FELTS[rng.integers(len(_FELTS))], np.float32)
    base = np.clip(base * rng.uniform(0.6, 1.4, 3), 0, 255)
    canvas = np.empty((ch, cw, 3), np.float32)
    canvas[:] = base
    noise = cv2.resize(rng.normal(0, 1, (ch // 40, cw // 40)).astype(np.float32), (cw, ch))
    canvas += noise[..., None] * rng.uniform(0, 10)
    canvas += rng.normal(0, rng.uniform(1, 6), canvas.shape).astype(np.float32)
    canvas = np.clip(canvas, 0, 255).astype(np.uint8)
    ink = tuple(float(v) for v in (np.array([200, 230, 240]) if rng.random() < 0.5
                                   else np.array([60, 200, 230])) * rng.uniform(0.7, 1.0))

    def c(x: float, y: float) -> tuple[int, int]:
        return int((x - x0) * scale), int((y - y0) * scale)

    cv2.ellipse(canvas, c(0, -330), (int(560 * scale),) * 2, 0, 20, 160, ink, 3)
    cv2.ellipse(canvas, c(0, -330), (int(700 * scale),) * 2, 0, 25, 155, ink, 2)
    for name, (sx, sy, ang) in SPOTS.items():
        if name == "dealer":
            continue
        bx = sx + 120 * math.cos(math.radians(ang + 90))
        by = sy + 120 * math.sin(math.radians(ang + 90))
        cv2.circle(canvas, c(bx, by), int(40 * scale), ink, 2)
        for _ in range(int(rng.integers(0, 5))):
            col = tuple(float(v) for v in rng.integers(0, 255, 3))
            p = c(bx + rng.normal(0, 8), by + rng.normal(0, 8))
            cv2.circle(canvas, p, int(19 * scale), col, -1, cv2.LINE_AA)
            for k in range(6):
                a = k * math.pi / 3 + rng.uniform(0, 1)
                q = (int(p[0] + 15 * math.cos(a)), int(p[1] + 15 * math.sin(a)))
                cv2.circle(canvas, q, 3, (240, 240, 240), -1)
    for _ in range(int(rng.integers(1, 4))):
        text = _TEXTS[int(rng.integers(len(_TEXTS)))]
        cv2.putText(canvas, text, c(rng.uniform(-500, 100), rng.uniform(-100, 200)),
                    int(rng.choice([cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_TRIPLEX])),
                    rng.uniform(0.8, 1.6), ink, int(rng.integers(1, 4)), cv2.LINE_AA)
    for _ in range(int(rng.integers(0, 8))):  # chip tray / stray chips
        col = tuple(float(v) for v in rng.integers(0, 255, 3))
        p = c(rng.uniform(-400, 400), rng.uniform(-450, 250))
        cv2.circle(canvas, p, int(19 * scale), col, -1, cv2.LINE_AA)
        cv2.circle(canvas, p, int(13 * scale), (235, 235, 235), 2, cv2.LINE_AA)
    if markers:
        _draw_markers(canvas, markers, c)
    shift = np.array([[1 / scale, 0, x0], [0, 1 / scale, y0], [0, 0, 1]])
    out = cv2.warpPerspective(canvas, hmat @ shift, size, flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REFLECT)
    return out.astype(np.float32)


def _paste(frame: np.ndarray, card: np.ndarray, quad: np.ndarray, shadow: float) -> None:
    """Warp an RGBA card onto ``frame`` (float BGR) at image ``quad`` (TL, TR, BR, BL)."""
    fh, fw = frame.shape[:2]
    x0, y0 = np.floor(quad.min(0)).astype(int) - 4
    x1, y1 = np.ceil(quad.max(0)).astype(int) + 5
    xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x1, fw), min(y1, fh)
    if xb <= xa or yb <= ya:
        return
    ch, cw = card.shape[:2]
    src = np.float32([[0, 0], [cw, 0], [cw, ch], [0, ch]])
    m = cv2.getPerspectiveTransform(src, (quad - [xa, ya]).astype(np.float32))
    warped = cv2.warpPerspective(card, m, (xb - xa, yb - ya), flags=cv2.INTER_AREA
                                 if cw > (x1 - x0) else cv2.INTER_LINEAR)
    alpha = warped[..., 3:].astype(np.float32) / 255.0
    region = frame[ya:yb, xa:xb]
    if shadow > 0:
        sh = cv2.GaussianBlur(alpha, (0, 0), 1.5)
        sh = np.roll(sh, (1, 1), axis=(0, 1))[..., None] if sh.ndim == 2 else sh
        region *= 1 - shadow * sh.reshape(alpha.shape)
    region[:] = region * (1 - alpha) + warped[..., :3].astype(np.float32) * alpha


def _photometric(rng: np.random.Generator, img: np.ndarray, more: int = 0,
                 noise_rng: np.random.Generator | None = None
                 ) -> tuple[list[np.ndarray], dict]:
    """Light, glare, shadow, blur, noise and JPEG; returns the image, then ``more`` images of
    the same scene with fresh sensor noise from ``noise_rng`` (a still camera's next frames),
    and what was applied (kept in the labels, so that results can be broken down by image
    quality). The first image draws exactly what it did before bursts existed."""
    h, w = img.shape[:2]
    applied: dict = {"glare": 0, "gaussian_blur": 0.0, "motion_blur_px": 0, "noise": 0.0}
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    gx, gy = rng.normal(0, 0.35 / w), rng.normal(0, 0.35 / h)
    light = 1 + gx * (xx - w / 2) + gy * (yy - h / 2)
    cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    light *= 1 - rng.uniform(0, 0.35) * ((xx - cx) ** 2 + (yy - cy) ** 2) / (w * w)
    img = img * (light * rng.uniform(0.6, 1.2))[..., None]
    img *= rng.uniform(0.85, 1.15, 3).astype(np.float32)  # white balance
    applied["glare"] = int(rng.integers(0, 3))
    for _ in range(applied["glare"]):
        gx0, gy0 = rng.uniform(0, w), rng.uniform(0, h)
        s = rng.uniform(15, 90)
        blob = np.exp(-(((xx - gx0) ** 2) + ((yy - gy0) ** 2) * rng.uniform(0.3, 3)) / (2 * s * s))
        img += (blob * rng.uniform(40, 160))[..., None]
    if rng.random() < 0.3:  # soft shadow
        sx, sy = rng.uniform(0, w), rng.uniform(0, h)
        s = rng.uniform(60, 250)
        img *= 1 - rng.uniform(0.2, 0.5) * np.exp(-((xx - sx) ** 2 + (yy - sy) ** 2) / (2 * s * s))[
            ..., None]
    img = np.clip(img, 0, 255)
    blur = rng.random()
    if blur < 0.35:
        sigma = rng.uniform(0.4, 1.3)
        applied["gaussian_blur"] = round(float(sigma), 3)
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    elif blur < 0.5:
        k = int(rng.integers(3, 7))
        applied["motion_blur_px"] = k
        kern = np.zeros((k, k), np.float32)
        kern[k // 2, :] = 1.0 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1.0)
        kern = cv2.warpAffine(kern, rot, (k, k))
        img = cv2.filter2D(img, -1, kern / max(kern.sum(), 1e-6))
    noise = rng.uniform(0, 7)
    applied["noise"] = round(float(noise), 3)
    fields = [rng.normal(0, noise, img.shape)]
    applied["jpeg_quality"] = int(rng.integers(35, 96))
    if more:
        noise_rng = noise_rng or np.random.default_rng(rng.integers(2 ** 63))
        fields += [noise_rng.normal(0, noise, img.shape) for _ in range(more)]
    return [_jpeg(img + f.astype(np.float32), applied["jpeg_quality"]) for f in fields], applied


def _jpeg(img: np.ndarray, quality: int) -> np.ndarray:
    out = np.clip(img, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else out


def _visible_fraction(box: np.ndarray, covers: list[np.ndarray], size: tuple[int, int]) -> float:
    """Fraction of polygon ``box`` inside the frame and not under any of ``covers``."""
    x0, y0 = np.floor(box.min(0)).astype(int) - 1
    x1, y1 = np.ceil(box.max(0)).astype(int) + 2
    sw, sh = x1 - x0, y1 - y0
    m = np.zeros((sh, sw), np.uint8)
    cv2.fillPoly(m, [np.round(box - [x0, y0]).astype(np.int32)], 1)
    total = int(m.sum())
    if total == 0:
        return 0.0
    frame = np.zeros_like(m)
    fx0, fy0 = max(0, -x0), max(0, -y0)
    fx1, fy1 = min(sw, size[0] - x0), min(sh, size[1] - y0)
    if fx1 > fx0 and fy1 > fy0:
        frame[fy0:fy1, fx0:fx1] = 1
    m &= frame
    for q in covers:
        cv2.fillPoly(m, [np.round(q - [x0, y0]).astype(np.int32)], 0)
    return float(m.sum()) / total


def _card_quad(center: np.ndarray, angle: float, w: float, h: float) -> np.ndarray:
    """Table-plane corners TL, TR, BR, BL of a card centred at ``center`` turned by ``angle``."""
    c, s = math.cos(angle), math.sin(angle)
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return center + local @ np.array([[c, s], [-s, c]])


def render_table(cards_by_spot: Mapping[str, Sequence[str]], rng: np.random.Generator,
                 design: str | CardDesign = "plastic", size: tuple[int, int] = (1280, 720),
                 tilt_max: float = 40.0, card_px: tuple[float, float] | None = None,
                 clean: bool = False,
                 markers: Mapping[int, tuple[float, float]] | None = None,
                 pitch_jitter: float = 0.0, hands_in_area: bool = False
                 ) -> tuple[np.ndarray, dict]:
    """Draw ``cards_by_spot`` (spot name -> codes in dealing order, ``"XX"`` = face down);
    see :func:`render_burst` for the arguments. Returns the BGR ``uint8`` image and its labels
    (module docstring)."""
    frames, labels = render_burst(cards_by_spot, rng, 1, design=design, size=size,
                                  tilt_max=tilt_max, card_px=card_px, clean=clean,
                                  markers=markers, pitch_jitter=pitch_jitter,
                                  hands_in_area=hands_in_area)
    return frames[0], labels


def render_burst(cards_by_spot: Mapping[str, Sequence[str]], rng: np.random.Generator,
                 frames: int, noise_rng: np.random.Generator | None = None,
                 design: str | CardDesign = "plastic", size: tuple[int, int] = (1280, 720),
                 tilt_max: float = 40.0, card_px: tuple[float, float] | None = None,
                 clean: bool = False,
                 markers: Mapping[int, tuple[float, float]] | None = None,
                 pitch_jitter: float = 0.0, hands_in_area: bool = False
                 ) -> tuple[list[np.ndarray], dict]:
    """``frames`` frames of one still scene, as a fixed camera takes them one after another:
    the same cards, pose, light, glare and blur, fresh sensor noise in each (drawn from
    ``noise_rng``, else from a generator seeded by one more draw from ``rng``), then JPEG at
    one quality. The first frame is what :func:`render_table` gives for the same ``rng``, and
    with ``noise_rng`` given nothing more is drawn from ``rng``: a burst set has the very
    scenes of the single-frame set made with the same seed.

    Spots are ``dealer`` and ``seat1``..``seat7`` (see :data:`SPOTS`). Each later card of a
    hand lies over the one before, offset so that the earlier card's index corner shows.
    ``design`` is a design name (see :func:`vision.designs.get_design`) or a loaded design.
    ``card_px`` bounds the card width in pixels (default: 40-75 at 720p, scaled with height).
    ``clean`` turns off glare, blur, noise and JPEG. ``markers`` (id -> layout millimetres,
    e.g. :data:`DEFAULT_MARKERS`) prints ArUco calibration markers on the layout.
    ``pitch_jitter`` (standard deviation, a share of the step) makes each step of a hand
    uneven along and across, as a dealer's hand is; at 0 (the default, and every data set made
    before it existed) the steps are equal and no random number is drawn for them.
    ``hands_in_area`` keeps every card of a long hand within :data:`HAND_REACH_MM` of the hand's
    middle by shortening the whole step, across the hand as well as along it, as a dealer keeps
    a hand of five or six cards in its seat's area; off, only the step along the hand is
    shortened (every data set so far), and 0.2 % of the cards of five-card hands and 0.8 % of
    six lie nearer another spot than their own (forty-fifth session: the demo's camera then
    placed a card at the wrong seat and held the round). Returns the BGR ``uint8`` frames and
    the scene's labels (module docstring).
    """
    if frames < 1:
        raise ValueError(f"a burst has at least one frame, not {frames}")
    deck = get_design(design) if isinstance(design, str) else design
    w_px, h_px = deck.size
    aspect = h_px / w_px
    cw, chh = CARD_W_MM, CARD_W_MM * aspect
    lo, hi = card_px or (44.0 * size[1] / 720, 75.0 * size[1] / 720)
    hmat = _camera(rng, size, tilt_max, rng.uniform(lo, hi))
    frame = _felt(rng, hmat, size, markers)
    labels: list[dict] = []
    quads: list[np.ndarray] = []
    back = deck.backs[int(rng.integers(len(deck.backs)))]
    for spot, codes in cards_by_spot.items():
        if spot not in SPOTS:
            raise ValueError(f"unknown spot {spot!r}; expected one of {sorted(SPOTS)}")
        sx, sy, sang = SPOTS[spot]
        base = np.array([sx, sy]) + rng.normal(0, 12, 2)
        ang = math.radians(sang + rng.normal(0, 12)) + (math.pi if rng.random() < 0.3 else 0)
        dx = rng.uniform(0.26, 0.4) * cw
        dy = rng.uniform(0.12, 0.3) * chh * (1 if rng.random() < 0.5 else -1)
        if rng.random() < 0.15:
            dx, dy = rng.uniform(1.05, 1.3) * cw, 0.0
        ca, sa = math.cos(ang), math.sin(ang)
        rot = np.array([[ca, -sa], [sa, ca]])
        n = len(codes)
        # a dealer keeps a hand in its area: the whole step shortened, or the step along the
        # hand alone (as every data set so far was drawn, to the bit)
        reach = (n - 1) / 2 * (math.hypot(dx, dy) if hands_in_area else dx)
        if n > 1 and reach > HAND_REACH_MM:
            if hands_in_area:
                shorter = HAND_REACH_MM / reach
                dx, dy = dx * shorter, dy * shorter
            else:
                dx = HAND_REACH_MM / ((n - 1) / 2)
        along = np.arange(n, dtype=np.float64)[:, None] * np.array([dx, dy])
        if pitch_jitter > 0 and n > 1:
            steps = np.array([dx, dy]) * (1 + np.clip(rng.normal(0, pitch_jitter, (n - 1, 2)),
                                                      -2.5 * pitch_jitter, 2.5 * pitch_jitter))
            along[1:] = np.cumsum(steps, axis=0)
        along -= along.mean(0)
        for i, code in enumerate(codes):
            offset = rot @ along[i]
            jitter = math.radians(rng.normal(0, 2.5))
            quad_t = _card_quad(base + offset, ang + jitter, cw, chh)
            quad = _project(hmat, quad_t)
            face_down = code in FACE_DOWN_CODES
            if not face_down and code not in CARD_CODES:
                raise ValueError(f"bad card code {code!r}")
            img = back if face_down else deck.faces[code]
            _paste(frame, img, quad, shadow=0.0 if clean else rng.uniform(0.1, 0.5))
            quads.append(quad)
            labels.append({"code": "face_down" if face_down else code, "spot": spot,
                           "quad": quad})
    if clean:
        out, applied = [np.clip(frame, 0, 255).astype(np.uint8)] * frames, {"clean": True}
    else:
        out, applied = _photometric(rng, frame, frames - 1, noise_rng)
    cards = []
    for k, lab in enumerate(labels):
        quad = lab["quad"]
        covers = quads[k + 1:]
        vis = []
        for corner in (0, 2):
            u0, v0, u1, v1 = INDEX_BOX
            box = np.array([[u0, v0], [u1, v0], [u1, v1], [u0, v1]])
            if corner == 2:
                box = 1.0 - box
            pts = _bilinear(quad, box)
            vis.append(round(_visible_fraction(pts, covers, size), 3))
        width = float(np.mean([np.linalg.norm(quad[1] - quad[0]),
                               np.linalg.norm(quad[2] - quad[3])]))
        cards.append({
            "code": lab["code"], "spot": lab["spot"],
            "center": [round(float(v), 1) for v in _bilinear(quad, np.array([[0.5, 0.5]]))[0]],
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in quad],
            "card_width_px": round(width, 1),
            "readable": lab["code"] != "face_down" and max(vis) >= READABLE_FRACTION,
            "index_visible": vis,
        })
    return out, {"width": size[0], "height": size[1], "design": deck.name, "cards": cards,
                 "table_to_image": [[round(float(v), 9) for v in row] for row in hmat],
                 "photometric": applied}


def _bilinear(quad: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Points at card units ``uv`` inside image ``quad`` (TL, TR, BR, BL), via the homography."""
    src = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])
    m = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    return cv2.perspectiveTransform(uv.reshape(-1, 1, 2).astype(np.float32), m).reshape(-1, 2)


def random_deal(rng: np.random.Generator, max_seats: int = 7,
                identical_pairs: float = 0.0) -> dict[str, list[str]]:
    """A random deal: the dealer's up card and hole card, and 1-5 cards at some seats.

    The cards come from one deck, so no two are alike; with ``identical_pairs`` each seat's
    hand, with that probability, has one card repeated as the next (as a six- or eight-deck
    shoe deals now and then: a player's first two cards alike about one hand in 55). At 0 the
    draws from ``rng`` are those made before the option existed.

    >>> deal = random_deal(np.random.default_rng(3), identical_pairs=1.0)
    >>> all(any(a == b for a, b in zip(h, h[1:])) for s, h in deal.items() if s != "dealer")
    True
    """
    deck = list(CARD_CODES)
    rng.shuffle(deck)
    deal: dict[str, list[str]] = {}
    seats = rng.choice(np.arange(1, 8), size=int(rng.integers(1, max_seats + 1)), replace=False)
    for s in sorted(seats):
        n = int(rng.choice([2, 2, 3, 3, 4, 5]))
        deal[f"seat{s}"] = [deck.pop() for _ in range(n)]
        if identical_pairs and rng.random() < identical_pairs:
            j = int(rng.integers(0, n - 1))
            deal[f"seat{s}"][j + 1] = deal[f"seat{s}"][j]
    dealer = [deck.pop(), "XX"] if rng.random() < 0.7 else [deck.pop()]
    if rng.random() < 0.2:
        dealer = ["XX", deck.pop()]
    deal["dealer"] = dealer
    return deal
