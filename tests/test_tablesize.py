"""Card sizes from a calibrated table (vision.tablesize) and reading with them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision import readsfile
from vision.calibration import TableCalibration
from vision.evaluate import Score, labelled_images, score_frame
from vision.proposals import index_frames, outline
from vision.recognize import Recognizer, load_image
from vision.synth import render_table
from vision.tablesize import TableSize, from_labels

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"
LAYOUT = {"seat1": ["4S", "9H", "KC"], "seat4": ["QH", "5C", "AD", "7D"],
          "seat7": ["2S", "JD"], "dealer": ["8C", "XX"]}


@pytest.mark.parametrize("seed", [3, 17, 29])
def test_the_tables_sizes_are_the_rendered_cards(seed: int) -> None:
    """Under the renderer's tilted cameras (up to 40 degrees), every card's width and height
    at its own top-left corner along its own edges, from the table's homography and the
    card's millimetres, are its labelled edges within 1 %, however the frame scales them."""
    _, labels = render_table(LAYOUT, np.random.default_rng(seed), design="plastic")
    table = from_labels(labels)
    q = np.array([c["corners"] for c in labels["cards"]], np.float64)
    x, y = q[:, 1] - q[:, 0], q[:, 3] - q[:, 0]
    sizes = table.corner_sizes(q[:, 0], x / np.linalg.norm(x, axis=1, keepdims=True),
                               y / np.linalg.norm(y, axis=1, keepdims=True))
    np.testing.assert_allclose(sizes[:, 0], np.linalg.norm(x, axis=1), rtol=0.01)
    np.testing.assert_allclose(sizes[:, 1], np.linalg.norm(y, axis=1), rtol=0.01)


def test_a_calibration_gives_its_homography_and_card_size() -> None:
    cal = TableCalibration(np.diag([0.5, 0.5, 1.0]))
    table = TableSize.from_calibration(cal)
    assert table.card_mm == (63.5, 88.9)
    assert table.lengths(np.zeros((1, 2)), np.array([[0.0, 1.0]]), 88.9)[0] == \
        pytest.approx(177.8)


def test_labels_without_a_table_are_refused() -> None:
    with pytest.raises(ValueError, match="homography"):
        from_labels({"cards": [{"corners": [[0, 0], [1, 0], [1, 1], [0, 1]]}]})
    with pytest.raises(ValueError, match="homography"):
        from_labels({"table_to_image": np.eye(3).tolist(), "cards": []})


def test_index_frames_take_the_tables_sizes() -> None:
    """With a table, each outline corner's frames are cut at the table's card size there
    (a direct frame: the width along its own x axis)."""
    img, labels = render_table(LAYOUT, np.random.default_rng(5), design="plastic")
    found = outline(img)
    table = from_labels(labels)
    calibrated = [f for f in index_frames(found.corners, found.sizes[0], table=table)
                  if f.direct]
    assert calibrated
    pts = np.array([f.point for f in calibrated])
    np.testing.assert_allclose([f.width for f in calibrated],
                               table.lengths(pts, np.array([f.x_axis for f in calibrated]),
                                             table.card_mm[0]))


def test_a_calibrated_read_of_the_samples() -> None:
    """Read with their tables' card sizes the sample frames give at least the cards they give
    without (41 of 80 at the operating threshold; 43 measured), and no misread."""
    rec = Recognizer()
    total = Score()
    for image, label_file in labelled_images(SAMPLES):
        labels = json.loads(label_file.read_text())
        total.add(score_frame(rec.recognize(load_image(image), from_labels(labels)), labels))
    assert total.readable == 80
    assert total.correct >= 41 and total.misread == 0 and total.false_positive == 0, \
        total.summary()


def test_calibrated_reads_are_kept_apart(tmp_path: Path) -> None:
    """Saved reads name whether the frames were read with their table's card sizes: neither
    kind is scored as the other, and files from before the key count as uncalibrated."""
    rec = Recognizer()
    plain, calibrated = readsfile.reader_identity(rec), readsfile.reader_identity(rec, True)
    with pytest.raises(ValueError, match="card size"):
        readsfile.check_identity(calibrated, plain, tmp_path / "r.npz")
    with pytest.raises(ValueError, match="card size"):
        readsfile.check_identity(plain, calibrated, tmp_path / "r.npz")
    old = {k: v for k, v in plain.items() if k != "calibrated"}
    readsfile.check_identity(old, plain, tmp_path / "r.npz")


