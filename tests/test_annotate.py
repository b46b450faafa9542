"""Frames drawn with their reads (vision.annotate; recognize / vision-eval --annotate)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cli import main
from vision import annotate as A
from vision.calibration import TableCalibration
from vision.evaluate import labelled_images, match_reports
from vision.recognize import Recognizer, load_image

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def _has(img: np.ndarray, colour: tuple[int, int, int], centre: tuple[float, float],
         reach: float) -> int:
    """Pixels of exactly ``colour`` within ``reach`` of ``centre``."""
    x, y, r = int(centre[0]), int(centre[1]), int(reach)
    patch = img[max(0, y - r):y + r, max(0, x - r):x + r]
    return int(np.all(patch == colour, axis=-1).sum())


CARD = {"code": "QH", "confidence": 0.9991, "center": [300.0, 300.0],
        "corners": [[275, 264], [325, 264], [325, 336], [275, 336]]}


def test_each_kind_of_mark_is_drawn_in_its_colour_where_it_lies_and_nowhere_else() -> None:
    frame = np.full((720, 1280, 3), (40, 110, 30), np.uint8)  # green felt
    misread = {**CARD, "code": "KC", "center": [700.0, 300.0],
               "corners": [[675, 264], [725, 264], [725, 336], [675, 336]]}
    stray = {**CARD, "code": "2S", "center": [1000.0, 600.0],
             "corners": [[975, 564], [1025, 564], [1025, 636], [975, 636]]}
    result = {"cards": [CARD, misread, stray], "face_down": [{"center": [300.0, 600.0]}],
              "unreadable": [{"center": [600.0, 600.0], "rank": "Q", "color": "red",
                              "confidence": 0.999}], "elapsed_ms": 40.0}
    labels = {"cards": [{"code": "QH", "center": [300, 300], "card_width_px": 50.0},
                        {"code": "KD", "center": [700, 300], "card_width_px": 50.0},
                        {"code": "9S", "center": [1000, 150], "card_width_px": 50.0},
                        {"code": "face_down", "center": [300, 600], "card_width_px": 50.0}]}
    drawn = A.annotate(frame, result, labels)
    assert drawn.shape == frame.shape and (frame == (40, 110, 30)).all()  # the frame is kept
    assert _has(drawn, A.READ, (300, 264), 4) > 0          # the read card's top edge
    assert _has(drawn, A.MISREAD, (700, 264), 4) > 0       # labelled KD, read KC
    assert _has(drawn, A.FALSE_POSITIVE, (1000, 564), 4) > 0  # on no labelled card
    assert _has(drawn, A.MISSED, (1000, 150), 40) > 0      # the 9S nobody reported
    assert _has(drawn, A.FACE_DOWN, (300, 600), 30) > 0
    assert _has(drawn, A.UNREADABLE, (600, 600), 12) > 0
    # each colour only near its own mark (and the labels beside it)
    assert _has(drawn, A.MISREAD, (300, 300), 60) == 0
    assert _has(drawn, A.READ, (700, 300), 60) == 0
    assert _has(drawn, A.MISSED, (300, 300), 100) == 0
    changed = np.any(drawn != frame, axis=-1)
    assert not changed[400:500, 100:1200].any()            # a strip with nothing in it
    assert changed[:30, :300].any()                         # the headline
    assert A.headline(result, {"missed_cards": [1], "misread_cards": [1],
                               "false_positive_cards": [1]}).startswith(
        "3 read, 1 face down, 1 not read | 40 ms | missed 1, misread 1, no card 1")


def test_labels_of_a_hand_do_not_cover_each_other() -> None:
    img = np.zeros((720, 1280, 3), np.uint8)
    labels = A._Labels(0.42)
    for k in range(7):  # a hand's seven index corners, a fifth of a card apart
        labels.place(img, f"{k}H 1.000 seat3", (600 + 10 * k, 400 + 6 * k), A.READ)
    boxes = labels.boxes
    assert len(boxes) == 7
    assert not any(A._overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    assert all(0 <= x0 < x1 <= 1280 and 0 <= y0 < y1 <= 720 for x0, y0, x1, y1 in boxes)


def test_the_areas_drawn_are_where_cards_are_placed() -> None:
    """Each pixel's area in :func:`vision.annotate.area_map` is the spot
    :meth:`TableCalibration.spot_at` gives a card there, under a tilted camera's view."""
    img_pts = [[300, 200], [980, 180], [1100, 650], [200, 600]]
    lay = [[-500, -300], [500, -300], [500, 300], [-500, 300]]
    cal = TableCalibration.from_points(img_pts, lay)
    names = list(cal.spots)
    m = A.area_map(cal, (1280, 720), step=1)
    rng = np.random.default_rng(3)
    agree = 0
    for x, y in zip(rng.integers(0, 1280, 400), rng.integers(0, 720, 400), strict=True):
        want = cal.spot_for((x + 0.5, y + 0.5))
        got = names[m[y, x]] if m[y, x] >= 0 else None
        agree += want == got
    assert agree == 400
    drawn = np.zeros((720, 1280, 3), np.uint8)
    named = A.draw_areas(drawn, cal)
    assert {n for n, _ in named} <= set(names) and len(named) >= 6
    assert (drawn.min(-1) > 100).sum() > 1000  # (anti-aliased lines: few exact pixels)


