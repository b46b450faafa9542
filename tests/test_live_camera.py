"""The live table's camera (`controller.camera.LiveCamera`, ``[camera] source``): a real MJPEG
stream over HTTP showing a rendered layout with the table's ArUco markers, read through
OpenCV's FFmpeg backend, calibrated, kept and cross-checked as the table does it."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.camera import LiveCamera
from controller.config import ConfigError, load_config
from vision.mjpeg import MjpegCamera
from vision.recognize import load_image
from vision.synth import DEFAULT_MARKERS, render_burst

DEALT = {"seat1": ["7H", "2C"], "seat4": ["JD", "5S"], "dealer": ["9H", "XX"]}
OTHER = {"seat2": ["KC", "4D"], "seat6": ["8S", "3H"], "dealer": ["QH", "XX"]}


def layout_jpegs(layout: dict[str, list[str]], seed: int, frames: int = 1) -> list[bytes]:
    """``layout`` drawn as the demo's camera draws it, with the default ArUco markers, as a
    still camera's JPEGs, fresh sensor noise in each (cards 60-66 px wide, so that most
    read)."""
    imgs, _ = render_burst(layout, np.random.default_rng(seed), frames, tilt_max=20.0,
                           card_px=(60.0, 66.0), markers=DEFAULT_MARKERS, hands_in_area=True)
    out = []
    for img in imgs:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
        assert ok
        out.append(buf.tobytes())
    return out


def live_settings(tmp_path: Path, source: str, settle_ms: int = 0, more: str = "",  # noqa: ANN201
                  calibration: str = "aruco"):
    (tmp_path / "t.toml").write_text(
        f'[camera]\ncalibration = "{calibration}"\nsource = "{source}"\n'
        f"settle_ms = {settle_ms}\n" + more)
    return load_config(tmp_path / "t.toml").camera


def placed_right(read, layout: dict[str, list[str]]) -> int:  # noqa: ANN001
    """How many of ``read``'s cards lie in an area that holds their code; fails on any other."""
    for card in read.cards:
        assert card.code in layout.get(card.area, []), f"{card.code} placed at {card.area}"
    return len(read.cards)


def test_a_live_camera_is_read_placed_and_kept(tmp_path: Path) -> None:
    with MjpegCamera(layout_jpegs(DEALT, 1), fps=20) as cam, \
            LiveCamera(live_settings(tmp_path, cam.url), tmp_path / "frames") as live:
        read = live.capture(name="round000001-dealt")
    assert read.camera_error is None and read.calibration_error is None
    assert placed_right(read, DEALT) >= 3
    assert read.frame_names == ["round000001-dealt.png"]
    kept = tmp_path / "frames" / "round000001-dealt.png"
    assert read.frame_sha256 == [hashlib.sha256(kept.read_bytes()).hexdigest()]
    # the kept file is the frame read: read again, the same cards
    again = live.read(load_image(kept), live.calibrator.for_frame(load_image(kept)))
    assert [(c.code, c.area) for c in again.cards] == [(c.code, c.area) for c in read.cards]


def test_a_check_reads_frames_from_after_it_was_asked(tmp_path: Path) -> None:
    """The camera shows one layout, then another the moment the check is asked for: with a
    settle the check reads the new layout, never a frame decoded before it."""
    with MjpegCamera(layout_jpegs(OTHER, 2), fps=25) as cam, \
            LiveCamera(live_settings(tmp_path, cam.url, settle_ms=300), None) as live:
        live.open()
        time.sleep(0.5)  # frames of OTHER decoded and waiting
        cam.show(layout_jpegs(DEALT, 3))
        read = live.capture()
    assert read.camera_error is None
    assert placed_right(read, DEALT) >= 3


def test_a_burst_reads_consecutive_fresh_frames(tmp_path: Path) -> None:
    # (a model with a burst threshold: cards_v4's, chosen for bursts of up to 3 frames)
    v4 = Path(__file__).resolve().parent.parent / "models" / "cards_v4.onnx"
    more = f'burst = 2\nmodel = "{v4}"\n'
    with MjpegCamera(layout_jpegs(DEALT, 4, frames=2), fps=20) as cam, \
            LiveCamera(live_settings(tmp_path, cam.url, more=more), tmp_path / "f") as live:
        read = live.capture(name="r")
    assert read.frames == 2 and read.frame_names == ["r.png", "r.b1.png"]
    assert placed_right(read, DEALT) >= 3