def test_vision_eval_reads_as_a_calibrated_table(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``vision-eval --calibrated`` reads each frame with its labels' table, and refuses, by
    name, a label that has none."""
    from controller.cli import main

    for name in ("plastic_000", "tigullio_001"):
        for suffix in (".jpg", ".json"):
            (tmp_path / f"{name}{suffix}").write_bytes((SAMPLES / f"{name}{suffix}").read_bytes())
    assert main(["vision-eval", str(tmp_path), "--calibrated", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["calibrated"] is True and out["readable_cards"] == 10 and out["misread"] == 0
    labels = json.loads((tmp_path / "plastic_000.json").read_text())
    del labels["table_to_image"]
    (tmp_path / "plastic_000.json").write_text(json.dumps(labels))
    assert main(["vision-eval", str(tmp_path), "--calibrated"]) == 2
    assert "plastic_000.json" in capsys.readouterr().err


def test_the_operating_threshold_is_not_chosen_on_calibrated_sweeps(tmp_path: Path) -> None:
    from vision.calibrate import summed_sweeps

    rows = [{"threshold": 0.99, "frames": 1, "readable_cards": 10, "correct": 5, "reported": 5,
             "misread": 0, "false_positives": 0}]
    for calibrated in (False, True):
        (tmp_path / f"{calibrated}.json").write_text(json.dumps(
            {"frames": 1, "seed": 1, "calibrated": calibrated, "models": {"m.onnx": rows}}))
    assert summed_sweeps([tmp_path / "False.json"], ["m.onnx"])[0] == rows
    with pytest.raises(ValueError, match="calibrated sweep"):
        summed_sweeps([tmp_path / "False.json", tmp_path / "True.json"], ["m.onnx"])


def _reader_with_calibrated_threshold(tmp_path: Path, threshold: float) -> Recognizer:
    """The bundled reader and gate under another name, its ``.json`` naming a calibrated
    threshold (as enrollment writes for a deck whose frames show the rule there)."""
    from vision.recognize import DEFAULT_MODEL

    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    meta["calibrated_threshold"] = threshold
    (tmp_path / "cards_house.onnx").write_bytes(DEFAULT_MODEL.read_bytes())
    (tmp_path / "cards_house.json").write_text(json.dumps(meta))
    (tmp_path / meta["gate"]).write_bytes((DEFAULT_MODEL.parent / meta["gate"]).read_bytes())
    return Recognizer(tmp_path / "cards_house.onnx")


def test_a_reader_with_a_calibrated_threshold_reads_a_calibrated_table_at_it(
        tmp_path: Path) -> None:
    """A reader whose ``.json`` names a calibrated threshold keeps the cards of a frame read at
    its table's card sizes at that threshold (without rank and colour: not calibrated for
    such reads), and the table's camera reads a single frame so; without a table, or for the
    bundled reader (which has none), nothing changes."""
    from controller.camera import SimulatedCamera
    from vision.calibration import assign_spots
    from vision.merge import merge_reads

    house = _reader_with_calibrated_threshold(tmp_path, 0.9)
    bundled = Recognizer()
    img = load_image(SAMPLES / "plastic_000.jpg")
    table = from_labels(json.loads((SAMPLES / "plastic_000.json").read_text()))
    calibration = TableCalibration(table.image_to_layout, card_mm=table.card_mm)
    assert house.calibrated_threshold == 0.9 and bundled.calibrated_threshold is None
    # a threshold given sets both, and alone does not make the bundled reader read so
    assert Recognizer(tmp_path / "cards_house.onnx", threshold=0.999).calibrated_threshold \
        == 0.999
    assert Recognizer(threshold=0.999).table_for(TableCalibration(np.eye(3))) is None
    assert bundled.table_for(calibration) is None and house.table_for(None) is None
    sizes = house.table_for(calibration)
    assert sizes is not None and np.array_equal(sizes.image_to_layout, table.image_to_layout)
    assert sizes.card_mm == table.card_mm

    def strip(result: dict) -> dict:
        # the reads alone: not their time, nor the frame's measured condition (vision.quality)
        return {k: v for k, v in result.items() if k not in ("elapsed_ms", "quality")}

    read = house.recognize(img, table)
    kept = merge_reads(house.read(img, table), 0.9)
    assert strip(read) == strip(kept)
    at_operating = merge_reads(house.read(img, table), house.threshold)
    assert len(read["cards"]) > len(at_operating["cards"])  # 0.9 keeps more than 0.997
    assert strip(house.recognize(img)) == strip(bundled.recognize(img))
    assert strip(bundled.recognize(img, table)) == strip(bundled.merge(bundled.read(img, table)))

    camera_read = SimulatedCamera(None, recognizer=house).read(img, calibration)
    placed = assign_spots(read, calibration)
    assert [(c.code, c.area) for c in camera_read.cards] == [
        (c["code"], c["spot"] or "off-layout") for c in placed["cards"]]
    bundled_read = SimulatedCamera(None, recognizer=bundled).read(img, calibration)
    assert [c.code for c in bundled_read.cards] == [
        c["code"] for c in bundled.recognize(img)["cards"]]


def test_a_sweep_reads_the_last_reader_both_ways(tmp_path: Path) -> None:
    """``also_calibrated`` (what enrollment asks): the last reader's reads at the frame's own
    sizes and at its table's, each scored as a sweep of that kind alone gives them; the reads
    saved are its own-size ones."""
    from vision.recognize import DEFAULT_MODEL
    from vision.sweep import CALIBRATED_SUFFIX, sweep_reads, sweep_rendered

    name, designs = DEFAULT_MODEL.name, ["proc:1:1031"]
    path = tmp_path / "reads.npz"
    both = sweep_rendered([str(DEFAULT_MODEL)], 2, 31, 1, designs=designs, save_reads=path,
                          also_calibrated=True)
    plain = sweep_rendered([str(DEFAULT_MODEL)], 2, 31, 1, designs=designs)
    calibrated = sweep_rendered([str(DEFAULT_MODEL)], 2, 31, 1, designs=designs,
                                calibrated=True)
    assert both["models"][name] == plain["models"][name]
    assert both["models"][name + CALIBRATED_SUFFIX] == calibrated["models"][name]
    assert both["models"][name] != calibrated["models"][name]
    assert sweep_reads(str(DEFAULT_MODEL), [path])["models"][name] == plain["models"][name]
    with pytest.raises(ValueError, match="both ways"):
        sweep_rendered([str(DEFAULT_MODEL)], 1, 31, 1, designs=designs, calibrated=True,
                       also_calibrated=True)


def test_recognize_with_a_table_reads_at_its_sizes_where_the_reader_has_a_threshold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``recognize --table``: a reader with a calibrated threshold reads each frame at the
    card sizes of the frame's calibration (its ArUco markers), and places the cards."""
    import cv2

    from controller.camera import LayoutCalibrator
    from controller.cli import main
    from controller.config import load_config
    from vision.calibration import assign_spots
    from vision.synth import DEFAULT_MARKERS

    house = _reader_with_calibrated_threshold(tmp_path, 0.9)
    img, _ = render_table(LAYOUT, np.random.default_rng(7), design="plastic",
                          markers=DEFAULT_MARKERS, tilt_max=25, card_px=(60, 70))
    cv2.imwrite(str(tmp_path / "a.png"), img)
    (tmp_path / "t.toml").write_text('[camera]\ncalibration = "aruco"\n')
    assert main(["recognize", "--json", "--model", str(tmp_path / "cards_house.onnx"),
                 "--table", str(tmp_path / "t.toml"), str(tmp_path / "a.png")]) == 0
    out = json.loads(capsys.readouterr().out)
    calibration = LayoutCalibrator(load_config(tmp_path / "t.toml").camera).for_frame(img)
    expected = assign_spots(house.recognize(img, house.table_for(calibration)), calibration)
    assert out["cards"] and [(c["code"], c["spot"]) for c in out["cards"]] == [
        (c["code"], c["spot"]) for c in expected["cards"]]
