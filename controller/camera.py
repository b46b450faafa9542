"""The overhead camera as the controller uses it: a frame, read by the vision pipeline, mapped to
layout areas, cross-checked against the shoe (:mod:`controller.fusion`).

:class:`LayoutCalibrator` maps a frame's pixels to layout areas as the table's ``[camera]``
settings say (four fixed points, or ArUco markers found in each frame).
:class:`SimulatedCamera` draws the frame procedurally from what is on the layout (the demo's
table), with the same perspective, light and noise as the vision model's validation scenes; the
reading goes through the real recogniser, so a misread in the demo is a real misread.
:class:`LiveCamera` reads a live table's own camera (``[camera] source``). A frame
kept for surveillance is the very frame read: it is encoded as kept (``[camera] frame_format``:
lossless PNG, or JPEG) and the camera reads the decoded file, so reading the kept file again
gives the same cards, to the bit, and its SHA-256 in the record
(:meth:`controller.service.TableService.camera_check`) shows it unaltered.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from controller.config import CameraSettings
from controller.fusion import CameraCard, CameraRankColour
from vision.calibration import CalibrationError, TableCalibration, assign_spots
from vision.recognize import DEFAULT_MODEL, Recognizer
from vision.stream import OPEN_SECONDS, STALL_SECONDS, LiveStream, StreamError, redact
from vision.tablesize import from_labels

__all__ = ["CalibrationError", "CameraRead", "FrameReader", "LayoutCalibrator", "LiveCamera",
           "SimulatedCamera", "check_frame_name"]

#: How the frames kept for surveillance (the frames read) are encoded, by ``[camera]
#: frame_format``: the file suffix and OpenCV's encoder settings. PNG at its fastest level is
#: lossless (a 720p frame some 0.8 MB, 40 ms); JPEG at 85 is a tenth of that on disk, but the
#: frame read is then a JPEG of the camera's (on 180 frames of the training designs 0.3
#: points fewer cards read: models/cards_v7.md, forty-sixth session).
FRAME_ENCODINGS: dict[str, tuple[str, list[int]]] = {
    "png": (".png", [cv2.IMWRITE_PNG_COMPRESSION, 1]),
    "jpeg": (".jpg", [cv2.IMWRITE_JPEG_QUALITY, 85]),
}


def check_frame_name(round_id: int, hole_up: bool) -> str:
    """The name a round's camera check keeps its frames under (:meth:`FrameReader._keep`
    adds the suffix, and ``.b1`` ... for a burst's later frames).

    >>> check_frame_name(12, hole_up=False), check_frame_name(12, hole_up=True)
    ('round000012-dealt', 'round000012-revealed')
    """
    return f"round{round_id:06d}-{'revealed' if hole_up else 'dealt'}"


class LayoutCalibrator:
    """The image-to-layout calibration of each frame, from the ``[camera]`` settings.

    ``"points"`` gives the same calibration for every frame; ``"aruco"`` finds the markers in
    each frame (:class:`CalibrationError` when too few show); ``"none"`` gives ``None``.
    """

    def __init__(self, settings: CameraSettings) -> None:
        self.settings = settings
        self._fixed = None
        if settings.calibration == "points":
            self._fixed = TableCalibration.from_points(
                settings.image_points, settings.layout_points, settings.areas,
                settings.max_distance_mm, settings.card_mm, settings.place == "hand")

    @property
    def enabled(self) -> bool:
        return self.settings.calibration != "none"

    def for_frame(self, image: np.ndarray) -> TableCalibration | None:
        """``image``'s calibration. Under ``"points"``, :class:`CalibrationError` for a frame
        whose size is not ``[camera] capture_size``, at which the ``image_points`` were
        measured: a camera set to another size (or reset to its default) would otherwise
        have every card placed in the wrong area."""
        s = self.settings
        if s.calibration == "aruco":
            return TableCalibration.from_aruco(image, s.aruco_markers, s.aruco_dictionary,
                                               s.areas, s.max_distance_mm,
                                               card_mm=s.card_mm, by_hand=s.place == "hand")
        h, w = image.shape[:2]
        if self._fixed is not None and (w, h) != s.capture_size:
            raise CalibrationError(
                f"the frame is {w}x{h}; [camera] capture_size is {s.capture_size[0]}x"
                f"{s.capture_size[1]}, the size its image_points were measured at: set the "
                "camera to that size, or measure the points again")
        return self._fixed


@dataclass
class CameraRead:
    """One frame's reading: cards per layout area, face-down and unreadable cards, timing."""

    cards: list[CameraCard]
    face_down: list[str | None]  # the area of each face-down card
    unreadable: list[str | None]
    elapsed_ms: float  # all the frames of a burst
    frame_names: list[str] = field(default_factory=list)  # every frame's file kept, first first
    frame_sha256: list[str] = field(default_factory=list)  # each kept file's SHA-256 (hex)
    calibration_error: str | None = None  # why the frame could not be placed on the layout
    warning: str | None = None  # why the frame's face-up cards were refused (no colour, mirrored)
    frames: int = 1  # frames read and fused (the [camera] burst)
    #: Cards among the unreadable ones whose rank and colour the camera is sure of.
    rank_colour: list[CameraRankColour] = field(default_factory=list)
    #: The frame's condition (:mod:`vision.quality`: card size, edge blur, warnings).
    quality: dict[str, Any] | None = None
    #: Why no frame was read: a live camera that could not be opened, stalled or ended.
    camera_error: str | None = None


