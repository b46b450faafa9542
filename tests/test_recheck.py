"""Re-checking the operating threshold on later held-out sweeps (``vision.recheck``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision.calibrate import THRESHOLDS, misread_upper_bound
from vision.recheck import main as recheck_main
from vision.recognize import DEFAULT_MODEL, Recognizer

OWN = DEFAULT_MODEL.name + " own places"
VARIANT_OWN = DEFAULT_MODEL.name + "@recognize.EXTRA_BAR=0.9995 own places"


def _sweep(path: Path, name: str, misreads: dict[float, int], seed: int,
           reported: int = 80_000, **extra: object) -> Path:
    """A vision.sweep result with rows ``name`` only: ``reported`` reports at every
    threshold, these misreads (9 per 1000 reports below the thresholds named)."""
    rows = [{"threshold": t, "frames": 10_000, "readable_cards": 2 * reported,
             "correct": reported - misreads.get(t, reported // 1000 * 9), "reported": reported,
             "misread": misreads.get(t, reported // 1000 * 9), "false_positives": 10,
             "face_down": 0, "face_down_found": 0, "face_down_false": 0,
             "unreadable_reports": 0} for t in THRESHOLDS]
    path.write_text(json.dumps({"frames": 10_000, "frames_per_design": 40, "seed": seed,
                                "designs": "fonts-held-out-strict", **extra,
                                "models": {name: rows}}))
    return path


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A copy of the bundled reader and its .json, at 0.997 under the bound rule."""
    path = tmp_path / DEFAULT_MODEL.name
    path.write_bytes(DEFAULT_MODEL.read_bytes())
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    meta.update(threshold=0.997, rule={"max_error": 0.001, "max_fp": 0.1, "bound": True})
    meta.pop("threshold_recheck", None)
    path.with_suffix(".json").write_text(json.dumps(meta))
    (tmp_path / meta["gate"]).write_bytes((DEFAULT_MODEL.parent / meta["gate"]).read_bytes())
    return path


# per sweep: 72 misreads at 0.997 (pooled 144 in 160,000: 0.090 %, bound over 0.1 %), 60 at 0.998
EDGE = {0.997: 72, 0.998: 60, 0.999: 55, 0.9995: 20}


