"""Frames larger than 1080p are read at 1080p and reported in their own pixels
(:mod:`vision.framesize`)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.evaluate import labelled_images, score_frame
from vision.framesize import MAX_SHORT_SIDE, reading_size
from vision.recognize import Recognizer, load_image
from vision.tablesize import from_labels

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def _scaled_labels(labels: dict, k: float) -> dict:
    """A frame's labels for the frame scaled ``k`` times."""
    out = json.loads(json.dumps(labels))
    for card in out["cards"]:
        card["center"] = [v * k for v in card["center"]]
        card["corners"] = [[x * k, y * k] for x, y in card["corners"]]
        card["card_width_px"] *= k
    out["table_to_image"] = (np.diag([k, k, 1.0]) @ np.array(labels["table_to_image"])).tolist()
    return out


@pytest.fixture(scope="module")
def samples() -> list[tuple[np.ndarray, dict]]:
    return [(load_image(img), json.loads(lab.read_text()))
            for img, lab in labelled_images(SAMPLES)]


def test_the_reading_size_caps_the_shorter_side_at_1080() -> None:
    assert reading_size((720, 1280, 3)) is None and reading_size((1080, 1920)) is None
    assert reading_size((2160, 3840, 3)) == (1920, MAX_SHORT_SIDE)
    assert reading_size((1440, 2560)) == (1920, 1080)
    assert reading_size((3840, 2160)) == (1080, 1920)            # a camera turned upright
    assert reading_size((1200, 5000)) == (4500, 1080)            # a wide one: its height


def test_a_4k_frame_reads_its_cards_in_its_own_pixels(samples) -> None:
    """The sample frames (720p) made 4K (three times, bicubic) are read at 1080p: every card
    they read at 720p and more, none misread, none on no card, matched to the labels scaled
    with them (the reports are in the 4K frame's pixels); the quality's card width is the 4K
    frame's, and it says the frame was read at half its size. A calibrated table's card sizes
    (its homography, of the 4K frame) are scaled with the frame: as many cards, none wrong."""
    rec = Recognizer()
    right = {"720p": 0, "4K": 0, "720p table": 0, "4K table": 0}
    widths = []   # the measured card width over the labels' (in the 4K frame's pixels)
    for img, labels in samples:
        big = cv2.resize(img, None, fx=3, fy=3, interpolation=cv2.INTER_CUBIC)
        big_labels = _scaled_labels(labels, 3)
        small_result, big_result = rec.recognize(img), rec.recognize(big)
        for name, result, lab in (("720p", small_result, labels), ("4K", big_result, big_labels),
                                  ("720p table", rec.recognize(img, from_labels(labels)), labels),
                                  ("4K table", rec.recognize(big, from_labels(big_labels)),
                                   big_labels)):
            score = score_frame(result, lab)
            assert score.misread == 0 and score.false_positive == 0, (name, score.summary())
            right[name] += score.correct
        quality = big_result["quality"]
        assert quality["read_scale"] == 0.5 and "read_scale" not in small_result["quality"]
        widths.append(quality["card_width_px"]
                      / np.median([c["card_width_px"] for c in big_labels["cards"]]))
    assert 0.75 < np.median(widths) < 1.25, widths   # not the half-size frame's 0.5
    assert right["4K"] >= right["720p"] > 20, right
    assert right["4K table"] >= 0.8 * right["720p table"] > 16, right