class FrameReader:
    """What every camera of the table does with its frames: keep them for surveillance
    (:meth:`_keep`, in ``frames_dir``, encoded as ``[camera] frame_format`` says) and read
    the kept files with the vision model, fused over a burst, placing the cards on the layout
    (:meth:`read`)."""

    def __init__(self, frames_dir: Path | None, recognizer: Recognizer | None,
                 settings: CameraSettings | None) -> None:
        self.frames_dir = frames_dir
        if frames_dir is not None:
            frames_dir.mkdir(parents=True, exist_ok=True)
        self.recognizer = recognizer or Recognizer((settings and settings.model)
                                                   or DEFAULT_MODEL)
        self.burst = settings.burst if settings is not None else 1
        self.frame_format = settings.frame_format if settings is not None else "png"
        if self.burst > self.recognizer.burst_frames:
            raise ValueError(
                f"[camera] burst = {self.burst}, but the model's burst threshold was chosen for "
                f"bursts of up to {self.recognizer.burst_frames} frames: set burst to at most "
                "that (more frames are more chances to misread)")

    def _keep(self, frames: np.ndarray | Sequence[np.ndarray], name: str | None
              ) -> tuple[list[np.ndarray], list[str], list[str]]:
        """The frames as they will be read, the names of their kept files and the files'
        SHA-256: with a frames directory and a name, each frame is encoded as ``NAME.png``
        (``NAME.b1.png`` ... for a burst's later frames; ``.jpg`` for JPEG), written, and
        decoded again, so what is read is what is kept; otherwise the frames as they are."""
        frames = [frames] if isinstance(frames, np.ndarray) else list(frames)
        if self.frames_dir is None or name is None:
            return frames, [], []
        suffix, params = FRAME_ENCODINGS[self.frame_format]
        kept, names, hashes = [], [], []
        for i, image in enumerate(frames):
            ok, buf = cv2.imencode(suffix, image, params)
            if not ok:
                raise ValueError(f"the camera frame {name} could not be encoded")
            names.append(f"{name}{suffix}" if i == 0 else f"{name}.b{i}{suffix}")
            data = buf.tobytes()
            (self.frames_dir / names[-1]).write_bytes(data)
            hashes.append(hashlib.sha256(data).hexdigest())
            kept.append(cv2.imdecode(buf, cv2.IMREAD_COLOR))
        return kept, names, hashes

    def _read_kept(self, frames: Sequence[np.ndarray], name: str | None,
                   calibrator: LayoutCalibrator | None,
                   calibration: TableCalibration | None = None) -> CameraRead:
        """One check: ``frames`` kept (:meth:`_keep`) and the kept ones read, placed by the
        calibration ``calibrator`` finds in the first (a frame it cannot calibrate is read
        unplaced, why in ``calibration_error``), or without one by ``calibration``."""
        frames, names, hashes = self._keep(frames, name)
        error = None
        if calibrator is not None:
            try:
                calibration = calibrator.for_frame(frames[0])
            except CalibrationError as exc:
                calibration, error = None, str(exc)
        read = self.read(frames, calibration)
        read.frame_names, read.frame_sha256 = names, hashes
        read.calibration_error = error
        return read

    def read(self, frames: np.ndarray | Sequence[np.ndarray],
             calibration: TableCalibration | None, name: str | None = None) -> CameraRead:
        """Read one frame, or the frames of a burst (fused), and place the cards on the
        layout; with ``name`` the frames are kept first (:meth:`_keep`) and the kept files
        are what is read."""
        frames, names, hashes = self._keep(frames, name)
        # A single frame is read at the calibration's card sizes where the reader has a
        # threshold for such reads (an enrolled deck whose frames showed the rule there);
        # otherwise at the frame's own estimate: the bundled reader's misread rule asks 0.999
        # of calibrated reads, where it reads fewer cards (models/cards_v5.md, 28th and 29th
        # sessions). Bursts are calibrated for the frame's own sizes only.
        result: dict[str, Any] = (
            self.recognizer.recognize(frames[0], self.recognizer.table_for(calibration))
            if len(frames) == 1 else self.recognizer.recognize_burst(frames))
        if calibration is not None:
            result = assign_spots(result, calibration)
        else:
            result = {**result, **{k: [{**c, "spot": None} for c in result[k]]
                                   for k in ("cards", "face_down", "unreadable")}}
        cards = [CameraCard(c["code"], c["spot"] or "off-layout", float(c["confidence"]))
                 for c in result["cards"]]
        rank_colour = [CameraRankColour(u["rank"], u["color"], u["spot"] or "off-layout",
                                        float(u["confidence"]))
                       for u in result["unreadable"] if "rank" in u]
        return CameraRead(cards, [c["spot"] for c in result["face_down"]],
                          [c["spot"] for c in result["unreadable"]],
                          float(result.get("elapsed_ms", 0.0)), names, hashes,
                          warning=result.get("warning"), frames=len(frames),
                          rank_colour=rank_colour, quality=result.get("quality"))


