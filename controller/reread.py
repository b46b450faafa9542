"""A round's camera readings read again from their kept frames (``replay --reread``, and the
surveillance console's drawn frames).

Each ``camera_read`` record names the frames the camera read (:mod:`controller.camera` keeps the
very frames it reads) and the code it recorded for each card. Read again by the same reader (the
model whose SHA-256 the ``camera_started`` record before the round names), every recorded code
must be among the cards read from those frames: a reading the frames do not bear out was not
made from them. Frames that are missing or altered are not read (``audit`` and ``replay`` name
them); the cards' areas are not compared (the demo's simulated camera places them by its own
pose, which the record does not keep).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from controller.books import camera_reads, card_spots, frame_status
from controller.config import TableConfig
from controller.fusion import area_of
from controller.storage import Store


class RereadRefused(Exception):
    """A reading that is not read again: its frames are missing or altered, or the table's
    reader is not the one that read them."""


@dataclass(frozen=True)
class Reread:
    """One ``camera_read`` record's frames read again."""

    result: dict[str, Any]  # :meth:`vision.recognize.Recognizer.recognize` of the frames
    image: np.ndarray  # the reading's first frame, as kept
    calibration: Any  # the first frame's TableCalibration (a burst's too), None where not placed
    recorded: list[str]  # the codes the record holds, in card order ("-": none)
    unread: list[str]  # recorded codes not read again
    frames: list[str]  # the names of the frames read, the one drawn first
    #: the layout area of each recorded card (``seat1``, ``dealer``, ``hit``: from its spot in
    #: the round), where the caller knows the round's cards; empty otherwise
    areas: list[str] = field(default_factory=list)

    def caption(self) -> str:
        """What the record holds, under a drawing's headline, by area where the areas are
        known: ``recorded: seat1 9C 4D, dealer JS | not read again: JS``; else in card order,
        ``recorded: 9C 4D JS``."""
        if self.areas and len(self.areas) == len(self.recorded):
            by_area: dict[str, list[str]] = {}
            for area, code in zip(self.areas, self.recorded, strict=True):
                by_area.setdefault(area, []).append(code)
            codes = ", ".join(f"{area} {' '.join(cs)}" for area, cs in by_area.items())
        else:
            codes = " ".join(self.recorded)
        return f"recorded: {codes or 'no card'}" + (
            f" | not read again: {' '.join(self.unread)}" if self.unread else "")

    def drawing(self) -> np.ndarray:
        """The first frame drawn with the cards read again (:func:`vision.annotate.annotate`),
        the layout's areas where it was placed on them, and :meth:`caption`."""
        from vision.annotate import annotate
        from vision.calibration import assign_spots

        result = self.result
        if self.calibration is not None:
            result = assign_spots(result, self.calibration)
        return annotate(self.image, result, calibration=self.calibration,
                        caption=self.caption())


