"""The index suit measured on a design's faces, and the suit rule of training labels built on it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.codes import CLASSES
from vision.designs import TRAIN_AISLERIOT, VAL_AISLERIOT, CardDesign, get_design
from vision.indexsuit import measure, suit_span
from vision.procedural import index_suit_span


def test_measured_suit_is_where_procedural_decks_draw_it() -> None:
    """For decks of the six Hershey index faces (no Pillow needed), the measured symbol's
    top is within 0.01 card widths of the deck's draws and its height within 0.02 (the
    anti-aliased rim adds about 0.01), across seeds that put the index high, low, small
    and large."""
    for family in range(6):
        for seed in (1001, 1053, 1100, 1200, 1301):
            drawn_top, drawn_bottom = index_suit_span(family, seed)
            top, bottom = suit_span(f"proc:{family}:{seed}")
            assert abs(top - drawn_top) < 0.01, (family, seed, top, drawn_top)
            assert abs((bottom - top) - (drawn_bottom - drawn_top)) < 0.02, (family, seed)


def test_every_aisleriot_design_gets_a_plausible_suit() -> None:
    """Every aisleriot design the data draw, and the validation ones, measure a suit symbol
    under the rank (below 0.15 card widths, above 0.65) of 0.05-0.3 card widths; ornamental
    and tango print theirs far larger than the rest (looked at: they do)."""
    heights = {}
    for name in (*TRAIN_AISLERIOT, *VAL_AISLERIOT):
        top, bottom = suit_span(name)
        assert 0.15 < top < bottom < 0.65, (name, top, bottom)
        heights[name] = bottom - top
        assert 0.05 < heights[name] < 0.3, (name, heights[name])
    ordinary = np.median(list(heights.values()))
    assert heights["ornamental"] > 1.5 * ordinary and heights["tango"] > 1.5 * ordinary


def test_a_face_without_an_index_suit_measures_nan() -> None:
    """Blank faces (or faces whose index holds a single blob) give NaN, which the suit rule
    reads as illegible, never a made-up size."""
    blank = np.zeros((224, 160, 4), np.uint8)
    blank[..., :3], blank[..., 3] = 250, 255
    design = CardDesign("blank", {code: blank for code in CLASSES[:52]})
    assert all(math.isnan(v) for v in measure(design))
    one_blob = blank.copy()
    one_blob[10:30, 8:20, :3] = 0  # a rank and no suit
    design = CardDesign("rank only", {code: one_blob for code in CLASSES[:52]})
    assert all(math.isnan(v) for v in measure(design))


def test_the_suit_rule_flags_small_blurred_cut_and_covered_suits() -> None:
    """``label_frames(..., legibility="suit")`` flags a card-code frame by the design's
    measured suit: a card 80 px wide with a sharp 0.11-card-width suit is legible; the same
    frame at 40 px (4.4 px of suit), in a scene blurred 3 px, cut by a frame 0.5 of the
    card, or with its index region 95 % visible is not. An unknown rule is refused."""
    from vision.proposals import IndexFrame
    from vision.train import label_frames

    name = "proc:0:1053"
    top, bottom = suit_span(name)
    assert 0.09 < bottom - top < 0.13

    def flag(width: float, blur: float = 0.0, frame_share: float = 1.0,
             visible: float = 1.0) -> bool:
        h = width * 1.45
        card = {"code": "7H", "corners": [[100, 100], [100 + width, 100],
                                          [100 + width, 100 + h], [100, 100 + h]],
                "card_width_px": width, "index_visible": [visible, 0.0]}
        labels = {"design": name, "cards": [card],
                  "photometric": {"gaussian_blur": blur, "motion_blur_px": 0}}
        frame = IndexFrame(np.array([100.0, 100.0]), np.array([1.0, 0.0]),
                           np.array([0.0, 1.0]), width * frame_share, h * frame_share, True)
        y, illegible = label_frames([frame], labels, legibility="suit")
        assert y.tolist() == [CLASSES.index("7H")]
        return bool(illegible[0])

    assert not flag(80.0)
    assert flag(40.0)
    assert flag(80.0, blur=3.0)
    assert flag(80.0, frame_share=0.5)
    assert flag(80.0, visible=0.95)
    with pytest.raises(ValueError, match="unknown legibility rule"):
        label_frames([], {"design": name, "cards": []}, legibility="pixels")


def test_soft_colour_targets_share_a_code_with_its_colour_partner() -> None:
    """``soft_targets(..., colour=True)``: an illegible code's target is half its own code,
    half the other suit of its colour (2H with 2D, KC with KS); others stay one-hot."""
    torch = pytest.importorskip("torch")
    from vision.train_device import soft_targets

    y = torch.tensor([CLASSES.index(c) for c in ("2H", "2H", "KC", "AS", "face_down")])
    t = soft_targets(y, torch.tensor([False, True, True, True, True]), len(CLASSES),
                     colour=True)
    assert t[0].nonzero().flatten().tolist() == [CLASSES.index("2H")]
    assert {CLASSES[i]: float(t[1, i]) for i in t[1].nonzero().flatten()} == {"2H": 0.5,
                                                                             "2D": 0.5}
    assert {CLASSES[i]: float(t[2, i]) for i in t[2].nonzero().flatten()} == {"KS": 0.5,
                                                                             "KC": 0.5}
    assert {CLASSES[i]: float(t[3, i]) for i in t[3].nonzero().flatten()} == {"AS": 0.5,
                                                                             "AC": 0.5}
    assert t[4].nonzero().flatten().tolist() == [CLASSES.index("face_down")]
    assert torch.allclose(t.sum(1), torch.ones(5))


def test_get_design_measures_are_cached_per_name() -> None:
    """The label rule measures each design once (``suit_span`` is cached), on the same
    faces :func:`vision.designs.get_design` draws."""
    suit_span.cache_clear()
    first = suit_span("proc:3:17")
    assert suit_span("proc:3:17") == first and suit_span.cache_info().hits == 1
    assert measure(get_design("proc:3:17")) == first


def test_crop_ranking_benchmark_makes_a_crop_file_and_ranks_readers(tmp_path, capsys,
                                                                   bench_script) -> None:
    """benchmarks/crop_ranking.py renders crops labelled by the suit rule (two scenes of a
    Hershey deck here), then per reader counts sure right and wrong reads and the right reads
    before the k-th wrong one, for all, legible and illegible crops, and the oracle pair of
    thresholds; its two counting functions pass their doctests; no model is refused."""
    import doctest
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    mod = bench_script("crop_ranking")
    assert doctest.testmod(mod).failed == 0
    crops = tmp_path / "c.npz"
    assert mod.main(["--make", str(crops), "--designs", "proc:0:1053", "--scenes", "2",
                     "--seed", "3"]) == 0
    with np.load(crops) as z:
        assert str(z["legibility_rule"]) == "suit" and len(z["illegible"]) == len(z["y"])
        n_card = int((z["y"] < 52).sum())
        clear = z["x"]
    # the same scenes, each seen through a badly set camera (--camera-share 1): other crops
    hard = tmp_path / "h.npz"
    assert mod.main(["--make", str(hard), "--designs", "proc:0:1053", "--scenes", "2",
                     "--seed", "3", "--camera-share", "1"]) == 0
    with np.load(hard) as z:
        assert z["x"].shape != clear.shape or (z["x"] != clear).any()
    assert mod.main([str(crops), str(root / "models" / "cards_v5.onnx")]) == 0
    out = capsys.readouterr().out
    assert f"{n_card} card-code crops" in out
    sizes = [int(v) for v in re.findall(r"n=\s*(\d+)", out)]
    assert sizes[0] == n_card and sizes[1] + sizes[2] == n_card
    assert "one threshold / oracle pair" in out
    with pytest.raises(SystemExit):
        mod.main([str(crops)])
