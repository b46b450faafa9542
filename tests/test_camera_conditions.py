"""benchmarks/camera_conditions.py: the reader under badly set cameras."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from vision.evaluate import evaluate_dir, labelled_images
from vision.proposals import card_mask
from vision.quality import WARNINGS
from vision.recognize import Recognizer, load_image

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_images"
#: the ``bench_script`` fixture (tests/conftest.py): a benchmarks/ script by its name
Script = Callable[[str], ModuleType]



def test_the_frames_as_they_are_score_as_vision_eval_and_a_turned_camera_reads(
        capsys: pytest.CaptureFixture[str], bench_script: Script) -> None:
    """``none`` is vision-eval's score; a camera turned a quarter reads about as much with
    its labels turned alike (labels left unturned would match almost no card); an
    overexposed camera reads less."""
    mod = bench_script("camera_conditions")
    assert mod.main([str(SAMPLES), "--frames", "8", "--workers", "1", "--json",
                     "--conditions", "none", "rotate:90", "exposure:1.8"]) == 0
    rows = json.loads(capsys.readouterr().out)["conditions"]
    plain = evaluate_dir(SAMPLES).summary()
    assert rows["none"]["correct"] == plain["correct"] > 30
    assert rows["none"]["misread"] == plain["misread"]
    assert rows["rotate:90"]["correct"] >= 0.8 * plain["correct"]
    assert rows["rotate:90"]["misread"] == 0
    assert rows["exposure:1.8"]["correct"] < plain["correct"]
    assert set(rows["none"]["warned"]) == set(WARNINGS)


def test_another_reader_is_read_under_the_same_conditions(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bench_script: Script) -> None:
    """``--model``: the frames as they are score as vision-eval scores with that reader."""
    mod = bench_script("camera_conditions")
    other = ROOT / "models" / "cards_v4.onnx"
    assert mod.main([str(SAMPLES), "--frames", "4", "--workers", "1", "--json",
                     "--conditions", "none", "--model", str(other)]) == 0
    row = json.loads(capsys.readouterr().out)["conditions"]["none"]
    for img, lab in labelled_images(SAMPLES)[:4]:
        (tmp_path / img.name).symlink_to(img)
        (tmp_path / lab.name).symlink_to(lab)
    plain = evaluate_dir(tmp_path, Recognizer(other)).summary()
    assert (row["correct"], row["reported"]) == (plain["correct"], plain["reported"])
    bundled = evaluate_dir(tmp_path).summary()
    assert (row["correct"], row["reported"]) != (bundled["correct"], bundled["reported"])


def test_an_unknown_condition_is_refused_before_any_frame_is_read(bench_script: Script) -> None:
    mod = bench_script("camera_conditions")
    with pytest.raises(SystemExit) as exc:
        mod.main([str(SAMPLES), "--conditions", "none", "cast:purple"])
    assert exc.value.code == 2


def test_the_pilot_balances_a_tinted_stock_to_grey_and_leaves_a_white_one(
        bench_script: Script) -> None:
    """A white-stocked frame under tungsten light: balanced, its card stock (the brighter half
    of the card mask's pixels) is grey."""
    mod = bench_script("camera_conditions")
    img = load_image(SAMPLES / "neoclassical_001.jpg")      # stock (231, 228, 213): white
    assert mod.white_balanced(img) is img
    tinted = mod.changed(img, "cast:tungsten")
    balanced = mod.white_balanced(tinted)
    mask = card_mask(img) > 0

    def stock(frame: np.ndarray) -> np.ndarray:
        pixels = frame[mask].astype(np.int32)
        bright = pixels[pixels.sum(1) >= np.median(pixels.sum(1))]
        return np.median(bright, axis=0)

    def spread(v: np.ndarray) -> float:
        return float(v.max() / v.min())

    assert spread(stock(img)) < 1.1 < 1.6 < spread(stock(tinted))   # blue 0.55 of red
    assert spread(stock(balanced)) < 1.03


def test_the_second_pilot_stretches_a_hazy_frame_and_leaves_a_clear_one(
        bench_script: Script) -> None:
    mod = bench_script("camera_conditions")
    img = load_image(SAMPLES / "plastic_001.jpg")            # darks at 12 of 255
    assert mod.stretched(img) is img
    hazy = mod.changed(img, "haze:0.5")
    out = mod.stretched(hazy)
    assert np.percentile(hazy.min(2), 2) > 80 > 20 > np.percentile(out.min(2), 2)
    assert abs(int(np.percentile(out.max(2), 98)) - int(np.percentile(hazy.max(2), 98))) <= 2
