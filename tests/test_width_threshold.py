"""An operating threshold by the card's width (``vision.widthbar``, a reader's
``"threshold_by_width"``): each card kept at the threshold of its own width, the reads and
their places unchanged, scored by the sweeps beside every flat threshold."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from vision.calibrate import keeps_rule, misread_upper_bound
from vision.codes import CLASSES
from vision.merge import _Read, merge_reads
from vision.proposals import IndexFrame
from vision.recognize import DEFAULT_MODEL, SECOND_LOOK_FLOOR, Recognizer, load_image
from vision.sweep import BY_WIDTH_SUFFIX, sweep_reads, sweep_rendered
from vision.sweep import main as sweep_main
from vision.widthbar import WidthSteps

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"
STEPS = [[0, 0.999], [45, 0.997], [55, 0.995], [80, 0.993]]


def _read(code: str, prob: float, point: tuple[float, float], width: float,
          bar: float = 0.0) -> _Read:
    """A read of the top-left index corner of an upright card ``width`` px wide."""
    f = IndexFrame(np.array(point, float), np.array([1.0, 0.0]), np.array([0.0, 1.0]),
                   width, 1.45 * width, True)
    return _Read(CLASSES.index(code), prob, 1.0, f, extra_bar=bar)


def _copy_model(tmp_path: Path, **meta: object) -> Path:
    """The bundled reader and gate copied, the reader's ``.json`` updated by ``meta``."""
    for model in (DEFAULT_MODEL.name, "gate_v2.onnx"):
        shutil.copy(DEFAULT_MODEL.parent / model, tmp_path / model)
    data = {**json.loads(DEFAULT_MODEL.with_suffix(".json").read_text()), **meta}
    (tmp_path / DEFAULT_MODEL.with_suffix(".json").name).write_text(json.dumps(data))
    return tmp_path / DEFAULT_MODEL.name


def test_steps_parse_and_refuse() -> None:
    steps = WidthSteps.parse(STEPS)
    assert [steps.at(w) for w in (10, 44.9, 45, 60, 79.99, 80, 500)] == [
        0.999, 0.999, 0.997, 0.995, 0.995, 0.993, 0.993]
    assert steps.lowest == 0.993 and steps.to_json() == [[float(w), t] for w, t in STEPS]
    for bad, why in (([[10, 0.999]], "start at 0"), ([[0, 0.99], [50, 0.995]], "not rise"),
                     ([[0, 0.999], [50, 0.997], [50, 0.99]], "increase"),
                     ([[0, 1.5]], "probabilities"), ([], "pairs"), (0.997, "pairs"),
                     ([[0, "0.99"]], "pairs"), ([[0, True]], "pairs")):
        with pytest.raises(ValueError, match=why):
            WidthSteps.parse(bad)


def test_a_card_is_held_to_the_threshold_of_its_width() -> None:
    steps = WidthSteps.parse(STEPS)
    large = _read("QH", 0.994, (100, 100), 90.0)     # 0.993 for 80 px and wider
    small = _read("7S", 0.998, (400, 100), 40.0)     # 0.999 under 45 px
    middle = _read("2D", 0.996, (700, 100), 60.0)    # 0.995 from 55 px
    flat = merge_reads([large, small, middle], 0.997)
    assert [c["code"] for c in flat["cards"]] == ["7S"] and len(flat["unreadable"]) == 2
    by_width = merge_reads([large, small, middle], steps)
    assert sorted(c["code"] for c in by_width["cards"]) == ["2D", "QH"]
    # the small card is refused where it lies, not dropped
    (refusal,) = by_width["unreadable"]
    assert np.allclose(refusal["center"], small.center, atol=0.1)
    # a card's width is the shorter side of the card its reads make (here 0.5 % short of
    # 80 px: held to 0.995, so refused at 0.994)
    assert merge_reads([_read("QH", 0.994, (100, 100), 79.6)], steps)["cards"] == []
    # steps that are one threshold merge as that threshold
    one = WidthSteps.parse([[0, 0.997]])
    assert merge_reads([large, small, middle], one) == flat


GUARD = {"below": 0.997, "sure": 0.999, "sure_cards": 3, "same_code_reach": 1.5}


