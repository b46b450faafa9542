"""A round's camera readings read again from its kept frames (``replay --reread``).

Each ``camera_read`` record names the frames the camera read (:mod:`controller.camera` keeps the
very frames it reads) and the code it recorded for each card. Read again by the same reader (the
model whose SHA-256 the ``camera_started`` record before the round names), every recorded code
must be among the cards read from those frames: a reading the frames do not bear out was not
made from them. Frames that are missing or altered are not read (``audit`` and ``replay`` name
them); the cards' areas are not compared (the demo's simulated camera places them by its own
pose, which the record does not keep).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from controller.books import camera_reads, frame_status
from controller.config import TableConfig
from controller.storage import Store


def reread_round(store: Store, cfg: TableConfig, round_id: int, frames_dir: Path,
                 reader: dict | None, annotate: Path | None = None) -> tuple[int, list[str]]:
    """The camera readings of round ``round_id`` read again from their kept frames, and the
    problems found (none: every recorded camera code is read again from its frames).
    ``reader``: the round's ``camera_started`` record
    (:attr:`controller.replay.Replay.camera_reader`). With ``annotate`` (a directory), each
    reading read again is drawn on its first frame (:func:`vision.annotate.annotate`: the
    cards read again, the layout's areas where the table is calibrated, and under the
    headline the codes the record holds), as ``annotate/NAME.jpg`` (NAME: the frame's;
    :class:`OSError` if it cannot be written)."""
    from controller.camera import CalibrationError, LayoutCalibrator
    from vision.recognize import DEFAULT_MODEL, Recognizer, load_image
    from vision.selfcheck import sha256

    readings = [(r, frames) for _, r in camera_reads(store, round_id)
                if (frames := [f for f in r["frames"] if f.get("sha256")])]
    if not readings:
        return 0, []
    model = Path(cfg.camera.model) if cfg.camera.model else DEFAULT_MODEL
    digest = sha256(model)
    if reader is None or reader.get("model_sha256") != digest:
        return 0, [f"round {round_id}: not read again: its frames were read by "
                   f"{(reader or {}).get('model', 'an unrecorded reader')}, this table's reader "
                   f"is {model.name} ({digest[:16]}…)"]
    rec = Recognizer(model)
    calibrator = LayoutCalibrator(cfg.camera) if cfg.camera.calibration != "none" else None
    problems: list[str] = []
    done = 0
    for reading, frames in readings:
        if any(frame_status(frames_dir, f["name"], f["sha256"]) != "as read" for f in frames):
            continue  # named by the frames' own check
        done += 1
        images = [load_image(frames_dir / f["name"]) for f in frames]
        calibration = None
        if len(images) > 1:
            result = rec.recognize_burst(images)
        else:
            try:  # as the camera did: a frame that cannot be calibrated is read at its own sizes
                calibration = calibrator.for_frame(images[0]) if calibrator else None
            except CalibrationError:
                calibration = None
            result = rec.recognize(images[0], rec.table_for(calibration))
        read = Counter(c["code"] for c in result["cards"])
        # by code only: a reading "Q red" is rank and colour, which the frames' refusals carry
        recorded = Counter(code for code in reading["camera"].values() if " " not in code)
        unread = sorted((recorded - read).elements())
        for code in unread:
            problems.append(f"round {round_id}: the recorded camera code {code} is not read "
                            f"again from {', '.join(f['name'] for f in frames)}")
        if annotate is not None:
            _draw(annotate / f"{Path(frames[0]['name']).stem}.jpg", images[0], result,
                  calibration, reading, unread)
    return done, problems


def _draw(path: Path, image, result: dict, calibration,  # noqa: ANN001 - arrays, calibration
          reading: dict, unread: list[str]) -> None:
    """One reading's first frame drawn with its cards read again, and what the record holds
    of it (its codes, in card order; those not read again named)."""
    from vision.annotate import annotate, save
    from vision.calibration import assign_spots

    if calibration is not None:
        result = assign_spots(result, calibration)
    codes = " ".join(code or "-" for _, code in sorted(reading["camera"].items(),
                                                       key=lambda kv: int(kv[0])))
    caption = f"recorded: {codes or 'no card'}" + (
        f" | not read again: {' '.join(unread)}" if unread else "")
    save(path, annotate(image, result, calibration=calibration, caption=caption))