class SimulatedCamera(FrameReader):
    """Renders the layout, reads it back with the vision model, keeps the frames for
    surveillance (JPEG files in ``frames_dir``). With ``[camera] burst`` over 1 each check
    renders that many frames of the still layout (fresh sensor noise in each) and fuses their
    reads (:meth:`vision.recognize.Recognizer.recognize_burst`)."""

    def __init__(self, frames_dir: Path | None, seed: int = 0, design: str = "plastic",
                 recognizer: Recognizer | None = None, size: tuple[int, int] = (1280, 720),
                 tilt_max: float = 25.0, card_px: tuple[float, float] = (46.0, 54.0),
                 settings: CameraSettings | None = None) -> None:
        super().__init__(frames_dir, recognizer, settings)
        self.rng = np.random.default_rng(seed)
        self.design = design
        self.size = size
        self.tilt_max = tilt_max
        # A fixed table camera frames the whole layout: cards ~46-54 px wide at 720p.
        self.card_px = card_px
        # With ArUco calibration the simulated layout carries the configured markers and each
        # frame is calibrated from them; otherwise the simulator's own pose is the calibration.
        self.calibrator = LayoutCalibrator(settings) if (
            settings is not None and settings.calibration == "aruco") else None
        self.by_hand = settings is not None and settings.place == "hand"

    def capture(self, layout: Mapping[str, Sequence[str]], name: str | None = None
                ) -> CameraRead:
        """Draw ``layout`` (area -> card codes in dealing order, ``"XX"`` face down) and read it."""
        from vision.synth import render_burst

        markers = self.calibrator.settings.aruco_markers if self.calibrator else None
        frames, labels = render_burst(layout, self.rng, self.burst, design=self.design,
                                      size=self.size, tilt_max=self.tilt_max,
                                      card_px=self.card_px, markers=markers,
                                      hands_in_area=True)
        if self.calibrator is not None:
            return self._read_kept(frames, name, self.calibrator)
        table = from_labels(labels)  # the simulator's own layout-to-image homography, its deck
        return self._read_kept(frames, name, None, TableCalibration(
            table.image_to_layout, card_mm=table.card_mm, by_hand=self.by_hand))