class Rereader:
    """The table's reader (``[camera] model``), loaded on first use, reading recorded
    readings again from the kept frames in ``frames_dir``. One reading at a time: the web
    console's requests share it."""

    def __init__(self, cfg: TableConfig, frames_dir: Path) -> None:
        from vision.recognize import DEFAULT_MODEL

        self.cfg = cfg
        self.frames_dir = frames_dir
        self.model = Path(cfg.camera.model) if cfg.camera.model else DEFAULT_MODEL
        self._digest: str | None = None
        self._recognizer: Any = None
        self._calibrator: Any = None
        self._lock = threading.Lock()

    def refusal(self, round_id: int, reader: dict[str, Any] | None) -> str | None:
        """Why round ``round_id``'s readings, read by ``reader`` (its ``camera_started``
        record), cannot be read again here: another model read them. ``None``: they can."""
        from vision.selfcheck import sha256

        if self._digest is None:
            self._digest = sha256(self.model)
        if reader is not None and reader.get("model_sha256") == self._digest:
            return None
        return (f"round {round_id}: not read again: its frames were read by "
                f"{(reader or {}).get('model', 'an unrecorded reader')}, this table's reader "
                f"is {self.model.name} ({self._digest[:16]}…)")

    def reread(self, round_id: int, reading: dict[str, Any],
               reader: dict[str, Any] | None, spots: dict[int, str] | None = None) -> Reread:
        """One ``camera_read`` record (``reading``) of round ``round_id`` read again;
        :class:`RereadRefused` where its frames are not as read or ``reader`` is not this
        table's. ``spots``: the round's card spots by position
        (:func:`controller.books.card_spots`), for the caption's areas."""
        from vision.recognize import load_image

        frames = [f for f in reading["frames"] if f.get("sha256")]
        if not frames:
            raise RereadRefused(f"round {round_id}: the reading kept no frame")
        for f in frames:
            status = frame_status(self.frames_dir, f["name"], f["sha256"])
            if status != "as read":
                raise RereadRefused(f"the frame {f['name']} is {status} since it was read")
        if (why := self.refusal(round_id, reader)) is not None:
            raise RereadRefused(why)
        images = [load_image(self.frames_dir / f["name"]) for f in frames]
        with self._lock:
            result, calibration = self._read(images)
        read = Counter(c["code"] for c in result["cards"])
        # by code only: a reading "Q red" is rank and colour, which the frames' refusals carry
        recorded = Counter(code for code in reading["camera"].values() if " " not in code)
        in_order = sorted(reading["camera"].items(), key=lambda kv: int(kv[0]))
        areas = ([caption_area(spots.get(int(position), "")) for position, _ in in_order]
                 if spots else [])
        return Reread(result, images[0], calibration, [code or "-" for _, code in in_order],
                      sorted((recorded - read).elements()), [f["name"] for f in frames], areas)

    def _read(self, images: list[np.ndarray]) -> tuple[dict[str, Any], Any]:
        """The frames read as the camera read them
        (:meth:`controller.camera.FrameReader.read`): a burst fused at the frames' own sizes,
        one frame at the calibration's where the reader reads at them; either placed on the
        layout by the first frame's calibration where it can be (a frame that cannot be
        calibrated is read unplaced, at its own sizes)."""
        from controller.camera import CalibrationError, LayoutCalibrator
        from vision.recognize import Recognizer

        if self._recognizer is None:
            self._recognizer = Recognizer(self.model)
            if self.cfg.camera.calibration != "none":
                self._calibrator = LayoutCalibrator(self.cfg.camera)
        rec = self._recognizer
        try:
            calibration = self._calibrator.for_frame(images[0]) if self._calibrator else None
        except CalibrationError:
            calibration = None
        if len(images) > 1:
            return rec.recognize_burst(images), calibration
        return rec.recognize(images[0], rec.table_for(calibration)), calibration


def caption_area(spot: str) -> str:
    """A round's card spot as a caption names it: its layout area
    (:func:`controller.fusion.area_of`), ``hit`` for the shoe's cards after the first ones
    (placed by nobody), else the spot itself.

    >>> [caption_area(s) for s in ("seat3:2", "dealer:hole", "extra", "")]
    ['seat3', 'dealer', 'hit', '?']
    """
    return area_of(spot) or ("hit" if spot == "extra" else spot or "?")


def reread_round(store: Store, cfg: TableConfig, round_id: int, frames_dir: Path,
                 reader: dict | None, annotate: Path | None = None) -> tuple[int, list[str]]:
    """The camera readings of round ``round_id`` read again from their kept frames, and the
    problems found (none: every recorded camera code is read again from its frames).
    ``reader``: the round's ``camera_started`` record
    (:attr:`controller.replay.Replay.camera_reader`). With ``annotate`` (a directory), each
    reading read again is drawn on its first frame (:meth:`Reread.drawing`) as
    ``annotate/NAME.jpg`` (NAME: the frame's; :class:`OSError` if it cannot be written)."""
    from vision.annotate import save

    readings = [r for _, r in camera_reads(store, round_id)
                if any(f.get("sha256") for f in r["frames"])]
    if not readings:
        return 0, []
    rereader = Rereader(cfg, frames_dir)
    if (why := rereader.refusal(round_id, reader)) is not None:
        return 0, [why]
    spots = card_spots(store, round_id)
    problems: list[str] = []
    done = 0
    for reading in readings:
        try:
            again = rereader.reread(round_id, reading, reader, spots)
        except RereadRefused:
            continue  # frames missing or altered: named by the frames' own check
        done += 1
        problems += [f"round {round_id}: the recorded camera code {code} is not read again "
                     f"from {', '.join(again.frames)}" for code in again.unread]
        if annotate is not None:
            save(annotate / f"{Path(again.frames[0]).stem}.jpg", again.drawing())
    return done, problems
