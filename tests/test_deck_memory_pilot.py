"""benchmarks/deck_memory_pilot.py: a deck's sure reads as a second opinion (a pilot)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from vision.recognize import Recognizer

# the reader's inner tensor is named an output with the onnx package, and the held-out decks'
# typefaces are drawn with Pillow: both of the ``train`` extra
pytest.importorskip("onnx")
pytest.importorskip("PIL")


def test_the_embeddings_come_from_the_reader_that_reads(bench_script) -> None:  # noqa: ANN001
    """The pilot's session reads as the recogniser's reader does, and its embedding is the
    256 activations named for the bundled model (a renamed tensor would fail here)."""
    mod = bench_script("deck_memory_pilot")
    crops = np.random.default_rng(3).integers(0, 256, (40, 3, 36, 28), np.uint8)
    probs, emb = mod.read(mod._session(mod.DEFAULT_MODEL, "fc"), crops)
    expected = Recognizer().classify(crops.astype(np.float32) / 255)
    np.testing.assert_allclose(probs, expected, atol=1e-5)
    assert emb.shape == (40, 256)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)


def test_a_deck_is_made_and_scored(tmp_path: Path, capsys, bench_script) -> None:  # noqa: ANN001
    """One held-out deck, two scenes of memory and two to test: the memory holds codes read
    surely, the reader alone (``lam`` 0) ranks the test crops as ``crop_ranking`` does, and
    the ranking with the memory is reported beside it."""
    mod = bench_script("deck_memory_pilot")
    assert mod.main(["make", str(tmp_path), "--scenes", "2", "--decks", "1",
                     "--workers", "1"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00_mem.npz", "00_test.npz"]
    capsys.readouterr()
    assert mod.main(["score", str(tmp_path), "--lam", "0", "5"]) == 0
    out = capsys.readouterr().out
    assert int(re.search(r"00_mem.npz: (\d+) codes in memory", out)[1]) > 5
    n = int(re.search(r"^(\d+) card-code crops read as a code", out, re.MULTILINE)[1])
    with np.load(tmp_path / "00_test.npz") as z:
        x, y = z["x"], z["y"]
    probs = Recognizer().classify(x.astype(np.float32) / 255)
    pred, conf = probs.argmax(1), probs.max(1)
    sel = (y < 52) & (pred < 52)
    assert n == int(sel.sum()) > 20
    alone = mod.right_before(-np.log(np.maximum(1 - conf[sel], 1e-7)), pred[sel] == y[sel],
                             mod.WRONG_COUNTS)
    assert f"lam 0: {alone}" in out
    assert re.search(r"^  lam 5: \{5: \d+", out, re.MULTILINE)


def test_an_empty_directory_is_refused_by_name(tmp_path: Path, bench_script) -> None:  # noqa: ANN001
    mod = bench_script("deck_memory_pilot")
    with pytest.raises(SystemExit, match="no \\*_mem.npz crop files"):
        mod.main(["score", str(tmp_path)])
