"""Table configuration: embedded defaults (``data/default_table.toml``) with a table's own file
laid over them, validated as a whole.

    >>> cfg = load_config()
    >>> cfg.table.decks, cfg.table.wager_cents, cfg.paytable.name
    (6, 100, 'Dynamic 1')
    >>> cfg.shoe.describe()
    '6-deck spanish shoe'
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any

from controller.cards import ShoeComposition
from controller.dynamic import DynamicWeights, WeightsError
from controller.hands import Hand
from controller.money import MoneyError, parse_dollars
from controller.paytable import Paytable
from controller.tomlcheck import ConfigError, TomlSource

__all__ = ["ConfigError", "TableConfig", "load_config"]


@dataclass(frozen=True)
class TableSettings:
    id: str
    seats: int
    decks: int
    wager_cents: int


@dataclass(frozen=True)
class DeviceSettings:
    shoe: str
    board: str
    heartbeat_timeout_s: float


@dataclass(frozen=True)
class WebSettings:
    host: str
    port: int
    session_minutes: int


@dataclass(frozen=True)
class CameraSettings:
    """How camera pixels map to layout areas (``[camera]``); see :mod:`vision.calibration`."""

    calibration: str  # "none", "points" or "aruco"
    max_distance_mm: float
    image_points: tuple[tuple[float, float], ...]
    layout_points: tuple[tuple[float, float], ...]
    aruco_dictionary: str
    aruco_markers: dict[int, tuple[float, float]]
    areas: dict[str, tuple[float, float]]
    #: The reader ONNX model (its ``.json`` names the threshold and the gate); ``""`` = the
    #: bundled one. A house deck's enrolled model (``monster-match enroll-deck``) goes here.
    model: str = ""
    #: Frames read per check of the layout, one after another, fused (:mod:`vision.burst`).
    burst: int = 1
    #: The deck's card width and height on the table (millimetres): where a card lies on the
    #: layout (:meth:`vision.calibration.TableCalibration.card_centre`).
    card_mm: tuple[float, float] = (63.5, 88.9)
    #: How cards go to layout areas: ``"card"``, each to the area nearest it; ``"hand"``, a
    #: long hand's stray end card to its hand's area (:mod:`vision.handspots`).
    place: str = "card"
    #: How the frames kept for surveillance are encoded (``controller.camera.FRAME_ENCODINGS``):
    #: ``"png"``, lossless; ``"jpeg"``, a tenth of the disk.
    frame_format: str = "png"
    #: The camera a live table reads (``monster-match table --live``): a stream URL or
    #: ``/dev/videoN`` (:func:`vision.stream.is_stream`); ``"sim"``: none (the demo draws
    #: its own frames).
    source: str = "sim"
    #: A check reads frames decoded at least this long (milliseconds) after it was asked for:
    #: the card just dealt lies still and the dealer's hand is out of the picture.
    settle_ms: int = 400
    #: The live camera's frame size (width, height): asked of a capture device, and the size
    #: ``"points"`` calibration's ``image_points`` were measured at (a frame of another size
    #: is not placed on the layout: its cards would land in the wrong areas).
    capture_size: tuple[int, int] = (1280, 720)


CALIBRATIONS = ("none", "points", "aruco")
PLACEMENTS = ("card", "hand")
FRAME_FORMATS = ("png", "jpeg")
#: The longest settle a camera check may wait (milliseconds): under a live camera's stall
#: limit (vision.stream.STALL_SECONDS), which it would otherwise count as a lost camera.
MAX_SETTLE_MS = 5000
#: The most frames a check of the layout may read (a second of a 30 fps camera).
MAX_BURST = 30
#: The smallest and largest ``capture_size`` (width, height): QVGA to 8K.
MIN_CAPTURE, MAX_CAPTURE = (320, 240), (7680, 4320)


@dataclass(frozen=True)
class TableConfig:
    table: TableSettings
    paytable: Paytable
    dynamic: DynamicWeights
    devices: DeviceSettings
    db_path: str
    web: WebSettings
    origin: str
    camera: CameraSettings

    @property
    def shoe(self) -> ShoeComposition:
        return ShoeComposition.spanish(self.table.decks)

    @property
    def seed_cents(self) -> int:
        """Initial seed and reseed amount: ``seed_multiple`` x the wager."""
        return self.paytable.seed_multiple * self.table.wager_cents

    def increment(self, wager_cents: int) -> Fraction:
        return self.paytable.increment_rate * wager_cents

    def reserve_increment(self, wager_cents: int) -> Fraction:
        return self.paytable.reserve_rate * wager_cents


def _default_source() -> TomlSource:
    ref = resources.files("controller") / "data" / "default_table.toml"
    return TomlSource(ref.read_text(encoding="utf-8"), "<embedded defaults>")


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load_config(path: str | Path | None = None, **overrides: Any) -> TableConfig:
    """Load the defaults, lay ``path`` over them, then ``overrides`` (``decks=8``)."""
    defaults = _default_source()
    doc = defaults.parse()
    src = defaults
    if path is not None:
        src = TomlSource.from_path(path)
        user = src.parse()
        unknown = set(user) - set(doc)
        if unknown:
            raise src.error(f"unknown section(s): {', '.join(sorted(unknown))}")
        if "dynamic_pays" in user:
            # A table that sets its own weights sets all of them: merging two weight sets would
            # produce a distribution nobody wrote down.
            doc = dict(doc)
            doc["dynamic_pays"] = {}
        for key in ("aruco_markers", "areas"):  # lists of places: replaced whole, not merged
            if key in user.get("camera", {}):
                doc = dict(doc)
                doc["camera"] = {k: v for k, v in doc["camera"].items() if k != key}
        doc = _merge(doc, user)
    for key, value in overrides.items():
        doc["table"][key] = value
    return _build(doc, src)


def _get(src: TomlSource, doc: dict[str, Any], table: str, key: str, kind: type) -> Any:
    section = doc.get(table)
    if not isinstance(section, dict) or key not in section:
        raise src.error(f"[{table}] {key} is required", table, key)
    value = section[key]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise src.error(f"[{table}] {key} must be a whole number, got {value!r}", table, key)
    if kind is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise src.error(f"[{table}] {key} must be a number, got {value!r}", table, key)
    if kind is str and not isinstance(value, str):
        raise src.error(f"[{table}] {key} must be a string, got {value!r}", table, key)
    return value


def _build(doc: dict[str, Any], src: TomlSource) -> TableConfig:
    seats = _get(src, doc, "table", "seats", int)
    if not 1 <= seats <= 7:
        raise src.error("seats must be 1 to 7", "table", "seats")
    decks = _get(src, doc, "table", "decks", int)
    if decks not in (6, 8):
        raise src.error("Player's Edge 21 deals six or eight Spanish decks", "table", "decks")
    try:
        wager = parse_dollars(_get(src, doc, "table", "wager", str))
    except MoneyError as exc:
        raise src.error(str(exc), "table", "wager") from None
    if wager <= 0 or wager.denominator != 1:
        raise src.error("wager must be a positive amount in whole cents", "table", "wager")
    table_id = _get(src, doc, "table", "id", str)
    pay_name = _get(src, doc, "table", "paytable", str)
    if pay_name.endswith(".toml"):
        pay_path = Path(pay_name)
        if not pay_path.is_absolute() and src.origin and Path(src.origin).exists():
            pay_path = Path(src.origin).parent / pay_path
        paytable = Paytable.load(pay_path)
    else:
        paytable = Paytable.builtin(pay_name)
    dynamic = _build_weights(src, doc.get("dynamic_pays", {}), paytable)
    devices = DeviceSettings(
        shoe=_get(src, doc, "devices", "shoe", str),
        board=_get(src, doc, "devices", "board", str),
        heartbeat_timeout_s=float(_get(src, doc, "devices", "heartbeat_timeout_s", float)),
    )
    port = _get(src, doc, "web", "port", int)
    if not 0 <= port <= 65535:
        raise src.error("port must be 0..65535", "web", "port")
    web = WebSettings(_get(src, doc, "web", "host", str), port,
                      _get(src, doc, "web", "session_minutes", int))
    return TableConfig(
        table=TableSettings(table_id, seats, decks, int(wager)),
        paytable=paytable,
        dynamic=dynamic,
        devices=devices,
        db_path=_get(src, doc, "storage", "db", str),
        web=web,
        origin=src.origin,
        camera=_build_camera(src, doc),
    )


def _point(src: TomlSource, value: Any, table: str, key: str) -> tuple[float, float]:
    ok = (isinstance(value, list) and len(value) == 2
          and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value))
    if not ok:
        raise src.error(f"[{table}] {key} must be a point [x, y], got {value!r}", table, key)
    return float(value[0]), float(value[1])


def _build_camera(src: TomlSource, doc: dict[str, Any]) -> CameraSettings:
    method = _get(src, doc, "camera", "calibration", str)
    if method not in CALIBRATIONS:
        raise src.error(f"calibration must be one of {', '.join(CALIBRATIONS)}, got {method!r}",
                        "camera", "calibration")
    max_distance = float(_get(src, doc, "camera", "max_distance_mm", float))
    if max_distance <= 0:
        raise src.error("max_distance_mm must be positive", "camera", "max_distance_mm")
    cam = doc["camera"]
    points = {}
    for key in ("image_points", "layout_points"):
        raw = cam.get(key, [])
        if not isinstance(raw, list):
            raise src.error(f"[camera] {key} must be a list of points", "camera", key)
        points[key] = tuple(_point(src, v, "camera", key) for v in raw)
        if method == "points" and len(points[key]) != 4:
            raise src.error(f"calibration \"points\" needs exactly four {key}, got "
                            f"{len(points[key])}", "camera", key)
    if method == "points":
        from vision.calibration import CalibrationError, TableCalibration

        try:
            TableCalibration.from_points(points["image_points"], points["layout_points"])
        except CalibrationError as exc:
            raise src.error(f"[camera] {exc}", "camera", "image_points") from None
    dictionary = _get(src, doc, "camera", "aruco_dictionary", str)
    markers: dict[int, tuple[float, float]] = {}
    for key, value in cam.get("aruco_markers", {}).items():
        if not str(key).isdigit():
            raise src.error(f"ArUco marker ids are whole numbers, got {key!r}",
                            "camera.aruco_markers", key)
        markers[int(key)] = _point(src, value, "camera.aruco_markers", key)
    if method == "aruco":
        if len(markers) < 4:
            raise src.error("calibration \"aruco\" needs at least four markers in "
                            "[camera.aruco_markers]", "camera", "calibration")
        from vision.calibration import CalibrationError, aruco_dictionary

        try:
            aruco_dictionary(dictionary)
        except CalibrationError as exc:
            raise src.error(str(exc), "camera", "aruco_dictionary") from None
    areas = {str(k): _point(src, v, "camera.areas", k)
             for k, v in cam.get("areas", {}).items()}
    if not areas:
        raise src.error("[camera.areas] lists no layout area", "camera", "calibration")
    model = cam.get("model", "")
    if not isinstance(model, str):
        raise src.error(f"[camera] model must be a path, got {model!r}", "camera", "model")
    if model:
        path = Path(model)
        if not path.is_absolute() and src.origin and Path(src.origin).exists():
            path = Path(src.origin).parent / path
        if not path.is_file() or not path.with_suffix(".json").is_file():
            raise src.error(f"[camera] model {model!r}: no such model (an .onnx file with its "
                            ".json beside it)", "camera", "model")
        model = str(path)
    burst = _get(src, doc, "camera", "burst", int)
    if not 1 <= burst <= MAX_BURST:
        raise src.error(f"[camera] burst is the frames read per check, 1 to {MAX_BURST}, got "
                        f"{burst}", "camera", "burst")
    card_mm = _point(src, _get(src, doc, "camera", "card_mm", list), "camera", "card_mm")
    if not 30.0 <= card_mm[0] < card_mm[1] <= 150.0:
        raise src.error(f"[camera] card_mm is the card's [width, height] in millimetres, the "
                        f"width the shorter, 30 to 150 (poker size [63.5, 88.9]), got "
                        f"{list(card_mm)}", "camera", "card_mm")
    place = _get(src, doc, "camera", "place", str)
    if place not in PLACEMENTS:
        raise src.error(f"[camera] place is how cards go to layout areas, one of "
                        f"{', '.join(PLACEMENTS)}, got {place!r}", "camera", "place")
    frame_format = _get(src, doc, "camera", "frame_format", str)
    if frame_format not in FRAME_FORMATS:
        raise src.error(f"[camera] frame_format is how kept frames are encoded, one of "
                        f"{', '.join(FRAME_FORMATS)}, got {frame_format!r}", "camera",
                        "frame_format")
    source = _get(src, doc, "camera", "source", str)
    from vision.stream import is_stream, redact

    if source != "sim" and not is_stream(source):
        raise src.error(f"[camera] source is the table's camera: a stream URL (rtsp://, "
                        f"http://, ...) or /dev/videoN, or \"sim\", got {redact(source)!r}",
                        "camera", "source")
    if source != "sim" and method == "none":
        raise src.error("[camera] source: a live camera needs calibration = \"points\" or "
                        "\"aruco\" to place the cards it reads on the layout", "camera",
                        "calibration")
    settle_ms = _get(src, doc, "camera", "settle_ms", int)
    if not 0 <= settle_ms <= MAX_SETTLE_MS:
        raise src.error(f"[camera] settle_ms is how long a check waits for the layout to lie "
                        f"still, 0 to {MAX_SETTLE_MS}, got {settle_ms}", "camera", "settle_ms")
    size = _get(src, doc, "camera", "capture_size", list)
    if not (isinstance(size, list) and len(size) == 2 and all(type(v) is int for v in size)
            and MIN_CAPTURE[0] <= size[0] <= MAX_CAPTURE[0]
            and MIN_CAPTURE[1] <= size[1] <= MAX_CAPTURE[1]):
        raise src.error(f"[camera] capture_size is the camera's frame [width, height] in "
                        f"pixels, {MIN_CAPTURE[0]}-{MAX_CAPTURE[0]} by {MIN_CAPTURE[1]}-"
                        f"{MAX_CAPTURE[1]}, got {size}", "camera", "capture_size")
    return CameraSettings(method, max_distance, points["image_points"],
                          points["layout_points"], dictionary, markers, areas, model, burst,
                          card_mm, place, frame_format, source, settle_ms,
                          (size[0], size[1]))


def _build_weights(src: TomlSource, raw: dict[str, Any], paytable: Paytable) -> DynamicWeights:
    def hand_of(name: str, table: str) -> Hand:
        try:
            return Hand.from_name(name)
        except ValueError as exc:
            raise src.error(str(exc), table, name) from None

    try:
        counts = {int(k): v for k, v in raw.get("count_weights", {}).items()}
    except ValueError:
        raise src.error("count_weights keys are the counts 1, 2, 3",
                        "dynamic_pays.count_weights", "1") from None
    weights = DynamicWeights(
        version=str(raw.get("version", "")),
        count_weights=counts,
        combination_weights={
            hand_of(k, "dynamic_pays.combination_weights"): v
            for k, v in raw.get("combination_weights", {}).items()
        },
        payout_weights={
            hand_of(k, "dynamic_pays.payout_weights"): tuple(v) if isinstance(v, list) else v
            for k, v in raw.get("payout_weights", {}).items()
        },
    )
    try:
        weights.validate(paytable)
    except (WeightsError, TypeError) as exc:
        raise src.error(f"[dynamic_pays] {exc}") from None
    return weights
