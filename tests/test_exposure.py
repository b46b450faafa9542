"""Dim frames are brightened before they are read
(:mod:`vision.exposure`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision.evaluate import labelled_images, score_frame
from vision.exposure import DARK_STOCK, MAX_GAIN, TARGET_STOCK, brightened, stock_level
from vision.recognize import Recognizer, load_image

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def test_the_stock_level_follows_the_cards_and_the_gain_is_bounded() -> None:
    table = np.full((100, 100, 3), (20, 60, 15), np.uint8)   # green felt
    table[20:50, 20:40] = 80                                  # a card under dim light
    assert stock_level(table) == 80
    lit, gain = brightened(table)
    assert gain == TARGET_STOCK / 80 and stock_level(lit) == TARGET_STOCK
    table[20:50, 20:40] = DARK_STOCK                          # dark enough to be read as it is
    assert brightened(table)[1] == 1.0 and brightened(table)[0] is table
    black = np.zeros((10, 10, 3), np.uint8)                   # a covered camera stays black
    assert stock_level(black) == 0 and brightened(black)[1] == MAX_GAIN
    assert brightened(black)[0].max() == 0


def test_a_dark_frame_reads_as_the_frame_did_and_says_it_is_underexposed() -> None:
    """The sample frames at 0.2 of their levels: read as they are, more than a third of their
    cards are lost; brightened, nearly all that the frames themselves read, none misread, and
    each frame's quality carries the gain and the warning. The frames themselves are read as
    before (no gain, no warning) and their quality says their stock level. (At 0.3 of their
    levels ``cards_v5`` lost about half as they were; ``cards_v7`` reads 30 of the frames'
    42 there, 16 at 0.2, and 46 brightened.)"""
    rec = Recognizer()
    right = {"frame": 0, "dark as it is": 0, "dark": 0}
    for img_path, lab_path in labelled_images(SAMPLES):
        labels = json.loads(lab_path.read_text())
        img = load_image(img_path)
        dark = (img * 0.2).astype(np.uint8)
        plain, result = rec.recognize(img), rec.recognize(dark)
        assert "gain" not in plain["quality"] and "underexposed" not in plain["quality"]["warnings"]
        assert plain["quality"]["stock_level"] >= DARK_STOCK
        assert "underexposed" in result["quality"]["warnings"]
        assert result["quality"]["gain"] > 2 and result["quality"]["stock_level"] < DARK_STOCK
        score = score_frame(result, labels)
        assert score.misread == 0 and score.false_positive == 0
        right["frame"] += score_frame(plain, labels).correct
        right["dark"] += score.correct
        with pytest.MonkeyPatch.context() as mp:   # brightening off: the frame as it is
            mp.setattr("vision.exposure.DARK_STOCK", 0)
            right["dark as it is"] += score_frame(rec.recognize(dark), labels).correct
    assert right["dark"] >= 0.9 * right["frame"] and right["dark as it is"] < 0.7 * right["frame"]
