"""Bursts: several frames of a still camera rendered, read and fused into one result."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cli import main
from vision.burst import fuse
from vision.dataset import write_labelled_set
from vision.evaluate import burst_frames, labelled_images, score_frame, total
from vision.frames import MIRRORED
from vision.recognize import MODEL_DIR, Recognizer
from vision.synth import random_deal, render_burst, render_table


def _card(code: str, x: float, conf: float, y: float = 100.0, w: float = 50.0) -> dict:
    return {"code": code, "confidence": conf, "center": [x, y],
            "corners": [[x - w / 2, y - 35], [x + w / 2, y - 35], [x + w / 2, y + 35],
                        [x - w / 2, y + 35]]}


def _frame(cards: list[dict] = (), backs: list[list[float]] = (),
           unreadable: list[list[float]] = ()) -> dict:
    return {"cards": list(cards), "face_down": [{"center": b} for b in backs],
            "unreadable": [{"center": u} for u in unreadable], "elapsed_ms": 40.0}


def test_a_card_read_in_one_frame_of_three_is_reported_with_its_frame_count() -> None:
    fused = fuse([_frame(unreadable=[[200, 100]]), _frame([_card("9C", 201, 0.993)]),
                  _frame()])
    assert [(c["code"], c["frames"]) for c in fused["cards"]] == [("9C", 1)]
    assert fused["unreadable"] == []  # the refusal of frame 0 was this card
    assert fused["frames"] == 3 and fused["elapsed_ms"] == 120.0


def test_one_card_read_as_two_codes_is_refused_once() -> None:
    fused = fuse([_frame([_card("6H", 100, 0.999)]), _frame([_card("8H", 103, 0.991)]),
                  _frame([_card("6H", 99, 0.998)])])
    assert fused["cards"] == []
    assert len(fused["unreadable"]) == 1


def test_neighbours_of_an_overlapped_hand_are_two_cards_not_a_conflict() -> None:
    # a hand pitches its cards 0.26-0.4 card widths apart: 15 px of a 50 px card
    frames = [_frame([_card("4S", 100, 0.999), _card("KD", 115, 0.995)]),
              _frame([_card("4S", 101, 0.998)])]
    assert sorted(c["code"] for c in fuse(frames)["cards"]) == ["4S", "KD"]


def test_a_card_placed_two_ways_is_one_card_and_two_copies_in_one_frame_stay_two() -> None:
    placed_apart = [_frame([_card("QS", 100, 0.999)]), _frame([_card("QS", 140, 0.995)])]
    assert [c["frames"] for c in fuse(placed_apart)["cards"]] == [2]
    two_copies = [_frame([_card("QS", 100, 0.999), _card("QS", 140, 0.995)]),
                  _frame([_card("QS", 100, 0.999)])]
    assert len(fuse(two_copies)["cards"]) == 2


def test_the_threshold_drops_unsure_reports_first() -> None:
    frames = [_frame([_card("AD", 100, 0.992)]), _frame([_card("AD", 100, 0.994)])]
    assert fuse(frames, 0.995)["cards"] == []
    assert fuse(frames, 0.993)["cards"][0]["confidence"] == 0.994


def test_face_down_cards_need_half_the_frames() -> None:
    frames = [_frame(backs=[[300, 300], [500, 500]]), _frame(backs=[[302, 299]]),
              _frame(), _frame(backs=[[301, 301]])]
    assert [b["center"] for b in fuse(frames)["face_down"]] == [[300.0, 300.0]]


def test_a_warning_in_any_frame_refuses_every_face_up_card() -> None:
    frames = [_frame([_card("TD", 100, 1.0)]), {**_frame(), "warning": MIRRORED}]
    fused = fuse(frames)
    assert fused["cards"] == [] and fused["warning"] == MIRRORED
    assert fused["unreadable"] == [{"center": [100, 100]}]


def test_an_empty_burst_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one frame"):
        fuse([])


def test_a_burst_is_one_scene_with_fresh_sensor_noise() -> None:
    deal = {"seat2": ["AS", "9D"], "dealer": ["KH", "XX"]}
    single, labels = render_table(deal, np.random.default_rng(4), design="proc:5:3")
    frames, burst_labels = render_burst(deal, np.random.default_rng(4), 3,
                                        np.random.default_rng(9), design="proc:5:3")
    assert np.array_equal(frames[0], single) and burst_labels == labels
    for later in frames[1:]:
        diff = np.abs(later.astype(int) - single.astype(int))
        assert diff.any()  # new noise ...
        assert diff.mean() < 8  # ... on the same scene
    clean, _ = render_burst(deal, np.random.default_rng(4), 2, design="proc:5:3", clean=True)
    assert np.array_equal(clean[0], clean[1])
    with pytest.raises(ValueError, match="at least one frame"):
        render_burst(deal, np.random.default_rng(4), 0, design="proc:5:3")


def test_burst_sets_hold_the_scenes_of_the_single_frame_set(tmp_path: Path) -> None:
    write_labelled_set(tmp_path / "one", ["proc:5:3"], 2, seed=5)
    write_labelled_set(tmp_path / "three", ["proc:5:3"], 2, seed=5, burst=3)
    singles = labelled_images(tmp_path / "one")
    bursts = labelled_images(tmp_path / "three")
    assert [p.name for p, _ in singles] == [p.name for p, _ in bursts]
    for (a, la), (b, lb) in zip(singles, bursts, strict=True):
        assert la.read_text() == lb.read_text()
        assert np.array_equal(cv2.imread(str(a)), cv2.imread(str(b)))
        assert [f.name for f in burst_frames(b)] == [b.name, f"{b.stem}.b1.jpg",
                                                     f"{b.stem}.b2.jpg"]
    assert burst_frames(singles[0][0]) == [singles[0][0]]


def test_a_set_made_with_a_smaller_tilt_holds_the_same_scenes_seen_straighter(
        tmp_path: Path) -> None:
    """``vision.dataset --tilt-max``: the same deals, light and damage as the default set of the
    same seed, the camera's tilt scaled down (the same random draws); out of range refused."""
    from vision.dataset import main
    from vision.evaluate import camera_tilt

    write_labelled_set(tmp_path / "wide", ["proc:5:3"], 3, seed=5)
    assert main([str(tmp_path / "straight"), "--designs", "proc:5:3", "--frames", "3",
                 "--seed", "5", "--tilt-max", "10"]) == 0
    pairs = zip(labelled_images(tmp_path / "wide"), labelled_images(tmp_path / "straight"),
                strict=True)
    for (_, wide), (_, straight) in pairs:
        a, b = json.loads(wide.read_text()), json.loads(straight.read_text())
        assert [(c["code"], c["spot"]) for c in a["cards"]] == [(c["code"], c["spot"])
                                                                for c in b["cards"]]
        assert a["photometric"] == b["photometric"]
        centre = [a["width"] / 2, a["height"] / 2]
        tilt_a = camera_tilt(a["table_to_image"], centre)
        tilt_b = camera_tilt(b["table_to_image"], centre)
        assert abs(tilt_b - tilt_a * 10 / 40) < 0.01  # (the labels round the homography)
    with pytest.raises(SystemExit):
        main([str(tmp_path / "x"), "--tilt-max", "75"])