def test_a_guard_keeps_cards_under_the_flat_threshold_only_where_the_frame_vouches() -> None:
    guarded = WidthSteps.parse({"steps": STEPS, "guard": GUARD})
    assert guarded.to_json() == {"steps": [[float(w), t] for w, t in STEPS], "guard": GUARD}
    assert WidthSteps.parse(guarded.to_json()) == guarded
    assert guarded.at_least(0.998).guard == guarded.guard
    lax = _read("QH", 0.994, (100, 100), 90.0)        # 0.993 for 90 px: under the flat 0.997
    sure = [_read(code, 0.9995, (300 + 150 * k, 100), 90.0)
            for k, code in enumerate(("7S", "2D", "9C"))]
    # three sure cards in the frame: the lax card stands, as without the guard
    out = merge_reads([lax, *sure], guarded)
    assert out == merge_reads([lax, *sure], WidthSteps.parse(STEPS))
    assert sorted(c["code"] for c in out["cards"]) == ["2D", "7S", "9C", "QH"]
    # two: its scale is not vouched for; refused where it lay, the sure cards kept
    out = merge_reads([lax, *sure[:2]], guarded)
    assert sorted(c["code"] for c in out["cards"]) == ["2D", "7S"]
    (refusal,) = out["unreadable"]
    assert np.allclose(refusal["center"], lax.center, atol=0.1)
    # a card over the flat threshold needs no vouching, alone or not
    alone = _read("QH", 0.998, (100, 100), 90.0)
    assert [c["code"] for c in merge_reads([alone], guarded)["cards"]] == ["QH"]
    # one scored a hair under it is reported at 0.997 by the steps, and judged by its score:
    # refused alone (the flat 0.997 refuses it too), kept with three sure cards
    edge = _read("QH", 0.99696, (100, 100), 90.0)
    assert merge_reads([edge], WidthSteps.parse(STEPS))["cards"][0]["confidence"] == 0.997
    assert merge_reads([edge], 0.997)["cards"] == merge_reads([edge], guarded)["cards"] == []
    out = merge_reads([edge, *sure], guarded)
    assert sorted(c["code"] for c in out["cards"]) == ["2D", "7S", "9C", "QH"]
    assert all(sorted(c) == ["center", "code", "confidence", "corners"] for c in out["cards"])
    # a second report of one card: its code again within 1.5 of its widths (a misjudged
    # size puts the centres apart); the lax one refused, the other kept
    again = _read("QH", 0.9995, (100, 220), 90.0)
    codes = [c["code"] for c in merge_reads([lax, again, *sure], guarded)["cards"]]
    assert sorted(codes) == ["2D", "7S", "9C", "QH"]
    assert [c["code"] for c in merge_reads(
        [lax, again, *sure], WidthSteps.parse(STEPS))["cards"]].count("QH") == 2
    # with min_reads 2 a lax card made by one read is refused even with three sure cards;
    # made by two reads of its code (two looks at its corner) it stands
    two_reads = WidthSteps.parse({"steps": STEPS, "guard": {**GUARD, "min_reads": 2}})
    assert two_reads.to_json()["guard"]["min_reads"] == 2 and "min_reads" not in GUARD
    assert WidthSteps.parse(two_reads.to_json()) == two_reads
    out = merge_reads([lax, *sure], two_reads)
    assert sorted(c["code"] for c in out["cards"]) == ["2D", "7S", "9C"]
    assert np.allclose(out["unreadable"][0]["center"], lax.center, atol=0.1)
    look = _read("QH", 0.9935, (102, 101), 90.0)
    out = merge_reads([lax, look, *sure], two_reads)
    assert sorted(c["code"] for c in out["cards"]) == ["2D", "7S", "9C", "QH"]
    assert all(sorted(c) == ["center", "code", "confidence", "corners"] for c in out["cards"])
    for bad, why in (({"steps": STEPS, "guard": {**GUARD, "min_reads": 0}}, "min_reads"),
                     ({"steps": STEPS, "guard": {**GUARD, "min_reads": 1.5}}, "min_reads"),
                     ({"steps": STEPS, "guard": {**GUARD, "min_reads": True}}, "numbers"),
                     ({"steps": STEPS}, "only"), ({"steps": STEPS, "guard": GUARD, "x": 1}, "only"),
                     ({"steps": STEPS, "guard": {**GUARD, "sure": 0.99}}, "not be under"),
                     ({"steps": STEPS, "guard": {**GUARD, "sure_cards": 2.5}}, "whole number"),
                     ({"steps": STEPS, "guard": {**GUARD, "below": True}}, "numbers"),
                     ({"steps": STEPS, "guard": {"below": 0.997}}, "numbers")):
        with pytest.raises(ValueError, match=why):
            WidthSteps.parse(bad)


