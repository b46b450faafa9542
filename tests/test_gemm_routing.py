"""The reader's convolutions moved to onnxruntime's QGEMM path compute the same model.

`vision.kernels.gemm_routed` rewrites the int8 weights of the deeper convolutions (``w - 1``
with zero point -1) through `vision.onnxwire`, a reader of ONNX's protobuf wire format, so
that onnxruntime runs them on QGEMM (AMX tiles where the CPU has them) instead of its
symmetric kernels. These tests run on any CPU: the QGEMM path exists everywhere, only its
speed differs.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from vision import kernels, onnxwire
from vision.kernels import gemm_pays, gemm_routed, probe_crops
from vision.recognize import DEFAULT_MODEL, session_options
from vision.selfcheck import identity

MODEL = Path(DEFAULT_MODEL)


def _open(source: str | bytes) -> ort.InferenceSession:
    """A session as `vision.recognize` opens one: exact integer kernels asked for on x86 CPUs
    without VNNI, whose fast ones saturate (each path its own way)."""
    return ort.InferenceSession(source, session_options(1), providers=["CPUExecutionProvider"])


def _dequantised_conv_weights(model: bytes) -> dict[str, np.ndarray]:
    """Each convolution's weight as its ``DequantizeLinear`` makes it (``w - zero point``,
    per output channel, before the scale), by the node's output name."""
    nodes, inits = onnxwire.graph(model)
    dq = {n.outputs[0]: n for n in nodes if n.op_type == "DequantizeLinear"}
    out = {}
    for node in nodes:
        if node.op_type == "Conv":
            w_name, s_name, z_name = dq[node.inputs[1]].inputs
            w = onnxwire.int8_values(model, inits[w_name]).astype(np.int16)
            z = onnxwire.int8_values(model, inits[z_name]).astype(np.int16)
            out[node.inputs[1]] = w.reshape(inits[w_name].dims) - z.reshape(-1, 1, 1, 1)
    return out


def test_the_wire_reader_sees_the_readers_graph() -> None:
    data = MODEL.read_bytes()
    nodes, inits = onnxwire.graph(data)
    assert [n.op_type for n in nodes].count("Conv") == 5
    convs = [n for n in nodes if n.op_type == "Conv"]
    assert convs[0].inputs[0] == "crops_DequantizeLinear_Output"
    weights = _dequantised_conv_weights(data)
    # the first convolution: 32 filters over the crop's 4 channels (3 and a pad), 3 x 3
    assert weights[convs[0].inputs[1]].shape == (32, 4, 3, 3)
    assert [w.shape[1] * 9 for w in weights.values()] == [36, 288, 576, 576, 1152]
    # symmetric int8 weights as vision.quantize writes them (the typed int32_data zero points)
    assert all(np.abs(w).max() <= 127 for w in weights.values())
    zero_points = [i for name, i in inits.items() if name.endswith("_zero_point")
                   and i.data_type == onnxwire.INT8]
    assert zero_points and all(i.raw is None for i in zero_points)


def test_moved_convolutions_keep_their_dequantised_weights_and_outputs() -> None:
    data = MODEL.read_bytes()
    routed, moved = gemm_routed(data)
    assert moved == 4  # every convolution but the first (depth 36 < 64)
    before, after = _dequantised_conv_weights(data), _dequantised_conv_weights(routed)
    assert before.keys() == after.keys()
    for name in before:
        assert np.array_equal(before[name], after[name]), name
    # the routed model's zero points are -1 now, the first convolution's still 0
    _, inits = onnxwire.graph(routed)
    shifted = [n for n, i in inits.items() if n.endswith("_zero_point")
               and i.data_type == onnxwire.INT8
               and (onnxwire.int8_values(routed, i) == -1).all()]
    assert len(shifted) == 4 and not any("Conv_58" in n for n in shifted)
    # a second pass finds nothing symmetric left to move
    assert gemm_routed(routed) == (routed, 0)
    # the same logits, to the bit, on any CPU (exact integer sums either way)
    crops = probe_crops((3, 36, 28), 64)
    want = _open(str(MODEL)).run(None, {"crops": crops})[0]
    got = _open(routed).run(None, {"crops": crops})[0]
    assert np.array_equal(got, want)
    # a lower depth moves the first convolution as well: still the same logits
    deeper, all_moved = gemm_routed(data, min_depth=1)
    assert all_moved == 5
    assert np.array_equal(_open(deeper).run(None, {"crops": crops})[0], want)