@pytest.fixture(scope="module")
def recognizer() -> Recognizer:
    return Recognizer()


def test_fused_bursts_read_at_least_what_their_first_frames_read(
        recognizer: Recognizer) -> None:
    """The real pipeline on bursts of a validation design: every card the first frame reads
    is read fused, and nothing is misread (six scenes of four frames)."""
    rng, noise = np.random.default_rng(21), np.random.default_rng(22)
    first, fused = [], []
    for _ in range(6):
        frames, labels = render_burst(random_deal(rng), rng, 4, noise, design="proc:5:21")
        results = [recognizer.recognize(f) for f in frames]
        first.append(score_frame(results[0], labels))
        fused.append(score_frame(fuse(results), labels))
    one, many = total(first), total(fused)
    assert many.misread == 0 and many.false_positive == 0, many.confusions
    assert many.correct >= one.correct > 0


def test_vision_eval_scores_bursts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_labelled_set(tmp_path, ["proc:5:4"], 2, seed=6, burst=2)
    assert main(["vision-eval", str(tmp_path), "--burst", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["frames"] == 2 and out["readable_cards"] > 0
    assert main(["vision-eval", str(tmp_path), "--burst"]) == 0
    assert "a frame here is a burst" in capsys.readouterr().out


def test_vision_eval_refuses_bursts_where_there_are_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_labelled_set(tmp_path, ["proc:5:4"], 1, seed=6)
    assert main(["vision-eval", str(tmp_path), "--burst"]) != 0
    assert "no bursts" in capsys.readouterr().err


#: The reader whose burst threshold was chosen (``models/cards_v4.md``, twelfth session);
#: ``cards_v7``, the bundled one since the forty-first session, has none, as ``cards_v5``
#: before it had none, so it reads single frames only (``models/cards_v5.md``).
BURST_MODEL = MODEL_DIR / "cards_v4.onnx"


def _burst_config(tmp_path: Path, frames: int, model: Path | None = None):  # noqa: ANN202
    from controller.config import load_config

    path = tmp_path / "t.toml"
    line = f'model = "{model}"\n' if model is not None else ""
    path.write_text(f"[camera]\nburst = {frames}\n{line}")
    return load_config(path)


def test_the_table_camera_reads_a_burst_and_records_every_frame(
        tmp_path: Path, dealt_service) -> None:  # noqa: ANN001
    from controller.camera import SimulatedCamera

    cam = SimulatedCamera(tmp_path / "frames", seed=3,
                          settings=_burst_config(tmp_path, 3, BURST_MODEL).camera,
                          design="proc:5:8", card_px=(56.0, 62.0))
    layout = {"seat1": ["KH", "2C"], "dealer": ["9H", "XX"]}
    read = cam.capture(layout, "round1-dealt")
    assert read.frames == 3
    assert read.frame_names == ["round1-dealt.png", "round1-dealt.b1.png", "round1-dealt.b2.png"]
    assert all((tmp_path / "frames" / name).is_file() for name in read.frame_names)
    assert read.cards and all(c.code in layout[c.area] for c in read.cards)
    svc, rid = dealt_service
    svc.camera_check(rid, [c for c in read.cards if c.code == "KH"], False, read.frame_names)
    assert svc.table.round(rid).data["frames"] == read.frame_names


def test_bursts_longer_than_the_model_was_calibrated_for_are_refused(
        tmp_path: Path, recognizer: Recognizer, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.camera import SimulatedCamera
    from controller.config import ConfigError

    too_long = recognizer.burst_frames + 1
    with pytest.raises(ValueError, match="burst"):
        SimulatedCamera(None, settings=_burst_config(tmp_path, too_long).camera)
    with pytest.raises(ValueError, match="calibrated for bursts of 1 to"):
        recognizer.recognize_burst([np.zeros((72, 128, 3), np.uint8)] * too_long)
    for bad in (0, 31):
        with pytest.raises(ConfigError, match=r"\[camera\] burst"):
            _burst_config(tmp_path, bad)
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(too_long):
        cv2.imwrite(str(frames / f"{i}.jpg"), np.zeros((72, 128, 3), np.uint8))
    assert main(["recognize", "--burst", str(frames)]) == 2
    assert "calibrated for bursts" in capsys.readouterr().err


def test_recognize_reads_a_burst_and_reports_it_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frames, labels = render_burst({"seat3": ["QS", "4D"], "seat5": ["AH"]},
                                  np.random.default_rng(8), 2, design="proc:5:8",
                                  card_px=(58.0, 62.0))
    paths = []
    for i, img in enumerate(frames):
        paths.append(tmp_path / f"f{i}.jpg")
        cv2.imwrite(str(paths[-1]), img)
    broken = tmp_path / "f2.jpg"
    broken.write_bytes(paths[0].read_bytes()[:300])  # a truncated frame
    model = ["--model", str(BURST_MODEL)]
    assert main(["recognize", "--burst", "--json", *model, *map(str, [*paths, broken])]) == 1
    error, burst = (json.loads(x) for x in capsys.readouterr().out.splitlines())
    assert error["image"] == str(broken) and "error" in error
    assert burst["images"] == [str(p) for p in paths] and burst["frames"] == 2
    truth = {c["code"] for c in labels["cards"]}
    assert burst["cards"] and all(c["code"] in truth for c in burst["cards"])
    assert main(["recognize", "--burst", *model, *map(str, paths)]) == 0
    assert "burst of 2 frames:" in capsys.readouterr().out
    assert main(["recognize", "--burst", *map(str, paths)]) == 2  # the bundled cards_v7
    assert "calibrated for bursts" in capsys.readouterr().err
