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
    from vision.calibrate import _summed_sweeps

    rows = [{"threshold": 0.99, "frames": 1, "readable_cards": 10, "correct": 5, "reported": 5,
             "misread": 0, "false_positives": 0}]
    for calibrated in (False, True):
        (tmp_path / f"{calibrated}.json").write_text(json.dumps(
            {"frames": 1, "seed": 1, "calibrated": calibrated, "models": {"m.onnx": rows}}))
    assert _summed_sweeps([tmp_path / "False.json"], Path("m.onnx"))[0] == rows
    with pytest.raises(ValueError, match="calibrated sweep"):
        _summed_sweeps([tmp_path / "False.json", tmp_path / "True.json"], Path("m.onnx"))
