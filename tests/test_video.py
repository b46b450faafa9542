"""Recorded videos read frame by frame (vision.video, `monster-match recognize CLIP`), with
real files written by OpenCV's FFmpeg backend: whole, every Nth frame, truncated, not a video."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cli import main
from vision.synth import render_burst
from vision.video import VideoError, frame_count, video_frames

LAYOUT = {"seat2": ["QS", "4D"], "seat5": ["AH", "9C"], "dealer": ["KD", "XX"]}


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six frames of a still table (fresh sensor noise in each) as an MJPG AVI file."""
    frames, _ = render_burst(LAYOUT, np.random.default_rng(3), 6, design="proc:5:8",
                             card_px=(58.0, 62.0))
    path = tmp_path_factory.mktemp("video") / "table2.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30, (1280, 720))
    assert writer.isOpened()
    for frame in frames:
        writer.write(frame)
    writer.release()
    return path


def test_every_frame_and_every_nth_frame_are_read(clip: Path) -> None:
    assert frame_count(clip) == 6
    frames = list(video_frames(clip))
    assert [n for n, _ in frames] == [0, 1, 2, 3, 4, 5]
    assert all(f.shape == (720, 1280, 3) for _, f in frames)
    assert [n for n, _ in video_frames(clip, every=4)] == [0, 4]
    with pytest.raises(ValueError, match="at least 1"):
        next(video_frames(clip, every=0))


def test_recognize_reads_a_video_one_line_per_frame(
        clip: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recognize", "--json", "--every", "3", str(clip)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(x["image"], x["frame"]) for x in lines] == [(str(clip), 0), (str(clip), 3)]
    dealt = {c for codes in LAYOUT.values() for c in codes}
    for line in lines:
        assert line["cards"] and all(c["code"] in dealt for c in line["cards"])
    assert main(["recognize", "--every", "5", str(clip.parent)]) == 0  # a directory's videos
    out = capsys.readouterr().out
    assert f"{clip}#0:" in out and f"{clip}#5:" in out


def test_a_truncated_video_gives_its_frames_then_an_error(
        clip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = clip.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(data[:len(data) // 3])
    with pytest.raises(VideoError, match="ends after"):
        list(video_frames(cut))
    assert main(["recognize", "--json", str(cut), str(clip)]) == 1
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    cut_lines = [x for x in lines if x["image"] == str(cut)]
    assert "error" in cut_lines[-1] and "truncated" in cut_lines[-1]["error"]
    assert all("cards" in x for x in cut_lines[:-1]) and len(cut_lines) >= 2
    assert len([x for x in lines if x["image"] == str(clip)]) == 6  # the next file goes on


def test_a_file_that_is_no_video_gives_an_error_line(
        clip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = tmp_path / "camera3.mp4"
    fake.write_bytes(b"not a video at all")
    assert main(["recognize", "--json", str(fake)]) == 1
    (line,) = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert line["image"] == str(fake) and "not a video" in line["error"]
    assert main(["recognize", "--burst", str(clip)]) == 2
    assert "not videos" in capsys.readouterr().err


def test_a_video_read_by_two_workers_gives_the_same_lines(
        clip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A video's frames are decoded here and read by the workers: the same lines in frame
    order, and a truncated video's error line after its frames, as one process gives."""
    cut = tmp_path / "cut.avi"
    cut.write_bytes(clip.read_bytes()[:len(clip.read_bytes()) // 3])
    runs = []
    for workers in ("1", "2"):
        status = main(["recognize", "--json", "--workers", workers, str(cut), str(clip)])
        lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        for line in lines:
            line.pop("elapsed_ms", None)
        runs.append((status, lines))
    assert runs[0] == runs[1] and runs[0][0] == 1
    assert [x.get("frame") for x in runs[0][1] if x["image"] == str(clip)] == list(range(6))
