"""The camera's condition measured in each frame (vision.quality): edge blur, card size and
the warnings, in the recogniser's result, ``recognize`` and ``vision-eval``."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.cli import main
from vision.evaluate import labelled_images
from vision.proposals import outline
from vision.quality import ImageQuality, card_width, measure
from vision.recognize import Recognizer, load_image

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def _table(card_px: int = 60, seed: int = 3) -> np.ndarray:
    """A 720p felt with twelve upright and tilted cards of ``card_px`` width, a little noise."""
    rng = np.random.default_rng(seed)
    img = np.full((720, 1280, 3), (35, 95, 30), np.uint8)
    h = int(round(card_px * 1.45))
    for i in range(12):
        cx, cy = 140 + (i % 6) * 190, 200 + (i // 6) * 300
        box = cv2.boxPoints(((cx, cy), (card_px, h), float(rng.uniform(-40, 40))))
        cv2.fillConvexPoly(img, box.astype(np.int32), (232, 232, 228))
    noise = rng.normal(0, 2.0, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def _motion(img: np.ndarray, length: int, degrees: float) -> np.ndarray:
    kern = np.zeros((length, length), np.float32)
    kern[length // 2, :] = 1.0
    rot = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), degrees, 1.0)
    kern = cv2.warpAffine(kern, rot, (length, length))
    return cv2.filter2D(img, -1, kern / kern.sum())


def _quality(img: np.ndarray, width: float | None = None) -> ImageQuality:
    return measure(img, outline(img), width)


@pytest.mark.parametrize("sigma", [0.8, 1.2, 1.6, 2.2])
def test_the_edge_blur_follows_a_focus_blur(sigma: float) -> None:
    """A Gaussian blur of ``sigma`` px on top of a sharp frame is measured within 20 % (the
    sharp frame's own edges, drawn on whole pixels, add a little), alike in every direction."""
    q = _quality(cv2.GaussianBlur(_table(), (0, 0), sigma), 60.0)
    assert q.edges >= 40
    assert abs(q.edge_blur_px - sigma) <= 0.2 * sigma + 0.15, q
    assert q.streak < 1.5, q


def test_sharper_frames_measure_less_blur() -> None:
    blurs = [_quality(cv2.GaussianBlur(_table(), (0, 0), s), 60.0).edge_blur_px
             for s in (0.6, 1.0, 1.4, 1.8)]
    assert blurs == sorted(blurs) and blurs[-1] > 2 * blurs[0]


def test_a_motion_blur_is_told_from_a_focus_blur() -> None:
    """Seven pixels of horizontal motion spread the upright cards' side edges and not their
    top edges: blurred, and in one direction; a focus blur as strong is blurred alone."""
    moved = _quality(_motion(_table(), 7, 0.0), 60.0)
    assert moved.warnings == ("blurred", "motion_blur"), moved
    assert moved.streak >= 2.0
    focus = _quality(cv2.GaussianBlur(_table(), (0, 0), 1.8), 60.0)
    assert focus.warnings == ("blurred",), focus


def test_sharp_large_cards_raise_no_warning_and_small_ones_do() -> None:
    sharp = _quality(_table(), None)  # card width from the outline
    assert sharp.warnings == () and 55 < sharp.card_width_px < 65, sharp
    small = _quality(_table(card_px=34), None)
    assert "small_cards" in small.warnings and small.card_width_px < 40, small


def test_blur_is_judged_against_the_card_size() -> None:
    """The same blur is legible on large cards and not on small ones: the index glyphs are
    drawn at a share of the card."""
    img = cv2.GaussianBlur(_table(), (0, 0), 1.5)
    assert "blurred" not in _quality(img, 100.0).warnings
    assert "blurred" in _quality(img, 60.0).warnings


def test_a_frame_without_cards_measures_nothing() -> None:
    felt = np.full((720, 1280, 3), (35, 95, 30), np.uint8)
    q = _quality(felt)
    assert (q.card_width_px, q.edge_blur_px, q.streak, q.edges, q.warnings) == (
        None, None, None, 0, ())
    assert q.to_json() == {"card_width_px": None, "edge_blur_px": None, "blur_share": None,
                           "streak": None, "edges": 0, "warnings": []}


def test_card_width_of_reported_cards() -> None:
    card = {"corners": [[0, 0], [50, 0], [50, 72], [0, 72]]}
    turned = {"corners": [[100, 100], [100, 160], [13, 160], [13, 100]]}  # 60 wide
    assert card_width([card]) == 50.0
    assert card_width([card, turned, card]) == 50.0
    assert card_width([]) is None


@pytest.fixture(scope="module")
def recognizer() -> Recognizer:
    return Recognizer()


def test_the_recogniser_reports_the_quality_without_changing_its_reads(
        recognizer: Recognizer) -> None:
    """Every result carries the frame's quality; a sample frame blurred after the fact is
    warned of, and reads no more cards than the sharp one."""
    img = load_image(SAMPLES / "tigullio_001.jpg")
    sharp = recognizer.recognize(img)
    assert sharp["quality"]["warnings"] == [] and sharp["quality"]["edges"] > 0
    # the width it judged by is the reported cards' (72-73 px in the labels)
    labels = json.loads((SAMPLES / "tigullio_001.json").read_text())
    true_width = np.median([c["card_width_px"] for c in labels["cards"]])
    assert abs(sharp["quality"]["card_width_px"] - true_width) < 0.1 * true_width
    soft = recognizer.recognize(cv2.GaussianBlur(img, (0, 0), 2.5))
    assert "blurred" in soft["quality"]["warnings"]
    assert len(soft["cards"]) <= len(sharp["cards"])


def test_recognize_prints_the_quality(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    img = load_image(SAMPLES / "tigullio_001.jpg")
    cv2.imwrite(str(tmp_path / "soft.png"), cv2.GaussianBlur(img, (0, 0), 2.5))
    assert main(["recognize", "--json", str(tmp_path / "soft.png")]) == 0
    line = json.loads(capsys.readouterr().out)
    assert set(line["quality"]) == {"card_width_px", "edge_blur_px", "blur_share", "streak",
                                    "edges", "warnings", "stock_level"}
    assert "blurred" in line["quality"]["warnings"]
    assert main(["recognize", str(tmp_path / "soft.png")]) == 0
    out = capsys.readouterr().out
    assert "image: blurred" in out and "card edges spread" in out
    # over several frames, the count of each warning after them (not with --json)
    cv2.imwrite(str(tmp_path / "sharp.png"), img)
    assert main(["recognize", str(tmp_path)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last == ("camera condition over 2 frames: blurred 1 (50 %), motion_blur 0, "
                    "small_cards 0, underexposed 0, colour_cast 0")
    assert main(["recognize", "--json", str(tmp_path)]) == 0
    assert all(line.startswith("{") for line in capsys.readouterr().out.splitlines())


def test_vision_eval_breaks_the_scores_down_by_the_warnings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two sharp sample frames and the same two blurred: the blurred ones are counted under
    "blurred", the sharp ones under "none", and the parts hold every frame."""
    for img, lab in labelled_images(SAMPLES):
        if img.stem not in ("tigullio_001", "plastic_001"):
            continue
        (tmp_path / img.name).write_bytes(img.read_bytes())
        (tmp_path / lab.name).write_bytes(lab.read_bytes())
        cv2.imwrite(str(tmp_path / f"soft_{img.stem}.png"),
                    cv2.GaussianBlur(load_image(img), (0, 0), 3.0))
        (tmp_path / f"soft_{img.stem}.json").write_bytes(lab.read_bytes())
    assert main(["vision-eval", "--json", str(tmp_path)]) == 0
    s = json.loads(capsys.readouterr().out)
    parts = s["by_image_warning"]
    assert parts["none"]["frames"] == 2 and parts["blurred"]["frames"] == 2
    assert parts["none"]["readable_cards"] + parts["blurred"]["readable_cards"] == (
        s["readable_cards"])
    assert parts["blurred"]["recall"] < parts["none"]["recall"]
    assert main(["vision-eval", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    table = out.split("(vision.quality):\n")[1].splitlines()
    assert table[0].split()[0] == "none" and table[1].split()[0] == "blurred"
    assert f"({parts['blurred']['correct']}/{parts['blurred']['readable_cards']})" in table[1]


def test_the_table_records_when_the_camera_blurs_and_clears(dealt_service) -> None:  # noqa: ANN001
    """The table's camera reads a sample frame, then the same frame out of focus: a blurred
    frame or two is let pass (a hand over the lens), three in a row are recorded, and three
    sharp ones in a row clear it; the audit record says when, with what was measured, and no
    round is held for it."""
    import sqlite3

    from controller.camera import SimulatedCamera

    svc, rid = dealt_service
    camera = SimulatedCamera(None)
    img = load_image(SAMPLES / "tigullio_001.jpg")
    soft = cv2.GaussianBlur(img, (0, 0), 2.5)
    sharp_q = camera.read(img, calibration=None).quality
    soft_q = camera.read(soft, calibration=None).quality
    assert sharp_q["warnings"] == [] and soft_q["warnings"] == ["blurred"]
    seen = []
    for q in (sharp_q, soft_q, soft_q, sharp_q, soft_q, soft_q, soft_q, soft_q, sharp_q,
              soft_q, sharp_q, sharp_q, sharp_q):
        svc.camera_check(rid, [], hole_up=False, quality=q)
        seen.append(svc.camera_condition)
        assert svc.table.current().state.value != "held"
    assert seen == [()] * 6 + [("blurred",)] * 6 + [()]
    rows = sqlite3.connect(svc.store.path).execute(
        "SELECT round_id, payload FROM audit WHERE kind = 'camera_condition' ORDER BY id"
    ).fetchall()
    assert [json.loads(p)["warnings"] for _, p in rows] == [["blurred"], []]
    assert {r for r, _ in rows} == {rid}
    blurred = json.loads(rows[0][1])["quality"]
    assert blurred["edge_blur_px"] > 1.5 and blurred["warnings"] == ["blurred"]
    assert svc.camera_condition == ()
    # a restart resumes from the record: blurred again, three frames later it is recorded
    # once more; the service that starts after it knows the camera was blurred
    for _ in range(3):
        svc.camera_check(rid, [], hole_up=False, quality=soft_q)
    assert svc.camera_condition == ("blurred",)
    from controller.service import TableService

    again = TableService(svc.store, svc.cfg)
    assert again.camera_condition == ("blurred",)
    for _ in range(3):
        again.camera_check(rid, [], hole_up=False, quality=sharp_q)
    assert again.camera_condition == ()
    kinds = sqlite3.connect(svc.store.path).execute(
        "SELECT payload FROM audit WHERE kind = 'camera_condition' ORDER BY id").fetchall()
    assert [json.loads(p)["warnings"] for (p,) in kinds] == [["blurred"], [], ["blurred"], []]
