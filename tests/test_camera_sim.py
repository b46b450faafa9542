"""``monster-match camera-sim``: frames served as a real IP camera serves them (an MJPEG
stream over HTTP, from a process of its own), read back through OpenCV's FFmpeg backend as
``recognize URL`` and a live table read a camera."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cli import CommandError, main
from vision.evaluate import labelled_images
from vision.recognize import load_image
from vision.stream import LiveStream

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def test_camera_sim_serves_the_frames_until_stopped(capsys: pytest.CaptureFixture[str]) -> None:
    """The frames read from the stream are the sample frames (the same JPEGs, decoded by
    FFmpeg instead of libjpeg: a grey level or two apart on average, each far nearer one
    sample than any other); ``recognize URL`` reads cards in them;
    SIGINT stops the camera, which says how many frames it sent."""
    proc = subprocess.Popen([sys.executable, "-m", "controller", "camera-sim", str(SAMPLES),
                             "--fps", "10", "--duration", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("connect: http://127.0.0.1:"), line
        url = line.split(": ", 1)[1].strip()
        samples = [load_image(img) for img, _ in labelled_images(SAMPLES)]
        with LiveStream(url) as live:
            for _, (_, _, frame) in zip(range(4), live, strict=False):
                best, second = sorted(float(np.abs(frame.astype(int) - s).mean())
                                      for s in samples)[:2]
                assert best < 2.0 and second > 10 * best
        assert main(["recognize", "--json", "--frames", "3", url]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 3 and all('"code"' in x for x in lines)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0
    sent = int(err.strip().rsplit(" ", 2)[1])
    assert err.startswith(f"camera-sim: {len(samples)} frames, ") and sent >= 7


def test_camera_sim_refuses_what_a_camera_would_not_send(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    img = labelled_images(SAMPLES)[0][0]
    shutil.copy(img, tmp_path / "a.jpg")
    cases = []
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "b.jpg").write_bytes(img.read_bytes()[:5000])
    cases.append(([str(tmp_path / "a.jpg"), str(broken)],
                  f"{broken / 'b.jpg'}: truncated JPEG (no end-of-image marker): not served"))
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), np.zeros((480, 640, 3), np.uint8))
    cases.append(([str(tmp_path / "a.jpg"), str(small)],
                  f"{small} is 640x480, {tmp_path / 'a.jpg'} 1280x720: a camera sends one "
                  "frame size"))
    (tmp_path / "clip.mp4").write_bytes(b"")
    cases.append(([str(tmp_path / "clip.mp4")], "clip.mp4: not a video that can be read: "
                                                 "not served"))
    (tmp_path / "empty").mkdir()
    cases.append(([str(tmp_path / "empty")], "no images or videos found"))
    cases.append(([str(tmp_path / "a.jpg"), "--every", "0"], "--every must be at least 1"))
    cases.append(([str(tmp_path / "none.jpg")], "none.jpg: No such file or directory"))
    cases.append(([str(tmp_path / "a.jpg"), "--fps", "0"], "--fps must be above 0"))
    cases.append(([str(tmp_path / "a.jpg"), "--duration", "-1"], "--duration must be above 0"))
    for argv, words in cases:
        assert main(["camera-sim", *argv]) == 2, argv
        assert words in capsys.readouterr().err, argv


def test_camera_sim_serves_a_video_s_frames(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded footage as a video: its every Nth frame (``--every``) served in order, read
    back as the video's frames; more frames than it holds in memory are refused."""
    from controller.commands import camera_sim

    samples = [load_image(img) for img, _ in labelled_images(SAMPLES)][:6]
    clip = tmp_path / "shift.avi"
    out = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*"MJPG"), 5, (1280, 720))
    for img in samples:
        out.write(img)
    out.release()
    jpegs = camera_sim.load_frames([clip], every=2)
    served = [cv2.imdecode(np.frombuffer(j, np.uint8), cv2.IMREAD_COLOR) for j in jpegs]
    assert len(served) == 3
    for frame, sample in zip(served, samples[::2], strict=True):  # frames 0, 2, 4, in order
        diffs = [float(np.abs(frame.astype(int) - s).mean()) for s in samples]
        assert int(np.argmin(diffs)) == next(k for k, s in enumerate(samples) if s is sample)
        assert min(diffs) < 3.0
    monkeypatch.setattr(camera_sim, "MAX_FRAMES", 4)
    with pytest.raises(CommandError, match=r"more than 4 frames .*\(--every N\)"):
        camera_sim.load_frames([clip])


def test_the_table_view_follows_the_record(harness) -> None:  # noqa: ANN001
    """``camera-sim --table``'s view of the record: no cards before the first round; the
    latest round's cards by area in dealing order, the hole card face down until the record
    has it turned over; the cards stay after the round closes, until the next one opens. The
    database is opened read-only: the view cannot write to it."""
    import sqlite3

    from controller.table_view import TableView

    view = TableView(harness.path)
    assert view.layout() == (None, {})
    harness.play_to_deal(wagers=(1, 3), mains=(1, 3))
    rid = harness.table.current().id
    assert view.layout() == (rid, {})
    harness.deal("9C", "KD", "JS", "4D")
    assert view.layout() == (rid, {"seat1": ["9C", "4D"], "seat3": ["KD"], "dealer": ["JS"]})
    harness.deal("QH", "5H")
    dealt = {"seat1": ["9C", "4D"], "seat3": ["KD", "QH"], "dealer": ["JS", "XX"]}
    assert view.layout() == (rid, dealt)
    harness.table.reveal(harness.dealer)
    assert harness.table.round(rid).state.value == "closed"  # no pair: nothing to pay
    assert view.layout() == (rid, {**dealt, "dealer": ["JS", "5H"]})
    harness.table.open_round()
    assert view.layout() == (rid + 1, {})
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        view.db.execute("DELETE FROM cards")
    view.close()


