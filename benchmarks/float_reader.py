"""Measured, not adopted (fifty-fourth session): an int8 reader run in float32 on its integer
codes, exact on any CPU, against onnxruntime's exact integer kernels.

    python benchmarks/float_reader.py [--model models/cards_v7.onnx] [--crops-from DIR]

On an x86 CPU without VNNI the reader needs onnxruntime's exact U8U8 kernels
(:mod:`vision.kernels`). Another exact path: each convolution and matrix product of the
reader's QDQ graph run in float on the integer codes themselves (uint8 activations less
their zero point, int8 weights, int32 biases, all as float32), then requantised as
onnxruntime's QLinearConv does (times ``x_scale * w_scale / y_scale`` in float32, rounded half
to even, plus the zero point, clipped to 0..255). Sums of integers in float32 are exact in any
order while every partial sum stays under 2**24: the script bounds each layer (255 times a
filter's sum of absolute weights, plus its bias) and refuses a reader over it. onnxruntime's
``ConvMulFusion`` is turned off (it would fold the scale into the weights).

Prints each layer's bound, how many logits differ from the exact session's on the probe crops
(and on every reader crop of the frames of ``--crops-from``, read as ``recognize`` reads
them), and both sessions' median time for 110 crops, alternating, on one pinned core.
Measured in ``models/cards_v7.md`` (fifty-fourth session, AMD EPYC with AVX2 only): 0 of
the logits of 18,126 ``valb`` crops differ; 98.1 ms against 63.9 (1.56 times slower).
Needs ``onnx`` (the ``train`` extra).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from vision.kernels import pin_to_one_core, probe_crops  # noqa: E402

#: float32 holds every integer below this exactly.
EXACT_BELOW = 2**24


def float_reader(model_path: Path):  # noqa: ANN201 - an onnx.ModelProto
    """The reader at ``model_path`` as a float graph on its integer codes (see the module's
    docstring). Knows the QDQ form :mod:`vision.quantize` writes: per-channel symmetric
    weights, activations quantised after every convolution, matrix product and pooling."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(model_path))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    nodes: list = []
    new_inits: list = []
    made = itertools.count()
    outputs = {o.name for o in model.graph.output}

    def const(value: np.ndarray | float) -> str:
        name = f"k{next(made)}"
        new_inits.append(numpy_helper.from_array(np.asarray(value, np.float32), name))
        return name

    def emit(op: str, inputs: list[str], **attrs: object) -> str:
        out = f"t{next(made)}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    copied: set[str] = set()

    def as_written(node) -> None:  # noqa: ANN001 - an onnx.NodeProto
        nodes.append(node)
        for name in node.input:
            if name in inits and name not in copied:
                copied.add(name)
                new_inits.append(numpy_helper.from_array(inits[name], name))

    def scalar(name: str) -> float:
        return float(np.asarray(inits[name]).ravel()[0])

    codes: dict[str, tuple[str, str, str]] = {}  # uint8 tensor -> (its codes less zp, scale, zp)
    dequant: dict[str, str] = {}   # a dequantised activation -> the uint8 tensor it came from
    weights: dict[str, tuple[str, str, str]] = {}  # a dequantised initialiser -> (q, scale, zp)
    pending: dict[str, tuple[str, np.ndarray]] = {}  # a float result -> (codes, scale x in)
    passed: dict[str, str] = {}  # a pooled or flattened activation -> its codes
    bounds: list[tuple[str, int]] = []
    for node in model.graph.node:
        ins, out = list(node.input), node.output[0]
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "DequantizeLinear" and ins[0] in inits:
            weights[out] = (ins[0], ins[1], ins[2])
        elif node.op_type == "DequantizeLinear" and out in outputs:
            nodes.append(helper.make_node("Mul", [codes[ins[0]][0], const(scalar(ins[1]))],
                                          [out]))
        elif node.op_type == "DequantizeLinear":
            dequant[out] = ins[0]
        elif node.op_type == "QuantizeLinear" and ins[0] in pending:
            acc, scale_in = pending.pop(ins[0])
            sy, zy = scalar(ins[1]), scalar(ins[2])
            mult = (scale_in / np.float32(sy)).astype(np.float32)
            shape = (1, -1, 1, 1) if len(mult) > 1 and acc.startswith("conv:") else (1, -1)
            v = emit("Round", [emit("Mul", [acc.split(":", 1)[1], const(mult.reshape(shape))])])
            if zy:
                v = emit("Add", [v, const(zy)])
            v = emit("Clip", [v, const(0.0), const(255.0)])
            codes[out] = (emit("Sub", [v, const(zy)]) if zy else v, ins[1], ins[2])
        elif node.op_type == "QuantizeLinear" and ins[0] in passed:
            codes[out] = (passed.pop(ins[0]), ins[1], ins[2])
        elif node.op_type == "QuantizeLinear":  # the crops' own quantisation, kept as written
            as_written(node)
            v = emit("Cast", [out], to=TensorProto.FLOAT)
            zp = scalar(ins[2])
            codes[out] = (emit("Sub", [v, const(zp)]) if zp else v, ins[1], ins[2])
        elif node.op_type in ("Conv", "Gemm"):
            x_codes, x_scale, x_zp = codes[dequant[ins[0]]]
            w_q, w_scale, w_zp = weights[ins[1]]
            b_q = weights[ins[2]][0]
            if np.any(inits[w_zp]) or np.any(inits[weights[ins[2]][2]]):
                raise SystemExit(f"{node.name}: weights with a zero point: not this reader's form")
            w, b = inits[w_q].astype(np.int64), inits[b_q].astype(np.int64)
            x_max = int(max(255 - scalar(x_zp), scalar(x_zp)))
            bound = int((np.abs(w).reshape(len(w), -1).sum(1) * x_max + np.abs(b)).max())
            bounds.append((node.name or out, bound))
            acc = emit(node.op_type, [x_codes, const(inits[w_q]), const(inits[b_q])], **attrs)
            # onnxruntime's requantisation scale: x_scale * w_scale in float32, then / y_scale
            pending[out] = (("conv:" if node.op_type == "Conv" else "gemm:") + acc,
                            (np.float32(scalar(x_scale))
                             * inits[w_scale].astype(np.float32)).astype(np.float32))
        elif node.op_type in ("MaxPool", "Flatten"):
            passed[out] = emit(node.op_type, [codes[dequant[ins[0]]][0]], **attrs)
        elif not codes:  # the padding before the first quantisation: as written
            as_written(node)
        else:
            raise SystemExit(f"{node.op_type} after the quantisation: not this reader's form")
    for name, bound in bounds:
        print(f"  {name}: partial sums within {bound:,} (exact below {EXACT_BELOW:,})")
    if max(b for _, b in bounds) >= EXACT_BELOW:
        raise SystemExit("a layer's sums may pass 2**24: float32 would round them")
    graph = helper.make_graph(nodes, "float_reader", list(model.graph.input),
                              list(model.graph.output), new_inits)
    out_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    out_model.ir_version = model.ir_version
    onnx.checker.check_model(out_model)
    return out_model