class LiveCamera(FrameReader):
    """The table's own camera (``[camera] source``: a stream URL or ``/dev/videoN``), read
    as :class:`SimulatedCamera` reads its drawings: each check keeps its frames and reads the
    kept files, calibrated by ``[camera] calibration`` (four points, or the ArUco markers of
    each frame) to place the cards on the layout.

    A check reads the newest frames decoded ``[camera] settle_ms`` or more after it was
    asked for (:meth:`vision.stream.LiveStream.next_frame`), ``[camera] burst`` of them one
    after another, so a card is read lying still, never from a frame of before the deal.
    A camera that cannot be opened, stalls or ends makes a :class:`CameraRead` with no cards
    and the reason in ``camera_error`` (the table holds the round on it:
    :meth:`controller.service.TableService.camera_check`); the next check opens it again.
    The camera is opened by :meth:`open` or the first check, and released by :meth:`close`.
    """

    def __init__(self, settings: CameraSettings, frames_dir: Path | None,
                 recognizer: Recognizer | None = None, open_seconds: float = OPEN_SECONDS,
                 stall_seconds: float = STALL_SECONDS) -> None:
        if settings.source == "sim":
            raise ValueError("[camera] source names no live camera (\"sim\")")
        if settings.calibration == "none":
            raise ValueError("a live camera needs [camera] calibration \"points\" or \"aruco\"")
        super().__init__(frames_dir, recognizer, settings)
        self.source = settings.source
        self.settle_s = settings.settle_ms / 1000.0
        self.calibrator = LayoutCalibrator(settings)
        self.open_seconds = open_seconds
        self.stall_seconds = stall_seconds
        self._stream: LiveStream | None = None

    @property
    def name(self) -> str:
        """The camera's source without its URL's password."""
        return redact(self.source)

    def open(self) -> None:
        """Open the camera now (:class:`vision.stream.StreamError` if it cannot be); a
        capture device is asked for ``[camera] capture_size``."""
        if self._stream is None:
            self._stream = LiveStream(self.source, self.open_seconds, self.stall_seconds,
                                      self.calibrator.settings.capture_size)

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def capture(self, layout: Mapping[str, Sequence[str]] | None = None,
                name: str | None = None) -> CameraRead:
        """Read the layout as the camera shows it now (``layout``, what the controller
        expects there, is not looked at: the cross-check compares); ``name``: the kept
        frames' file name, as :meth:`FrameReader._keep` says."""
        asked = time.monotonic()
        try:
            self.open()
            stream = self._stream  # (close() may drop it meanwhile, from another thread)
            assert stream is not None
            frames, number, since = [], -1, asked + self.settle_s
            while len(frames) < self.burst:
                number, _, frame = stream.next_frame(number, since)
                frames.append(frame)
        except StreamError as exc:
            self.close()
            return CameraRead([], [], [], 0.0, camera_error=str(exc))
        return self._read_kept(frames, name, self.calibrator)

    def __enter__(self) -> LiveCamera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
