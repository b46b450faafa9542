"""A camera whose white balance is set for another light is warned of
(:mod:`vision.colourcast`)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision.colourcast import CAST_LIMIT, stock_colour, with_colour
from vision.conditions import changed
from vision.evaluate import labelled_images
from vision.quality import ADVICE, WARNINGS
from vision.recognize import Recognizer, load_image

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def test_the_stock_is_measured_inside_the_cards_not_on_the_felt_or_the_pips() -> None:
    """Felt, chips and print outside the cards do not count; the darker half inside a card
    (its pips, a court's picture) does not either; too few samples give no measure."""
    img = np.full((240, 320, 3), (40, 140, 200), np.uint8)      # orange felt, yellow print
    img[40:200, 100:210] = (236, 238, 240)                       # a white card
    img[80:160, 130:180] = (20, 20, 200)                         # a large red pip on it
    card = {"corners": [[100, 40], [209, 40], [209, 199], [100, 199]]}
    assert stock_colour(img, [card]) == (236, 238, 240)
    assert "colour_cast" not in with_colour({"warnings": []}, stock_colour(img, [card]))[
        "warnings"]
    tiny = {"corners": [[100, 40], [108, 40], [108, 52], [100, 52]]}
    assert stock_colour(img, [tiny]) is None
    assert with_colour({"warnings": ["blurred"]}, None) == {"warnings": ["blurred"]}
    # the limit is strict: a stock exactly CAST_LIMIT apart is not warned of
    edge = (100, 100, int(100 * CAST_LIMIT))
    assert with_colour({"warnings": []}, edge)["warnings"] == []
    assert with_colour({"warnings": []}, (100, 100, 136))["warnings"] == ["colour_cast"]


def test_sample_frames_under_a_tungsten_cast_are_warned_of_and_as_they_are_not() -> None:
    """Every sample frame whose cards are read: as rendered, no warning and a stock near
    grey; under a white balance set for daylight in tungsten light, the warning, with the
    stock's blue fallen against its red."""
    rec = Recognizer()
    measured = 0
    for img_path, _ in labelled_images(SAMPLES):
        img = load_image(img_path)
        plain = rec.recognize(img)["quality"]
        if "stock_bgr" not in plain:
            continue
        measured += 1
        assert "colour_cast" not in plain["warnings"]
        b, g, r = plain["stock_bgr"]
        assert max(b, g, r) <= CAST_LIMIT * min(b, g, r)
        tinted = rec.recognize(changed(img, "cast:tungsten"))["quality"]
        assert "colour_cast" in tinted["warnings"]
        tb, _, tr = tinted["stock_bgr"]      # tungsten scales blue to 0.55 of red
        assert tb / tr < 0.7 * b / r
    assert measured >= 6


def test_the_warning_is_listed_and_advised() -> None:
    assert WARNINGS[-1] == "colour_cast" and "white balance" in ADVICE["colour_cast"]


def test_recognize_says_the_stock_is_tinted_and_what_to_do(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command line prints the warning with the stock it measured; with ``--json`` the
    quality carries ``stock_bgr`` and the warning."""
    import cv2

    from controller.cli import main

    img = load_image(SAMPLES / "tigullio_001.jpg")
    cv2.imwrite(str(tmp_path / "tungsten.png"), changed(img, "cast:tungsten"))
    assert main(["recognize", str(tmp_path / "tungsten.png")]) == 0
    out = capsys.readouterr().out
    assert "colour_cast" in out and "card stock tinted: blue" in out
    assert main(["recognize", "--json", str(tmp_path / "tungsten.png")]) == 0
    quality = json.loads(capsys.readouterr().out)["quality"]
    assert "colour_cast" in quality["warnings"]
    b, _, r = quality["stock_bgr"]
    assert b < 0.75 * r