@pytest.fixture(scope="module")
def recognizer() -> Recognizer:
    return Recognizer()


def _suite(root: Path) -> list[Path]:
    pairs = labelled_images(SAMPLES)
    for sub, (img, lab) in zip(("a", "b"), pairs[:2], strict=True):
        (root / sub).mkdir(parents=True)
        shutil.copy(img, root / sub / img.name)
        shutil.copy(lab, root / sub / lab.name)
    return [root / "a" / pairs[0][0].name, root / "b" / pairs[1][0].name]


def test_recognize_annotate_draws_each_frame_at_its_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], recognizer: Recognizer) -> None:
    frames = _suite(tmp_path / "suite")
    out = tmp_path / "drawn"
    assert main(["recognize", "--json", "-r", str(tmp_path / "suite"),
                 "--annotate", str(out)]) == 0
    lines = [json.loads(s) for s in capsys.readouterr().out.splitlines()]
    assert [Path(x["annotated"]) for x in lines] == [
        out / "a" / frames[0].with_suffix(".jpg").name,
        out / "b" / frames[1].with_suffix(".jpg").name]
    for line, frame in zip(lines, frames, strict=True):
        source = load_image(frame)
        drawn = load_image(Path(line["annotated"]))
        assert drawn.shape == source.shape
        assert line["cards"] == recognizer.recognize(source)["cards"]  # the same reads
        for card in line["cards"]:  # each read card's outline, in the read colour
            top = min(card["corners"], key=lambda p: p[1])
            near = drawn[int(top[1]) - 3:int(top[1]) + 4, int(top[0]) - 3:int(top[0]) + 4]
            # (JPEG moves colours a little: near the read colour, far from the frame's own)
            assert np.abs(near.astype(int) - A.READ).sum(-1).min() < 90
    # a frame named itself keeps its name; text output says where the drawings went
    assert main(["recognize", str(frames[0]), "--annotate", str(out / "one")]) == 0
    assert (out / "one" / frames[0].with_suffix(".jpg").name).is_file()
    assert f"annotated: 1 frame drawn in {out / 'one'}" in capsys.readouterr().out


def test_recognize_annotate_refusals_and_a_drawing_that_cannot_be_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frames = _suite(tmp_path / "suite")
    twin = tmp_path / "other" / frames[0].name
    twin.parent.mkdir()
    shutil.copy(frames[0], twin)
    assert main(["recognize", str(frames[0]), str(twin), "--annotate",
                 str(tmp_path / "o")]) == 2
    assert (f"two sources would be drawn to {frames[0].stem}.jpg: {frames[0]} and {twin}"
            in capsys.readouterr().err)
    assert not (tmp_path / "o").exists()  # refused before anything is made
    (tmp_path / "file").write_text("x")
    assert main(["recognize", str(frames[0]), "--annotate", str(tmp_path / "file")]) == 2
    assert f"--annotate {tmp_path / 'file'}: not a directory" in capsys.readouterr().err
    # the drawing's place is taken by a directory: the read is still given, with the error
    out = tmp_path / "o2"
    (out / frames[0].with_suffix(".jpg").name).mkdir(parents=True)
    assert main(["recognize", "--json", str(frames[0]), str(frames[1]),
                 "--annotate", str(out)]) == 1
    first, second = (json.loads(s) for s in capsys.readouterr().out.splitlines())
    assert first["cards"] and "annotated" not in first
    assert first["annotate_error"].startswith(str(out / frames[0].with_suffix(".jpg").name))
    assert Path(second["annotated"]).is_file() and "annotate_error" not in second