def test_a_lost_camera_holds_the_round_and_is_opened_again(tmp_path: Path,
                                                           dealt_service) -> None:  # noqa: ANN001
    svc, rid = dealt_service
    # each connection gets 15 frames at 30 a second, then the camera hangs up
    with MjpegCamera(layout_jpegs(DEALT, 6), fps=30, frames=15) as cam:
        live = LiveCamera(live_settings(tmp_path, cam.url), None, stall_seconds=2.0)
        assert live.capture().camera_error is None
        time.sleep(1.0)  # the connection's frames are spent: the stream ends
        lost = live.capture()
        assert lost.cards == [] and "the stream ended" in lost.camera_error
        result = svc.camera_check(rid, lost.cards, hole_up=False,
                                  camera_error=lost.camera_error)
        assert result.problems == [f"camera frame not read: {lost.camera_error}"]
        assert svc.table.current().state.value == "held"
        # the next check opens the camera again
        back = live.capture()
        assert back.camera_error is None and placed_right(back, DEALT) >= 3
        live.close()


def test_a_camera_that_cannot_be_opened_is_a_camera_error(tmp_path: Path) -> None:
    live = LiveCamera(live_settings(tmp_path, "http://admin:pw@127.0.0.1:9/video.mjpg"), None,
                      open_seconds=2.0)
    read = live.capture()
    assert read.cards == []
    assert read.camera_error == ("http://admin:***@127.0.0.1:9/video.mjpg: the camera could "
                                 "not be opened")


@pytest.mark.parametrize(("text", "words"), [
    ('source = "cam7"', "source is the table's camera"),
    ('source = "file:///x.mp4"', "source is the table's camera"),
    ('source = "rtsp://cam7/stream1"\ncalibration = "none"', "a live camera needs calibration"),
    ('settle_ms = -1', "settle_ms is how long"),
    ('settle_ms = 6000', "settle_ms is how long"),
    ('capture_size = [1280]', "capture_size is the camera's frame"),
    ('capture_size = "1280x720"', "capture_size is the camera's frame"),
    ('capture_size = [1280.0, 720.0]', "capture_size is the camera's frame"),
    ('capture_size = [160, 120]', "capture_size is the camera's frame"),
])
def test_bad_camera_source_refused(tmp_path: Path, text: str, words: str) -> None:
    (tmp_path / "t.toml").write_text(f"[camera]\n{text}\n")
    with pytest.raises(ConfigError, match=words):
        load_config(tmp_path / "t.toml")


def test_a_password_in_the_source_is_not_shown_in_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text('[camera]\nsource = "ftp://admin:s3cret@cam7/x"\n')
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "t.toml")
    assert "s3cret" not in str(err.value)


def test_points_calibration_reads_only_frames_of_the_size_its_points_were_measured_at(
        tmp_path: Path) -> None:
    """Four layout points measured on the camera's 1280x720 frames place its cards right.
    Told the camera gives 1920x1080 (as if it had been reset to another size), a check
    keeps and reads the frame but places none of its cards, and says why (the round is
    held: :meth:`TableService.camera_check`), as its points would place every card in the
    wrong area. Under ArUco calibration each frame's markers place its cards, so a frame of
    another size is placed."""
    imgs, labels = render_burst(DEALT, np.random.default_rng(1), 1, tilt_max=20.0,
                                card_px=(60.0, 66.0), markers=DEFAULT_MARKERS,
                                hands_in_area=True)
    jpeg = cv2.imencode(".jpg", imgs[0], [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes()
    to_image = np.asarray(labels["table_to_image"], np.float64)
    layout = [list(xy) for xy in list(DEFAULT_MARKERS.values())[:4]]
    seen = to_image @ np.array([[x, y, 1.0] for x, y in layout]).T
    image = (seen[:2] / seen[2]).T.round(1).tolist()

    def settings(calibration: str, size: str):  # noqa: ANN202
        return live_settings(tmp_path, cam.url, calibration=calibration, more=(
            f"image_points = {image}\nlayout_points = {layout}\ncapture_size = {size}\n"))

    with MjpegCamera([jpeg], fps=20) as cam:
        with LiveCamera(settings("points", "[1280, 720]"), None) as live:
            read = live.capture()
        assert read.camera_error is None and placed_right(read, DEALT) >= 3
        with LiveCamera(settings("points", "[1920, 1080]"), tmp_path / "f") as live:
            wrong = live.capture(name="r")
        assert wrong.camera_error is None and wrong.frame_names == ["r.png"]
        assert wrong.cards and {c.area for c in wrong.cards} == {"off-layout"}
        assert wrong.calibration_error == (
            "the frame is 1280x720; [camera] capture_size is 1920x1080, the size its "
            "image_points were measured at: set the camera to that size, or measure the "
            "points again")
        with LiveCamera(settings("aruco", "[1920, 1080]"), None) as live:
            marked = live.capture()
        assert marked.camera_error is None and placed_right(marked, DEALT) >= 3
