"""Weights trained on the 7-bit grid survive quantisation unchanged (vision.fakequant).

Needs the ``train`` extra (torch, onnx)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")


def test_grid_round_rounds_per_output_channel_and_passes_the_gradient() -> None:
    from vision.fakequant import grid_round

    w = torch.tensor([[0.64, 0.011, -0.3], [2.0, -1.0, 0.26]], requires_grad=True)
    q = grid_round(w, 64)
    steps = q.detach() / (w.detach().abs().amax(1, keepdim=True) / 64)
    assert torch.allclose(steps, torch.round(steps), atol=1e-4)  # on the grid, to rounding
    assert torch.round(steps).tolist() == [[64.0, 1.0, -30.0], [64.0, -32.0, 8.0]]
    assert grid_round(torch.tensor([[1.0, 0.3, -0.52]]), 2).tolist() == [[1.0, 0.5, -0.5]]
    q.sum().backward()
    assert torch.equal(w.grad, torch.ones_like(w))  # straight through


def test_weights_trained_on_the_grid_quantise_to_the_same_integers(tmp_path) -> None:
    """A model whose weights are put on the 7-bit grid and baked, exported and quantised with
    ``reduce_range``: every int8 weight within +-64, and the quantised weights are the
    exported float weights exactly (to float rounding), so nothing is rounded twice."""
    from copy import deepcopy

    from torch.nn.utils import parametrize

    from vision.crops import CROP_H, CROP_W
    from vision.fakequant import bake, fake_quantize_weights
    from vision.quantize import quantize
    from vision.train import build_model, export_onnx, onnx_weights

    torch.manual_seed(3)
    model = build_model("gate")
    assert fake_quantize_weights(model, 7) == 6  # four convolutions, two dense layers
    with pytest.raises(ValueError, match="weight bits"):
        fake_quantize_weights(build_model("gate"), 6)
    model.eval()
    baked = deepcopy(model)
    bake(baked)
    # the original (still training, in train_device) keeps its rounding; the copy computes
    # what it does, with plain weights
    assert parametrize.is_parametrized(model[0], "weight")
    assert not parametrize.is_parametrized(baked[0], "weight")
    x = torch.rand(2, 3, CROP_H, CROP_W)
    assert torch.allclose(baked(x), model(x), rtol=0, atol=1e-6)
    float_path, int8_path = tmp_path / "f.onnx", tmp_path / "q.onnx"
    export_onnx(baked, float_path)
    crops = np.random.default_rng(0).integers(0, 256, (200, 3, CROP_H, CROP_W), np.uint8)
    np.savez(tmp_path / "cal.npz", x=crops)
    quantize(float_path, int8_path, tmp_path / "cal.npz", samples=200, reduce_range=True)

    graph, dequantised = onnx_weights(int8_path)
    _, exported = onnx_weights(float_path)
    integers = {i.name: onnx.numpy_helper.to_array(i)
                for i in onnx.load(str(int8_path)).graph.initializer
                if i.data_type == onnx.TensorProto.INT8 and i.name.endswith("_quantized")}
    assert len(integers) == 6
    assert max(int(np.abs(w).max()) for w in integers.values()) == 64
    float_graph = onnx_weights(float_path)[0]
    layers = [n for n in float_graph.node if n.op_type in ("Conv", "Gemm")]
    quantised = [n for n in graph.node if n.op_type in ("Conv", "Gemm")]
    assert len(layers) == len(quantised) == 6
    for f_node, q_node in zip(layers, quantised, strict=True):
        want = np.asarray(exported[f_node.input[1]], np.float64)
        got = np.asarray(dequantised[q_node.input[1]], np.float64)
        got = got[:, :want.shape[1]] if got.ndim == 4 else got  # the padded input channel
        assert np.allclose(got, want, rtol=1e-5, atol=1e-9), f_node.name