def test_a_threshold_the_later_sweeps_break_is_raised_and_recorded(
        model: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Pooled over two sweeps (rows of two names: the pipeline's own places, one of them read
    with a setting changed), the bound breaks the rule at 0.997 and keeps it from 0.998 up:
    the rule picks 0.998. Printed without --write, nothing written; with it, the .json's
    threshold is 0.998, which a Recognizer then reads at, and the re-check is recorded."""
    assert misread_upper_bound(144, 160_000) > 0.001 > misread_upper_bound(120, 160_000)
    sweeps = [_sweep(tmp_path / "a.json", OWN, EDGE, 911),
              _sweep(tmp_path / "b.json", VARIANT_OWN, EDGE, 919)]
    before = model.with_suffix(".json").read_text()
    args = [str(model), *map(str, sweeps), "--rows", OWN, VARIANT_OWN]
    assert recheck_main(args) == 0
    out = capsys.readouterr().out
    assert "the rule picks 0.998; the threshold 0.997 raised: 0.998" in out
    assert "144 /  160000" in out and "breaks the rule" in out
    assert model.with_suffix(".json").read_text() == before
    assert recheck_main([*args, "--write"]) == 0
    meta = json.loads(model.with_suffix(".json").read_text())
    assert meta["threshold"] == 0.998 and Recognizer(model).threshold == 0.998
    record = meta["threshold_recheck"]
    assert record["previous"] == 0.997 and record["threshold"] == 0.998
    assert record["verdict"] == "raised"
    assert [(s["file"], s["rows"], s["seed"]) for s in record["sweeps"]] == [
        ("a.json", OWN, 911), ("b.json", VARIANT_OWN, 919)]
    pooled = {r["threshold"]: r for r in record["pooled"]}
    assert pooled[0.997]["misread"] == 144 and pooled[0.998]["reported"] == 160_000
    assert min(pooled) == 0.99


def test_a_threshold_the_sweeps_keep_or_would_lower_is_left_as_it_is(
        model: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """Sweeps that keep the rule at 0.997, and sweeps whose rule would pick a lower threshold
    (0.99), leave the threshold as it is, even with --write (which records the re-check): a
    re-check never lowers."""
    before = json.loads(model.with_suffix(".json").read_text())
    keep = _sweep(tmp_path / "k.json", DEFAULT_MODEL.name,
                  {0.997: 40, 0.998: 30, 0.999: 20, 0.9995: 10}, 5)
    assert recheck_main([str(model), str(keep), "--write"]) == 0
    assert "the rule picks 0.997; the threshold 0.997 holds" in capsys.readouterr().out
    lower = _sweep(tmp_path / "l.json", DEFAULT_MODEL.name,
                   {t: 20 for t in THRESHOLDS if t >= 0.99}, 7)
    assert recheck_main([str(model), str(lower), "--write"]) == 0
    assert "the rule picks 0.99; the threshold 0.997 holds" in capsys.readouterr().out
    after = json.loads(model.with_suffix(".json").read_text())
    record = after.pop("threshold_recheck")
    assert after == before and Recognizer(model).threshold == 0.997
    assert (record["previous"], record["threshold"], record["verdict"]) == (0.997, 0.997, "holds")
    assert [s["file"] for s in record["sweeps"]] == ["l.json"]


def test_sweeps_it_cannot_use_are_refused(model: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture) -> None:
    """A sweep without rows of the names asked for (it says which it has), a calibrated
    sweep, and a reader without a .json are refused with a clear message."""
    other = _sweep(tmp_path / "o.json", "cards_v5.onnx", EDGE, 3)
    with pytest.raises(SystemExit):
        recheck_main([str(model), str(other)])
    err = capsys.readouterr().err
    assert "o.json: no rows named 'cards_v7.onnx'" in err and "'cards_v5.onnx'" in err
    calibrated = _sweep(tmp_path / "c.json", DEFAULT_MODEL.name, EDGE, 3, calibrated=True)
    with pytest.raises(SystemExit):
        recheck_main([str(model), str(calibrated)])
    assert "a calibrated sweep" in capsys.readouterr().err
    bare = tmp_path / "bare" / "r.onnx"
    bare.parent.mkdir()
    bare.write_bytes(b"")
    with pytest.raises(SystemExit):
        recheck_main([str(bare), str(other)])
    assert "no metadata" in capsys.readouterr().err
    # rows by width (vision.sweep's one row of a reader's steps) are no flat thresholds
    by_width = _sweep(tmp_path / "w.json", DEFAULT_MODEL.name + " by width", EDGE, 3)
    data = json.loads(by_width.read_text())
    (row,) = [r for r in data["models"][DEFAULT_MODEL.name + " by width"]
              if r["threshold"] == 0.997]
    data["models"] = {DEFAULT_MODEL.name + " by width": [{**row, "threshold": [[0, 0.997]]}]}
    by_width.write_text(json.dumps(data))
    with pytest.raises(SystemExit):
        recheck_main([str(model), str(by_width), "--rows", DEFAULT_MODEL.name + " by width"])
    assert "a threshold by width" in capsys.readouterr().err
    # a sweep file that is not there, or not JSON: said so, with its path, not a traceback
    (tmp_path / "cut.json").write_text('{"models": {')
    for bad in (tmp_path / "missing.json", tmp_path / "cut.json"):
        with pytest.raises(SystemExit):
            recheck_main([str(model), str(bad)])
        assert f"{bad}: not a readable sweep result" in capsys.readouterr().err


def test_later_sweeps_are_added_onto_the_recorded_re_check(
        model: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A first sweep keeps 0.997 and is recorded; a second, added onto the record (its file
    of the first no longer needed), pools to a bound over the rule at 0.997: raised to
    0.998, both sweeps recorded. The same seed again, or no record, is refused."""
    first = _sweep(tmp_path / "a.json", OWN, {**EDGE, 0.997: 50}, 911)
    assert recheck_main([str(model), str(first), "--rows", OWN, "--write"]) == 0
    meta = json.loads(model.with_suffix(".json").read_text())
    assert meta["threshold"] == 0.997 and meta["threshold_recheck"]["verdict"] == "holds"
    first.unlink()
    second = _sweep(tmp_path / "b.json", OWN, {**EDGE, 0.997: 94}, 919)
    assert recheck_main([str(model), str(second), "--rows", OWN, "--onto-record",
                         "--write"]) == 0
    meta = json.loads(model.with_suffix(".json").read_text())
    record = meta["threshold_recheck"]
    assert meta["threshold"] == 0.998 and record["verdict"] == "raised"
    assert [s["seed"] for s in record["sweeps"]] == [911, 919]
    pooled = {r["threshold"]: r for r in record["pooled"]}
    assert (pooled[0.997]["misread"], pooled[0.997]["reported"]) == (144, 160_000)
    assert pooled[0.997]["frames"] == 20_000 and min(pooled) == 0.99
    assert "144 /  160000" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        recheck_main([str(model), str(second), "--rows", OWN, "--onto-record"])
    assert "seed 919 is in the recorded re-check already" in capsys.readouterr().err
    meta.pop("threshold_recheck")
    model.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(SystemExit):
        recheck_main([str(model), str(second), "--rows", OWN, "--onto-record"])
    assert "no recorded re-check" in capsys.readouterr().err