def test_the_table_view_deals_hits_in_turn(harness) -> None:  # noqa: ANN001
    """The record keeps a hit without its place (a shoe does not know where a card goes);
    the view draws the hits dealt while the hole card is down in the seats dealt in, in seat
    order and round again, and a card dealt after the reveal in the dealer's hand. A round
    with a win (seat 1's three nines) stays open after the reveal, so the dealer can still
    draw."""
    from controller.table_view import TableView

    view = TableView(harness.path)
    harness.play_to_deal(wagers=(1, 3), mains=(1, 3))
    rid = harness.table.current().id
    harness.deal("9C", "KD", "9D", "4D", "QH", "9S", "2C", "3C", "4C")
    dealt = {"seat1": ["9C", "4D", "2C", "4C"], "seat3": ["KD", "QH", "3C"],
             "dealer": ["9D", "XX"]}
    assert view.layout() == (rid, dealt)
    harness.table.reveal(harness.dealer)
    assert harness.table.round(rid).state.value != "closed"  # a win to validate
    assert view.layout() == (rid, {**dealt, "dealer": ["9D", "9S"]})
    harness.deal("6C")
    assert [c["spot"] for c in harness.table.round(rid).cards][-4:] == ["extra"] * 4
    assert view.layout() == (rid, {**dealt, "dealer": ["9D", "9S", "6C"]})
    view.close()


def test_camera_sim_shows_the_cards_the_table_dealt(harness) -> None:  # noqa: ANN001
    """``camera-sim --table DB``: a camera over a table run on simulators shows what the
    record says was dealt. Read from its stream and placed by the table's ArUco markers, as
    a live table reads it: after the deal each card read is the one dealt to that area (a
    hit in the seat :func:`controller.layout.hits_in_turn` gives it) and the hole card lies
    face down; after the reveal the hole card shows. Each layout shown is a line on
    stderr."""
    import queue
    import threading

    from controller.camera import LayoutCalibrator
    from vision.calibration import assign_spots
    from vision.recognize import Recognizer

    proc = subprocess.Popen([sys.executable, "-m", "controller", "camera-sim", "--table",
                             str(harness.path), "--fps", "10", "--duration", "120"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [said.put(line) for line in proc.stderr],
                     daemon=True).start()

    def shown(words: str) -> None:
        while words not in (line := said.get(timeout=60)):
            assert line.startswith("round "), line

    try:
        url = proc.stdout.readline().split(": ", 1)[1].strip()
        settings = _aruco_settings()
        calibrator, reader = LayoutCalibrator(settings), Recognizer()

        def read() -> tuple[set[tuple[str, str]], list[list[str]]]:
            """Six frames of the stream (its three noisy frames in a loop), each read and
            placed: every (card, area) read, and each frame's face-down areas."""
            cards, down = set(), []
            with LiveStream(url) as live:
                for _, (_, _, frame) in zip(range(6), live, strict=False):
                    calibration = calibrator.for_frame(frame)
                    result = assign_spots(reader.recognize(frame, reader.table_for(calibration)),
                                          calibration)
                    cards |= {(c["code"], c["spot"]) for c in result["cards"]}
                    down.append([c["spot"] for c in result["face_down"]])
            return cards, down

        harness.play_to_deal(wagers=(1, 3), mains=(1, 3))
        harness.deal("9C", "KD", "JS", "4D", "QH", "5H", "2C")  # a hit: seat 1's, in turn
        shown("seat1 9C 4D 2C | seat3 KD QH | dealer JS XX")
        dealt = {("9C", "seat1"), ("4D", "seat1"), ("2C", "seat1"), ("KD", "seat3"),
                 ("QH", "seat3"), ("JS", "dealer")}
        cards, down = read()
        # (the reader misses some cards, never reads one not dealt there)
        assert cards <= dealt and len(cards) >= 4 and ("2C", "seat1") in cards, cards
        assert ["dealer"] in down and all(d in ([], ["dealer"]) for d in down), down
        harness.table.reveal(harness.dealer)
        shown("dealer JS 5H")
        cards, down = read()
        assert cards <= dealt | {("5H", "dealer")} and ("5H", "dealer") in cards, cards
        assert len(cards) >= 5 and down == [[]] * 6, (cards, down)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert proc.returncode == 0


def _aruco_settings():  # noqa: ANN202 - CameraSettings
    """The default table's camera settings, calibrated by its ArUco markers."""
    import dataclasses

    from controller.config import load_config

    return dataclasses.replace(load_config().camera, calibration="aruco")


@pytest.mark.parametrize("args, words", [
    (["--table", "{db}", "{samples}"], "not both"),
    (["--table", "{missing}"], "no such database"),
    (["--table", "{text}"], "not a usable monster-match database"),
    ([], "name the footage"),
    (["--table", "{db}", "--design", "nosuch"], "--design nosuch"),
])
def test_camera_sim_table_refusals(harness, tmp_path, capsys, args, words) -> None:  # noqa: ANN001
    """Refused, named, before anything is served: footage and a record at once, a database
    that is not there or not one, no source at all, a design that is not there."""
    (tmp_path / "notes.db").write_text("not a database\n" * 200)
    fill = {"db": str(harness.path), "samples": str(SAMPLES),
            "missing": str(tmp_path / "none.db"), "text": str(tmp_path / "notes.db")}
    assert main(["camera-sim", *[a.format(**fill) for a in args]]) == 2
    assert words in capsys.readouterr().err