def test_extra_walks_cards_need_their_bar_at_any_width() -> None:
    steps = WidthSteps.parse(STEPS)
    sure = _read("9C", 0.99995, (100, 100), 90.0, bar=0.9999)
    weak = _read("9C", 0.9995, (100, 100), 90.0, bar=0.9999)
    assert [c["code"] for c in merge_reads([sure], steps)["cards"]] == ["9C"]
    assert merge_reads([weak], steps)["cards"] == []


def test_sample_frames_merge_alike_at_steps_of_one_threshold() -> None:
    """The real reads of sample frames: steps of one threshold are that threshold, card for
    card; steps that differ move only cards whose confidence lies between them."""
    rec = Recognizer()
    steps = WidthSteps.parse(STEPS)
    moved = 0
    for name in ("tigullio_000", "proc-5-1011_001", "neoclassical_000"):
        reads = rec.read(load_image(SAMPLES / f"{name}.jpg"))
        for t in (0.99, 0.997, 0.999):
            assert merge_reads(reads, WidthSteps.parse([[0, t]])) == merge_reads(reads, t)
        low, high = merge_reads(reads, 0.993)["cards"], merge_reads(reads, 0.999)["cards"]
        got = merge_reads(reads, steps)["cards"]
        key = [(c["code"], tuple(c["center"])) for c in got]
        assert {(c["code"], tuple(c["center"])) for c in high} <= set(key) <= {
            (c["code"], tuple(c["center"])) for c in low}
        moved += len(low) - len(got)
    assert moved > 0  # some cards between 0.993 and 0.999 were held to their width


def test_a_models_threshold_by_width(tmp_path: Path) -> None:
    model = _copy_model(tmp_path, threshold_by_width=STEPS)
    rec = Recognizer(model)
    assert rec.width_steps == rec.model_width_steps == WidthSteps.parse(STEPS)
    assert rec.operating_threshold() is rec.width_steps
    # a threshold asked for holds for every card; the model's steps are still known
    asked = Recognizer(model, threshold=0.5)
    assert asked.width_steps is None and asked.operating_threshold() == 0.5
    assert asked.model_width_steps == rec.width_steps
    assert Recognizer().width_steps is None  # the bundled reader: flat
    # the second looks reach down to what the lowest step needs
    low = Recognizer(_copy_model(tmp_path, threshold_by_width=[[0, 0.999], [60, 0.98]]))
    assert round(low.second_look_floor(), 4) == 0.5756 < Recognizer().second_look_floor()
    # (a threshold of 0 is a threshold: every candidate is looked at again)
    assert Recognizer(model, threshold=0.0).second_look_floor() == SECOND_LOOK_FLOOR
    # a frame whose cards are 37-63 px wide: under 50 px held to 0.9999 (its 0.9974 JH
    # refused), from 50 px to 0.99 (its 3D and AH at 0.991-0.992 kept)
    sharp = Recognizer(_copy_model(tmp_path, threshold_by_width=[[0, 0.9999], [50, 0.99]]))
    img = load_image(SAMPLES / "proc-5-1011_001.jpg")
    got = sharp.recognize(img)
    assert got["cards"] == merge_reads(sharp.read(img), sharp.width_steps)["cards"]
    codes = {c["code"] for c in got["cards"]}
    flat = {c["code"] for c in Recognizer().recognize(img)["cards"]}
    assert {"3D", "AH"} <= codes - flat and "JH" in flat - codes
    # a burst (no burst threshold of its own) keeps each frame's cards as the frame held them
    assert sharp.burst_threshold == 0.0 and Recognizer().burst_threshold == 0.997
    burst = sharp.recognize_burst([img])
    assert sorted((c["code"], c["center"]) for c in burst["cards"]) == sorted(
        (c["code"], c["center"]) for c in got["cards"])
    with pytest.raises(ValueError, match="threshold_by_width: thresholds must not rise"):
        Recognizer(_copy_model(tmp_path, threshold_by_width=[[0, 0.99], [60, 0.999]]))
    # a guard in the .json: what the merge of a frame's reads holds its cards to
    guarded = Recognizer(_copy_model(tmp_path, threshold_by_width={"steps": STEPS,
                                                                   "guard": GUARD}))
    assert guarded.width_steps == WidthSteps.parse({"steps": STEPS, "guard": GUARD})
    reads = guarded.read(img)
    assert guarded.recognize(img)["cards"] == merge_reads(reads, guarded.width_steps)["cards"]
    with pytest.raises(ValueError, match="threshold_by_width: guard: sure must not be under"):
        Recognizer(_copy_model(tmp_path, threshold_by_width={
            "steps": STEPS, "guard": {**GUARD, "sure": 0.9}}))