def test_a_float_model_has_nothing_to_move() -> None:
    gate = MODEL.with_name("gate_v2.onnx").read_bytes()
    assert gemm_routed(gate) == (gate, 0)


def test_bad_bytes_are_refused_with_a_clear_error() -> None:
    data = MODEL.read_bytes()
    with pytest.raises(onnxwire.WireError):
        onnxwire.graph(data[: len(data) // 2])
    with pytest.raises(onnxwire.WireError, match="one graph"):
        onnxwire.graph(b"\x08\x07")  # a ModelProto holding only ir_version
    with pytest.raises(onnxwire.WireError, match="no initializer named 'nope'"):
        onnxwire.with_raw_data(data, {"nope": b"\x00"})
    _, inits = onnxwire.graph(data)
    with pytest.raises(onnxwire.WireError, match="not an int8"):
        onnxwire.int8_values(data, inits["crops_scale"])
    # values kept elsewhere (an external data file): not as many as the dimensions hold
    bare = onnxwire.Initializer("w", onnxwire.INT8, (32, 4, 3, 3), None, (0, 0))
    with pytest.raises(onnxwire.WireError, match="0 values for dimensions"):
        onnxwire.int8_values(data, bare)


def test_a_model_the_wire_reader_refuses_is_read_as_it_is(tmp_path, monkeypatch) -> None:
    """Where the rewrite cannot parse a model, the recogniser opens the file as it is."""
    from vision import recognize

    def refuse(model: bytes, min_depth: int = 64) -> tuple[bytes, int]:
        raise onnxwire.WireError("not parsed")

    monkeypatch.setattr(recognize, "routes_convs_to_gemm", lambda: True)
    monkeypatch.setattr(recognize, "gemm_routed", refuse)
    monkeypatch.setattr(recognize, "_gemm_choice", {})
    session = recognize._session(MODEL, 1)
    assert session.get_inputs()[0].name == "crops"
    assert recognize.on_qgemm(MODEL) is False


def test_typed_int32_values_are_read_with_their_sign() -> None:
    # a TensorProto: dims [3], data_type INT8, int32_data packed [-1, 5, -128], name "t"
    values = b"".join(onnxwire._encode_varint(v % (1 << 64)) for v in (-1, 5, -128))
    tensor = (b"\x08\x03" + b"\x10\x03" + b"\x2a" + bytes([len(values)]) + values
              + b"\x42\x01t")
    init = onnxwire._initializer(tensor, 0, len(tensor))
    assert (init.name, init.dims, init.raw) == ("t", (3,), None)
    assert onnxwire.int8_values(tensor, init).tolist() == [-1, 5, -128]


class _Sleeper:
    """Something with a session's ``run`` and inputs that takes a set time."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def get_inputs(self) -> list:
        class _Input:
            name, shape = "crops", ["n", 3, 36, 28]
        return [_Input()]

    def run(self, _outputs: object, _feed: object) -> None:
        time.sleep(self.seconds)


def test_the_routed_session_is_kept_only_where_it_measures_faster() -> None:
    assert gemm_pays(_Sleeper(0.004), _Sleeper(0.001)) is True
    assert gemm_pays(_Sleeper(0.001), _Sleeper(0.004)) is False


def test_the_recogniser_reads_the_same_on_either_path(monkeypatch) -> None:
    """The samples read alike whether the reader's session is the file's or the routed one,
    forced here on any CPU (on one without AMX the routed path is merely slower)."""
    from vision import recognize

    images = sorted(Path(__file__).resolve().parent.parent.glob("sample_images/*.jpg"))[:3]
    reads = []
    for routed in (False, True):
        monkeypatch.setattr(recognize, "routes_convs_to_gemm", lambda: True)
        monkeypatch.setattr(recognize, "_gemm_choice",
                            {recognize.model_key(MODEL): routed})
        monkeypatch.setattr(kernels, "_checked", {})  # check each session anew
        rec = recognize.Recognizer(MODEL)
        # what the table records when its camera starts says which kernels read
        assert identity(rec)["model_on_qgemm"] is routed
        out = [rec.recognize(recognize.load_image(p)) for p in images]
        for result in out:
            result.pop("elapsed_ms", None)
        reads.append(out)
    assert reads[0] == reads[1]
    assert sum(len(r["cards"]) for r in reads[0]) > 5
