"""A live camera read by `recognize`: a real MJPEG stream over HTTP (a server on a local
socket, as IP cameras serve them), opened by OpenCV's FFmpeg backend."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from controller.cli import main
from vision.mjpeg import MjpegCamera
from vision.stream import LiveStream, StreamError

SAMPLE = Path(__file__).resolve().parent.parent / "sample_images" / "plastic_000.jpg"


@contextmanager
def mjpeg_camera(frames: int, fps: float, hold_seconds: float = 0.0) -> Iterator[str]:
    """A camera (`vision.mjpeg.MjpegCamera`) sending ``SAMPLE`` ``frames`` times a connection
    at ``fps``, then (with ``hold_seconds``) keeping the connection open without a frame,
    then closing it. Yields its URL, with a user and password, as cameras are often
    addressed."""
    with MjpegCamera([SAMPLE.read_bytes()], fps, frames, hold_seconds,
                     credentials="floor:s3cret") as camera:
        yield camera.url


def test_the_newest_frame_each_time_then_the_end_as_an_error() -> None:
    with mjpeg_camera(frames=20, fps=50) as url, LiveStream(url) as live:
        got = []
        with pytest.raises(StreamError, match=r"the stream ended after 20 frames"):
            for number, skipped, frame in live:
                got.append((number, skipped))
                assert frame.shape == (720, 1280, 3)
                time.sleep(0.1)  # a slow reader: frames go by unread
    numbers = [n for n, _ in got]
    assert numbers == sorted(set(numbers)) and numbers[-1] == 19
    # every frame is either read or counted as skipped
    assert sum(1 + s for _, s in got) == 20
    assert any(s > 0 for _, s in got)


def test_a_camera_that_stops_sending_is_reported() -> None:
    with mjpeg_camera(frames=2, fps=50, hold_seconds=8) as url:
        live = LiveStream(url, stall_seconds=1.5)
        t0 = time.monotonic()
        with pytest.raises(StreamError, match=r"no frame for 1.5 s after 2 frames"):
            for _ in live:
                pass
        assert time.monotonic() - t0 < 6
        live.close()


def test_recognize_reads_a_live_camera(capsys) -> None:
    """``--frames 3``: three lines, each the newest frame, the password not shown; each
    frame read as the same JPEG decoded by FFmpeg reads (FFmpeg's decoder rounds otherwise
    than OpenCV's ``imdecode``: a level or so, and a few cards of the samples read otherwise)."""
    import cv2

    from vision.recognize import Recognizer

    cap = cv2.VideoCapture(str(SAMPLE), cv2.CAP_FFMPEG)
    ok, decoded = cap.read()
    cap.release()
    assert ok
    result = Recognizer().recognize(decoded)
    want = json.loads(json.dumps(result["cards"]))
    with mjpeg_camera(frames=200, fps=25) as url:
        assert main(["recognize", "--json", url, "--frames", "3"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 3
    assert all(line["image"].startswith("http://floor:***@127.0.0.1:") for line in lines)
    assert [line["frame"] for line in lines] == sorted({line["frame"] for line in lines})
    assert all(line["skipped"] >= 0 for line in lines)
    for line in lines:
        assert line["cards"] == want  # codes, confidences, centres and corners
    assert len(want) >= 2


def test_a_camera_that_cannot_be_opened_gives_an_error_line_and_the_rest_go_on(
        capsys) -> None:
    with mjpeg_camera(frames=1, fps=1) as url:
        closed = url.rsplit(":", 1)[0] + ":1/video.mjpg"  # the same host, a closed port
    assert main(["recognize", "--json", closed, str(SAMPLE)]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["error"].endswith("the camera could not be opened")
    assert "s3cret" not in lines[0]["error"] and "s3cret" not in lines[0]["image"]
    assert lines[1]["image"] == str(SAMPLE) and lines[1]["cards"]


def test_a_stream_ending_mid_run_is_an_error_after_its_frames(capsys) -> None:
    with mjpeg_camera(frames=4, fps=20) as url:
        assert main(["recognize", "--json", url]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[-1]["error"].endswith("the stream ended after 4 frames")
    assert 1 <= len(lines) - 1 <= 4 and all("cards" in line for line in lines[:-1])


def test_bad_options_for_a_camera_are_refused(capsys) -> None:
    assert main(["recognize", "rtsp://127.0.0.1:1/x", "--frames", "0"]) == 2
    assert "--frames must be at least 1" in capsys.readouterr().err
    assert main(["recognize", "--burst", "rtsp://127.0.0.1:1/x"]) == 2
    assert "not videos or cameras" in capsys.readouterr().err
    assert main(["recognize", "--workers", "2", "rtsp://127.0.0.1:1/x"]) == 2
    assert "read by one process" in capsys.readouterr().err


def test_a_lost_camera_is_opened_again_with_reconnect(capsys) -> None:
    """``--reconnect``: each loss is an error line, the camera is opened again, and reading
    goes on until ``--frames`` are read; the lines say their connection."""
    with mjpeg_camera(frames=3, fps=20) as url:  # every connection: 3 frames, then closed
        assert main(["recognize", "--json", url, "--frames", "7", "--reconnect", "0.1"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    read = [line for line in lines if "cards" in line]
    lost = [line for line in lines if "error" in line]
    assert len(read) == 7
    assert lost and all(line["error"].endswith("the stream ended after 3 frames")
                        for line in lost)
    connections = [line["connection"] for line in lines]
    assert connections == sorted(connections) and connections[-1] >= 3
    # within a connection the camera's frame numbers rise; each connection starts again
    for c in set(connections):
        numbers = [line["frame"] for line in read if line["connection"] == c]
        assert numbers == sorted(set(numbers)) and all(n < 3 for n in numbers)


def test_ctrl_c_stops_reading_a_camera_quietly() -> None:
    """Ctrl-C while a camera is read (no --frames: it would read on): status 130 at once,
    no traceback, the lines before whole."""
    import os
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    with mjpeg_camera(frames=10_000, fps=25) as url:
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "recognize", "--json",
                                 url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=root, start_new_session=True)
        first = json.loads(proc.stdout.readline())
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert time.monotonic() - t0 < 5
    assert "Traceback" not in err.decode() and first["cards"]
    for line in rest.decode().splitlines():
        assert "cards" in json.loads(line)


def test_the_live_camera_benchmark_reports_rate_and_latency() -> None:
    """benchmarks/live_camera.py serves labelled frames as a camera and reads it: frames
    sent and read, the reading time and the latency, each a number."""
    import re
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, str(root / "benchmarks" / "live_camera.py"),
                          str(root / "sample_images"), "--fps", "10", "--seconds", "2"],
                         capture_output=True, text=True, timeout=120, cwd=root,
                         check=True).stdout
    sent = int(re.search(r"camera: (\d+) frames sent", out).group(1))
    read = int(re.search(r"read: (\d+) frames", out).group(1))
    assert 15 <= sent <= 30 and 1 <= read <= sent
    reading = float(re.search(r"reading time: median ([\d.]+) ms", out).group(1))
    latency = float(re.search(r"latency, frame sent to its result: median ([\d.]+) ms",
                              out).group(1))
    assert 0 < reading <= latency


def test_closing_a_stream_wakes_a_reader_waiting_for_a_frame() -> None:
    import threading

    with mjpeg_camera(frames=2, fps=50, hold_seconds=8) as url:
        live = LiveStream(url, stall_seconds=6)
        errors: list[str] = []

        def reader() -> None:
            try:
                live.next_frame(after=5)  # the camera stalls after frame 1: waits
            except StreamError as exc:
                errors.append(str(exc))

        waiting = threading.Thread(target=reader)
        waiting.start()
        time.sleep(0.5)
        t0 = time.monotonic()
        live.close()
        waiting.join(3)
        assert not waiting.is_alive() and time.monotonic() - t0 < 3
        assert errors == [url.replace("s3cret", "***") + ": closed"]


def test_a_paused_camera_sends_nothing_until_it_shows_the_new_view() -> None:
    """`MjpegCamera.pause` (what `camera-sim --table` does while it draws a new layout): no
    frame goes out while paused, and the first frame decoded after it is the new view, not
    the old one sent on time (a check asked after a deal would read the cards of before
    it). Measured on a real stream read by OpenCV."""
    import cv2
    import numpy as np

    other = SAMPLE.with_name("neoclassical_000.jpg")
    with MjpegCamera([SAMPLE.read_bytes()], fps=25) as camera, LiveStream(camera.url) as live:
        number, _, before = live.next_frame()
        camera.pause()
        time.sleep(0.2)  # a frame being written as it paused arrives
        sent, paused_at = camera.frames_sent, time.monotonic()
        time.sleep(0.5)
        assert camera.frames_sent == sent  # 12 frames at 25 fps had it not paused
        camera.show([other.read_bytes()])
        number, decoded, after = live.next_frame(number, paused_at)
        assert decoded >= paused_at and camera.frames_sent > sent
    want = cv2.imread(str(other)).astype(np.int16)
    assert np.abs(after - want).mean() < 3.0 < np.abs(before - want).mean()