def test_a_sweep_scores_a_reader_by_width_beside_its_flat_thresholds(
        tmp_path: Path, bench_script, capsys: pytest.CaptureFixture[str]) -> None:
    """Steps of one threshold score as that flat threshold's row; a sweep of rendered frames
    and the same sweep from its saved reads agree; so does ``benchmarks/width_steps_added.py``
    on those reads, with the misread rule's bound."""
    (tmp_path / "one").mkdir()
    (tmp_path / "steps").mkdir()
    one = _copy_model(tmp_path / "one", threshold_by_width=[[0, 0.997]])
    stepped = _copy_model(tmp_path / "steps", threshold_by_width=STEPS)
    reads = tmp_path / "reads.npz"
    designs = ["proc:1:1031"]
    swept = sweep_rendered([str(one)], 2, 31, 1, designs=designs, save_reads=reads)
    name = one.name
    (row,) = swept["models"][name + BY_WIDTH_SUFFIX]
    flat = next(r for r in swept["models"][name] if r["threshold"] == 0.997)
    assert row["threshold"] == [[0, 0.997]] and row["readable_cards"] > 0
    assert {k: v for k, v in row.items() if k != "threshold"} == {
        k: v for k, v in flat.items() if k != "threshold"}
    assert sweep_reads(str(one), [reads])["models"] == swept["models"]
    again = sweep_reads(str(stepped), [reads])["models"]
    (by_width,) = again[name + BY_WIDTH_SUFFIX]
    assert by_width["threshold"] == STEPS
    assert again[name] == swept["models"][name]  # the flat rows: the same reads
    # a guarded reader's row names its steps and guard, and the command prints it
    (tmp_path / "guarded").mkdir()
    guarded = _copy_model(tmp_path / "guarded",
                          threshold_by_width={"steps": STEPS, "guard": GUARD})
    out = tmp_path / "guarded.json"
    assert sweep_main(["--from-reads", str(reads), "--out", str(out), str(guarded)]) == 0
    (row,) = json.loads(out.read_text())["models"][name + BY_WIDTH_SUFFIX]
    assert row["threshold"] == {"steps": STEPS, "guard": GUARD}
    assert row["correct"] <= by_width["correct"] and row["reported"] <= by_width["reported"]
    # the benchmark on the same reads: steps of one threshold add no card, and every summed
    # row is the sweep's flat row, with the misread rule's bound as vision.recheck takes it
    one_step = tmp_path / "one_step.json"
    one_step.write_text(json.dumps([[0, 0.997]]))
    capsys.readouterr()
    assert bench_script("width_steps_added").main([str(reads), "--steps", str(one_step)]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert [r.split()[0] for r in rows] == ["flat", "steps,", "steps"]  # and no card added
    tails = {r.split("recall", 1)[1] for r in rows}
    assert len(tails) == 1
    bound = misread_upper_bound(flat["misread"], flat["reported"])
    holds = keeps_rule(flat, 0.001, 0.1)
    assert tails.pop() == (
        f" {100 * flat['recall']:.2f} %  misreads {flat['misread']} / {flat['reported']}"
        f"  false positives {flat['false_positives']}  ({flat['frames']} frames,"
        f" {flat['readable_cards']} cards)  bound {100 * bound:.4f} %"
        f"  fp {flat['false_positives'] / flat['frames']:.4f} a frame"
        f"  rule {'holds' if holds else 'fails'}")
