"""Pipeline settings named on a command line (vision.settings) and a sweep that reads one
reader with and without them on the same frames (vision.sweep)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision import merge, proposals
from vision.recognize import DEFAULT_MODEL
from vision.settings import Setting, applied, parse, split_reader
from vision.sweep import main as sweep_main
from vision.sweep import sweep_rendered


def test_a_setting_is_an_existing_constant_given_a_literal_of_its_type() -> None:
    assert parse("proposals.CLOSE_FIRST=True") == Setting("proposals", "CLOSE_FIRST", True)
    assert parse(" merge.SPLIT_GAP = 0 ") == Setting("merge", "SPLIT_GAP", 0.0)  # int -> float
    assert parse("proposals.EXTRA_ARMS_PX=(16.0, 24.0)").value == (16.0, 24.0)
    for text, why in (("proposals.CLOSE_FIRST", "module.NAME=VALUE"),
                      ("CLOSE_FIRST=True", "module.NAME=VALUE"),
                      ("nowhere.CLOSE_FIRST=True", "no module vision.nowhere"),
                      ("proposals.NOT_THERE=1", "no setting NOT_THERE"),
                      ("proposals.card_mask=None", "no setting card_mask"),  # not a constant
                      ("proposals._K_SMALL=None", "no setting _K_SMALL"),  # not public
                      ("proposals.CLOSE_FIRST=yes", "not a Python literal"),
                      ("proposals.CLOSE_FIRST=1", "is a bool"),
                      ("merge.SPLIT_GAP='0.2'", "is a float")):
        with pytest.raises(ValueError, match=why):
            parse(text)


def test_settings_hold_within_the_block_and_are_put_back_whatever_happens() -> None:
    gap, arms = merge.SPLIT_GAP, proposals.EXTRA_ARMS_PX
    path, settings = split_reader("x/cards.onnx@merge.SPLIT_GAP=0.3@proposals.EXTRA_ARMS_PX=()")
    assert path == "x/cards.onnx" and len(settings) == 2
    with applied(settings):
        assert (merge.SPLIT_GAP, proposals.EXTRA_ARMS_PX) == (0.3, ())
    assert (gap, arms) == (merge.SPLIT_GAP, proposals.EXTRA_ARMS_PX)
    with pytest.raises(RuntimeError), applied(settings):
        raise RuntimeError("a frame that failed")
    assert (gap, arms) == (merge.SPLIT_GAP, proposals.EXTRA_ARMS_PX)
    assert split_reader("x/cards.onnx") == ("x/cards.onnx", [])


def test_a_constant_imported_by_name_elsewhere_is_set_there_too() -> None:
    """``vision.rankcolour`` groups reads with ``from vision.merge import SAME_CENTRE``: set
    on ``merge`` alone, the rank-and-colour refusals would go on grouping at the old value."""
    from vision import rankcolour

    before = merge.SAME_CENTRE
    assert rankcolour.SAME_CENTRE is before
    with applied([parse("merge.SAME_CENTRE=0.5")]):
        assert merge.SAME_CENTRE == rankcolour.SAME_CENTRE == 0.5
    assert merge.SAME_CENTRE is rankcolour.SAME_CENTRE is before


def test_a_sweep_reads_the_same_frames_with_and_without_a_setting() -> None:
    """The setting reaches the sweep's worker processes: a card mask that asks the stock to be
    255 grey levels lighter than the felt finds nothing, so that reader reads no card of the
    frames the plain one reads; each is scored under its own name, and the setting is not
    left in place."""
    before = proposals.LIGHTER_THAN_FELT
    dark = f"{DEFAULT_MODEL}@proposals.LIGHTER_THAN_FELT=255"
    swept = sweep_rendered([str(DEFAULT_MODEL), dark], 1, 31, 1,
                           designs=["proc:0:1031", "proc:1:1031"])
    plain = swept["models"][DEFAULT_MODEL.name]
    blind = swept["models"][Path(dark).name]
    assert Path(dark).name == "cards_v7.onnx@proposals.LIGHTER_THAN_FELT=255"
    assert plain[0]["readable_cards"] == blind[0]["readable_cards"] > 5  # the same frames
    assert plain[0]["correct"] > 5 and blind[0]["correct"] == blind[0]["reported"] == 0
    assert proposals.LIGHTER_THAN_FELT == before < 255


def test_a_bad_setting_is_refused_before_a_frame_is_rendered(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no setting"):
        sweep_rendered([f"{DEFAULT_MODEL}@proposals.LIGHTER_THAN_FLET=20"], 1, 31, 1)
    with pytest.raises(ValueError, match="keeps no reads"):
        sweep_rendered([f"{DEFAULT_MODEL}@proposals.CLOSE_FIRST=True"], 1, 31, 1,
                       save_reads=tmp_path / "r.npz")
    out = tmp_path / "s.json"
    with pytest.raises(SystemExit):
        sweep_main(["--frames-per-design", "1", "--workers", "1", "--out", str(out),
                    f"{DEFAULT_MODEL}@proposals.CLOSE_FIRST=maybe"])
    assert not out.exists() and not (tmp_path / "r.npz").exists()
