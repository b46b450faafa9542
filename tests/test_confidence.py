"""The card-confidence model (vision.confidence) and its use in the merge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from vision.confidence import FEATURES, CardConfidence, fit, frame_cards
from vision.recognize import DEFAULT_MODEL, Recognizer, load_image

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def _model_with(tmp_path: Path, confidence: dict | None) -> Path:
    """A copy of the bundled reader and gate whose .json carries ``confidence``."""
    for f in DEFAULT_MODEL.parent.iterdir():
        if f.suffix == ".onnx":
            shutil.copy(f, tmp_path / f.name)
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    meta.pop("card_confidence", None)
    if confidence is not None:
        meta["card_confidence"] = confidence
    (tmp_path / DEFAULT_MODEL.with_suffix(".json").name).write_text(json.dumps(meta))
    return tmp_path / DEFAULT_MODEL.name


def _sample_frames(n: int = 6) -> list[tuple[np.ndarray, dict]]:
    images = sorted(SAMPLES.glob("*.jpg"))[:n]
    return [(load_image(p), json.loads(p.with_suffix(".json").read_text())) for p in images]


def test_fit_ranks_cards_by_the_evidence_that_separates_misreads() -> None:
    """Misreads that follow the runner-up's probability, not the score: the fitted model puts
    its weight there, with the sign that makes a strong runner-up a doubt."""
    rng = np.random.default_rng(3)
    n = 6000
    x = np.c_[rng.normal(6, 2, n), np.log(rng.integers(1, 6, n)), rng.normal(-6, 2, n)]
    wrong = (rng.random(n) < 1 / (1 + np.exp(-(x[:, 2] + 4)))).astype(float)
    model = fit(x, wrong)
    assert model.weights[2] < -0.7 and abs(model.weights[0]) < 0.2, model
    right = [model(0.999, 1, 0.0001), model(0.999, 1, 0.05)]
    assert right[0] > 0.99 > right[1]


def test_a_model_of_other_features_or_floor_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="features"):
        CardConfidence.from_meta({"features": ["score_logit"], "intercept": 0, "weights": [1]})
    bad = {**CardConfidence(0.0, (1.0, 0.0, 0.0)).to_meta(), "floor": 1.2}
    with pytest.raises(ValueError, match="floor"):
        Recognizer(_model_with(tmp_path, bad))


def test_the_score_alone_as_confidence_reads_as_without_a_model(tmp_path) -> None:
    """At 0.99 the pair floor is the model's floor (0.9), so a model that returns the score
    itself must give the very same result, card for card."""
    plain = Recognizer(threshold=0.99)
    plain.confidence = None
    same = Recognizer(_model_with(tmp_path, CardConfidence(0.0, (1.0, 0.0, 0.0)).to_meta()),
                      threshold=0.99)
    for img, _ in _sample_frames():
        reads = plain.read(img)
        assert same.merge(reads) == plain.merge(reads)


def test_cards_the_model_doubts_are_reported_unreadable_not_dropped(tmp_path) -> None:
    """A model that doubts every card reports none, and every card that was reported becomes
    an unreadable report at its place."""
    plain = Recognizer(threshold=0.99)
    plain.confidence = None
    doubting = Recognizer(_model_with(tmp_path, CardConfidence(-50.0, (1.0, 0.0, 0.0))
                                      .to_meta()), threshold=0.99)
    seen = 0
    for img, _ in _sample_frames():
        reads = plain.read(img)
        before, after = plain.merge(reads), doubting.merge(reads)
        assert after["cards"] == []
        spots = np.array([u["center"] for u in after["unreadable"]]).reshape(-1, 2)
        for card in before["cards"]:
            seen += 1
            gaps = np.linalg.norm(spots - np.array(card["center"]), axis=1)
            assert len(gaps) and gaps.min() < 60, card
    assert seen >= 10


def test_frame_cards_labels_right_reads_and_misreads(tmp_path) -> None:
    """On labelled sample frames every card formed at the floor is matched to its label: the
    features are finite and the truth is right (0) for nearly all and misread (1) otherwise."""
    rec = Recognizer()
    xs, ys = [], []
    for img, labels in _sample_frames():
        x, y = frame_cards(rec, rec.read(img), labels)
        xs.append(x)
        ys.append(y)
    x, y = np.concatenate(xs), np.concatenate(ys)
    assert x.shape == (len(y), len(FEATURES)) and len(y) >= 10
    assert np.isfinite(x).all() and set(np.unique(y)) <= {0, 1}
    assert (y == 0).mean() > 0.9
    # a card read by several candidates has log_reads > 0; a sure one a very low runner-up
    assert (x[:, 1] > 0).any() and (x[:, 2] < -5).any()
