"""vision.soup: the mean of readers' weights, as a reader (needs torch: the train extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from vision.soup import main, soup  # noqa: E402
from vision.train import build_model, export_onnx, onnx_weights  # noqa: E402


def _readers(tmp_path: Path, seeds: tuple[int, ...]) -> list[Path]:
    paths = []
    for k in seeds:
        torch.manual_seed(k)
        model = build_model("gate")
        with torch.no_grad():  # BatchNorms that fold into something other than the identity
            for m in model.modules():
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.5, 0.5)
                    m.running_var.uniform_(0.5, 2.0)
                    m.weight.uniform_(0.5, 1.5)
        paths.append(tmp_path / f"m{k}.onnx")
        export_onnx(model, paths[-1])
    return paths


def test_every_weight_is_the_mean(tmp_path: Path) -> None:
    paths = _readers(tmp_path, (1, 3, 5))
    soup(paths, tmp_path / "s.onnx", "gate")
    weights = [onnx_weights(p)[1] for p in paths]
    mixed = onnx_weights(tmp_path / "s.onnx")[1]
    conv = [k for k, v in weights[0].items() if np.array(v).ndim == 4]
    assert len(conv) >= 4
    for name in weights[0]:
        want = np.mean([np.array(w[name]) for w in weights], axis=0)
        np.testing.assert_allclose(np.array(mixed[name]), want, atol=1e-5)
    # and not just one of them
    assert not np.allclose(np.array(mixed[conv[0]]), np.array(weights[0][conv[0]]))


def test_the_soup_of_one_reader_twice_reads_as_it(tmp_path: Path) -> None:
    import onnxruntime as ort

    (path,) = _readers(tmp_path, (7,))
    assert main([str(tmp_path / "s.onnx"), str(path), str(path), "--arch", "gate"]) == 0
    x = np.random.default_rng(0).integers(0, 256, (4, 3, 36, 28)).astype(np.float32)
    a, b = (ort.InferenceSession(str(p)).run(None, {"crops": x})[0]
            for p in (path, tmp_path / "s.onnx"))
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_one_reader_is_no_soup(tmp_path: Path) -> None:
    (path,) = _readers(tmp_path, (1,))
    with pytest.raises(ValueError, match="two readers"):
        soup([path], tmp_path / "s.onnx", "gate")


def test_the_command_refuses_missing_and_mismatched_readers(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    (path,) = _readers(tmp_path, (1,))
    with pytest.raises(SystemExit) as e:
        main([str(tmp_path / "s.onnx"), str(path), str(tmp_path / "nope.onnx"), "--arch", "gate"])
    assert e.value.code == 2 and "no such reader" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:  # a gate is not a wide reader
        main([str(tmp_path / "s.onnx"), str(path), str(path), "--arch", "reader_wide"])
    assert e.value.code == 2 and "do not match" in capsys.readouterr().err
    assert not (tmp_path / "s.onnx").exists()
