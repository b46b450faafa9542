"""vision.conditions: a badly set camera, for the benchmark and for training scenes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.conditions import CASTS, RANDOM_KINDS, changed, random_condition


def test_random_conditions_draw_every_kind_within_its_range() -> None:
    rng = np.random.default_rng(11)
    drawn = [random_condition(rng) for _ in range(700)]
    kinds = {c.partition(":")[0] for c in drawn}
    assert kinds == set(RANDOM_KINDS)
    for c in drawn:
        kind, _, arg = c.partition(":")
        if kind == "cast":
            f = [float(v) for v in arg.split(",")]
            assert max(f) == 1.0 and min(f) >= 0.55 / 1.0 - 1e-3
        elif kind == "jpeg":
            assert 12 <= int(arg) <= 35
        elif kind == "gamma":
            assert 0.55 <= float(arg) <= 0.8 or 1.3 <= float(arg) <= 1.7
        else:
            lo, hi = {"exposure": (1.15, 1.9), "haze": (0.15, 0.55), "noise": (7, 14),
                      "soft": (0.55, 0.8)}[kind]
            assert lo <= float(arg) <= hi
    # the same seed draws the same conditions
    again = np.random.default_rng(11)
    assert [random_condition(again) for _ in range(700)] == drawn


def test_every_condition_changes_a_frame_as_named() -> None:
    img = np.random.default_rng(0).integers(40, 200, (48, 64, 3)).astype(np.uint8)
    assert changed(img, "none") is img
    assert changed(img, "cast:tungsten").tolist() == changed(
        img, "cast:" + ",".join(map(str, CASTS["tungsten"]))).tolist()
    dark = changed(img, "gamma:1.6").astype(int)
    assert (dark <= img.astype(int)).all() and (dark < img).mean() > 0.9
    hazy = changed(img, "haze:0.5")
    assert hazy.min() > img.min() and hazy.std() < img.std()
    assert changed(img, "rotate:90").shape == (64, 48, 3)
    assert changed(img, "soft:0.6").shape == img.shape
    assert np.abs(changed(img, "jpeg:15").astype(int) - img).mean() > 1
    # noise is the benchmark's fixed field unless a generator is given
    assert (changed(img, "noise:9") == changed(img, "noise:9")).all()
    assert (changed(img, "noise:9", np.random.default_rng(5)) != changed(img, "noise:9")).any()
    for bad in ("cast:purple", "cast:1,2", "blur:3", "rotate:45"):
        with pytest.raises(ValueError):
            changed(img, bad)


def test_a_camera_share_changes_training_scenes_and_none_draws_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At ``camera_share`` 0 no condition and no number is drawn for it, so the data of every
    earlier command are remade exactly (this session's tree and the one before it made the
    same crops for this call, checked once by hand); at 1 every scene is seen through a
    drawn condition, and the condition is applied before the proposals and crops."""
    import vision.train as train

    mix = dict(ttf_share=0.8, extra_fonts=True, hold_out_fonts=True)
    seen: list[str] = []

    def recording(rng: np.random.Generator) -> str:
        seen.append(random_condition(rng))
        return seen[-1]

    monkeypatch.setattr(train, "random_condition", recording)
    files = {}
    for share in (0.0, 1.0):
        out = tmp_path / f"share{share}.npz"
        train.generate(2, 5, out, train.DesignMix(**mix, camera_share=share))
        files[share] = np.load(out)
        assert len(seen) == (0 if share == 0 else 2)
    a, b = files[0.0]["x"], files[1.0]["x"]
    assert a.shape != b.shape or (a != b).any()