def frame_crops(directory: Path, model: Path) -> np.ndarray:
    """Every crop the reader is given while ``recognize`` reads the labelled frames of
    ``directory``."""
    from vision.evaluate import labelled_images
    from vision.recognize import Recognizer, load_image

    rec = Recognizer(model, threads=1)
    seen: list[np.ndarray] = []
    run = rec.session.run

    def keep(outputs, feeds, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        seen.append(next(iter(feeds.values())).copy())
        return run(outputs, feeds, *args, **kwargs)

    rec.session.run = keep
    for img, _ in labelled_images(directory):
        rec.recognize(load_image(img))
    return np.concatenate(seen)


def main(argv: list[str] | None = None) -> int:
    import onnxruntime as ort

    from vision.recognize import DEFAULT_MODEL, session_options

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--crops-from", type=Path, help="a labelled directory of frames")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args(argv)
    pin_to_one_core()
    print(f"{args.model}:")
    floats = float_reader(args.model).SerializeToString()
    exact = ort.InferenceSession(str(args.model), session_options(1),
                                 providers=["CPUExecutionProvider"])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    in_float = ort.InferenceSession(floats, opts, providers=["CPUExecutionProvider"],
                                    disabled_optimizers=["ConvMulFusion"])
    name = exact.get_inputs()[0].name
    shape = tuple(int(d) for d in exact.get_inputs()[0].shape[1:])
    sets = {"probe crops": probe_crops(shape, 256)}
    if args.crops_from:
        sets[f"reader crops of {args.crops_from}"] = frame_crops(args.crops_from, args.model)
    for label, crops in sets.items():
        differ = sum(int((exact.run(None, {name: crops[i:i + 128]})[0]
                          != in_float.run(None, {name: crops[i:i + 128]})[0]).sum())
                     for i in range(0, len(crops), 128))
        print(f"{label}: {len(crops)}, logits differing from the exact session: {differ}")
    batch = sets["probe crops"][:110]
    took: dict[str, list[float]] = {"exact integer kernels": [], "float on the codes": []}
    for _ in range(args.runs + 1):
        for times, session in zip(took.values(), (exact, in_float), strict=True):
            t0 = time.perf_counter()
            session.run(None, {name: batch})
            times.append(time.perf_counter() - t0)
    for label, times in took.items():
        print(f"{label}: {1000 * float(np.median(times[1:])):.1f} ms for 110 crops (median)")
    ratio = np.median(np.array(took["float on the codes"][1:])
                      / np.array(took["exact integer kernels"][1:]))
    print(f"ratio (float / exact), paired: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
