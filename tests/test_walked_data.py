"""Training crops at the places a reader's whole pipeline reads (``vision.train.generate``
with ``read_with``; ``train_device --read-with``)."""

from __future__ import annotations

import numpy as np
import pytest

from vision import handwalk
from vision.codes import CLASSES, REJECT_INDEX
from vision.recognize import DEFAULT_MODEL, Recognizer
from vision.settings import applied, split_reader
from vision.synth import random_deal, render_table
from vision.train import DesignMix, generate, label_frames


def _pick(rng: np.random.Generator) -> str:
    return f"proc:{int(rng.integers(0, 5))}:{int(rng.integers(0, 9))}"


def _expected_code_crops(seed: int, scenes: int, spec: str) -> tuple[int, int, int]:
    """Card-code places, labelled places and all places of the reader's reads in
    ``generate``'s scenes, drawn again here by the same generator (without the camera share,
    no draw)."""
    path, settings = split_reader(spec)
    reader = Recognizer(path)
    rng = np.random.default_rng(seed)
    codes = labelled = places = 0
    with applied(settings):
        for _ in range(scenes):
            design = _pick(rng)
            size = (1280, 720) if rng.random() < 0.7 else (1920, 1080)
            img, labels = render_table(random_deal(rng), rng, design=design, size=size)
            y = label_frames([r.frame for r in reader.read(img)], labels)
            places += len(y)
            codes += int(((y >= 0) & (y < 52)).sum())
            labelled += int((y >= 0).sum())
            rng.random(len(y))  # generate's draw of the rejects it keeps
    return codes, labelled, places


@pytest.mark.parametrize("spec", [str(DEFAULT_MODEL),
                                  f"{DEFAULT_MODEL}@handwalk.LONE_ANCHORS=True"])
def test_crops_are_the_places_the_reader_reads(tmp_path, spec) -> None:
    """Every card-code place the reader's pipeline reads in the scenes becomes a crop (the
    rejects are thinned, as for the proposals' crops); the settings are put back after."""
    out = tmp_path / "walked.npz"
    generate(2, 5, out, DesignMix(), pick=_pick, read_with=spec)
    assert handwalk.LONE_ANCHORS is False
    with np.load(out) as z:
        x, y = z["x"], z["y"]
    codes, labelled, _ = _expected_code_crops(5, 2, spec)
    assert codes > 10
    assert int((y < 52).sum()) == codes
    rejects = int((y == REJECT_INDEX).sum())
    assert 0 < rejects < labelled - codes
    assert x.dtype == np.uint8 and x.shape[0] == len(y) and y.max() < len(CLASSES)


def test_lone_anchors_add_places_the_proposals_do_not_make(tmp_path) -> None:
    """The reason for the option: a walk's places (here the lone anchors' grid) are places
    the pipeline without its extra walks does not read, and the proposals' crops of the
    plain data never hold: the same scenes read so are read at more places."""
    import json
    import shutil

    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    for name in (DEFAULT_MODEL.name, meta["gate"]):
        shutil.copy(DEFAULT_MODEL.parent / name, tmp_path / name)
    (tmp_path / DEFAULT_MODEL.with_suffix(".json").name).write_text(
        json.dumps({**meta, "extra_bar": 0}))
    model = tmp_path / DEFAULT_MODEL.name
    *_, plain = _expected_code_crops(5, 2, str(model))
    *_, walked = _expected_code_crops(5, 2, f"{model}@handwalk.LONE_ANCHORS=True")
    assert walked > plain


@pytest.mark.parametrize(("spec", "more", "says"), [
    ("nowhere.onnx", [], "no reader nowhere.onnx"),
    (f"{DEFAULT_MODEL}@handwalk.NOPE=1", [], "no setting"),
    (str(DEFAULT_MODEL), ["--use-existing"], "not with --use-existing")])
def test_device_training_refuses_a_bad_reader_before_rendering(tmp_path, capsys, spec, more,
                                                               says) -> None:
    """A missing reader, a bad setting, or a reader for chunks it would not render is named
    at once; no chunk is rendered."""
    from vision.train_device import main

    with pytest.raises(SystemExit) as exit_:
        main(["--work", str(tmp_path / "w"), "--scenes", "2", "--chunks", "1", "--data-only",
              "--read-with", spec, *more, "--out", str(tmp_path / "m.onnx")])
    assert exit_.value.code == 2 and says in capsys.readouterr().err
    assert not (tmp_path / "w").exists()