def test_recognize_annotate_names_a_videos_frames(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    clip = tmp_path / "clip.avi"
    frame = load_image(labelled_images(SAMPLES)[0][0])
    writer = cv2.VideoWriter(str(clip), cv2.VideoWriter_fourcc(*"MJPG"), 5, (1280, 720))
    for _ in range(3):
        writer.write(frame)
    writer.release()
    assert main(["recognize", "--json", str(clip), "--every", "2",
                 "--annotate", str(tmp_path / "o")]) == 0
    lines = [json.loads(s) for s in capsys.readouterr().out.splitlines()]
    assert [Path(x["annotated"]).name for x in lines] == ["clip.f000000.jpg", "clip.f000002.jpg"]
    assert all(Path(x["annotated"]).is_file() for x in lines)


def test_recognize_annotate_with_a_table_draws_its_areas(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    img, lab = labelled_images(SAMPLES)[0]
    h = np.array(json.loads(lab.read_text())["table_to_image"], np.float64)
    layout = [[-400, -300], [400, -300], [400, 200], [-400, 200]]
    image = cv2.perspectiveTransform(np.array([layout], np.float64), h)[0].round(1).tolist()
    table = tmp_path / "t.toml"
    table.write_text(f'[camera]\ncalibration = "points"\nimage_points = {image}\n'
                     f"layout_points = {layout}\n")
    assert main(["recognize", "--json", str(img), "--table", str(table),
                 "--annotate", str(tmp_path / "o")]) == 0
    line = json.loads(capsys.readouterr().out)
    drawn = load_image(Path(line["annotated"]))
    plain = A.annotate(load_image(img), {k: line[k] for k in ("cards", "face_down",
                                                             "unreadable", "elapsed_ms")})
    # the area outlines are the difference: pale lines where the plain drawing has none
    extra = np.all(drawn.astype(int) > 200, -1) & ~np.all(plain.astype(int) > 200, -1)
    assert extra.sum() > 2000
    assert any(c["spot"] for c in line["cards"])


def test_vision_eval_annotate_draws_the_frames_with_something_wrong(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], recognizer: Recognizer) -> None:
    """A card labelled as another (on purpose) is drawn as a misread, in the misread colour,
    on its frame; with --annotate-all every frame is drawn."""
    pairs = labelled_images(SAMPLES)[:3]
    suite = tmp_path / "suite"
    suite.mkdir()
    for img, lab in pairs:
        shutil.copy(img, suite / img.name)
        shutil.copy(lab, suite / lab.name)
    img, lab = pairs[0]
    labels = json.loads(lab.read_text())
    result = recognizer.recognize(load_image(img))
    read = result["cards"][0]
    best, _ = match_reports([read], labels["cards"])[0]
    labels["cards"][best]["code"] = wrong = "KC" if read["code"] != "KC" else "QC"
    (suite / lab.name).write_text(json.dumps(labels))
    out = tmp_path / "o"
    assert main(["vision-eval", "--json", str(suite), "--annotate", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    drawn = sorted(p.name for p in out.iterdir())
    assert summary["misreads"] == {f"{wrong}->{read['code']}": 1}
    assert summary["annotated"] == len(drawn) and img.with_suffix(".jpg").name in drawn
    picture = load_image(out / img.with_suffix(".jpg").name)
    top = min(read["corners"], key=lambda p: p[1])
    near = picture[int(top[1]) - 3:int(top[1]) + 4, int(top[0]) - 3:int(top[0]) + 4]
    assert np.abs(near.astype(int) - A.MISREAD).sum(-1).min() < 90
    every = tmp_path / "all"
    assert main(["vision-eval", str(suite), "--annotate", str(every), "--annotate-all"]) == 0
    assert "annotated: 3 frames drawn in" in capsys.readouterr().out
    assert len(list(every.iterdir())) == 3
    assert main(["vision-eval", str(suite), "--annotate-all"]) == 2
    assert "--annotate-all needs --annotate DIR" in capsys.readouterr().err
