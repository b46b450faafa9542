"""Quantise a classifier to 8-bit integers (onnxruntime static quantisation, QDQ format).

    python -m vision.quantize FLOAT.onnx OUT.onnx --data CALIBRATION.npz [--samples 2000]
    python -m vision.quantize --pad-only INT8.onnx OUT.onnx

Weights are quantised per output channel (int8), activations per tensor (uint8) with ranges
measured on ``--samples`` crops drawn (seeded) from a calibration npz of `vision.train`'s
format. On one CPU thread the reader runs about 2.7 times faster, with the same accuracy on the
calibration crops (``models/cards_v3.md``). Needs the ``onnx`` package (the ``train`` extra);
the quantised model runs on onnxruntime alone.

The int8 model's first convolution is then given a fourth input channel of zeros with zero
weights (:func:`pad_first_conv`): onnxruntime's integer convolution runs a three-channel input
about twice as slowly as a four-channel one, and the extra channel adds exact zeros to the
integer sums, so the model's output is the same to the bit. ``--pad-only`` does this alone to
a model quantised before.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import numpy as np

#: The largest integer weight by the bits :func:`quantize` stores weights in, as onnxruntime's
#: symmetric int8 quantiser has them (``reduce_range``: -64..64 for 7 bits; -127..127 for 8).
WEIGHT_QMAX = {7: 64, 8: 127}


def quantize(src: Path, out: Path, data: Path, samples: int = 2000, seed: int = 0,
             pad: bool = True, reduce_range: bool = False) -> None:
    """Write the int8 version of ``src`` to ``out``, calibrated on crops from ``data``, its
    first convolution padded (:func:`pad_first_conv`) unless ``pad`` is false; with
    ``reduce_range`` its weights in 7 bits (within +-64), whose pairwise sums fit the 16-bit
    lanes of the fast U8S8 kernels of x86 CPUs without VNNI (:mod:`vision.kernels`)."""
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    x = np.load(data)["x"]
    pick = np.sort(np.random.default_rng(seed).choice(len(x), min(samples, len(x)),
                                                        replace=False))
    crops = x[pick].astype(np.float32) / 255.0

    class Batches(CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([{"crops": crops[i:i + 100]} for i in range(0, len(crops), 100)])

        def get_next(self) -> dict | None:
            return next(self.batches, None)

    with tempfile.TemporaryDirectory() as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        quant_pre_process(str(src), str(prepared))
        quantize_static(str(prepared), str(out), Batches(), quant_format=QuantFormat.QDQ,
                        per_channel=True, reduce_range=reduce_range,
                        activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
    if pad:
        pad_first_conv(out, out)


#: Input channels the first convolution is padded to (:func:`pad_first_conv`).
PADDED_CHANNELS = 4


def pad_first_conv(src: Path, out: Path) -> bool:
    """Write ``src`` to ``out`` with its input padded from 3 to :data:`PADDED_CHANNELS`
    channels (a ``Pad`` of zeros on the float input ``crops``) and the int8 kernel of the
    convolution reading it padded with zero weights; ``False`` (``out`` written unchanged)
    when the model is not a QDQ model whose input feeds a quantised convolution, or is
    padded already.

    Bit-identical: the padded input quantises to the zero point, so each extra product is
    ``(zero_point - zero_point) * 0`` in the integer sum. On one thread the first
    convolution takes about half the time, the whole reader 8-11 % less
    (``models/cards_v5.md``, twenty-second session)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}

    def reading(tensor: str, op: str):  # noqa: ANN202 - an onnx NodeProto or None
        return next((n for n in graph.node if n.op_type == op and n.input[0] == tensor), None)

    # crops -> QuantizeLinear -> DequantizeLinear -> Conv, whose kernel is a constant int8
    # tensor through a DequantizeLinear of its own
    quant = reading("crops", "QuantizeLinear")
    dequant = quant and reading(quant.output[0], "DequantizeLinear")
    conv = dequant and reading(dequant.output[0], "Conv")
    weight_dq = conv and next((n for n in graph.node if n.op_type == "DequantizeLinear"
                               and n.output[0] == conv.input[1] and n.input[0] in inits), None)
    kernel = numpy_helper.to_array(inits[weight_dq.input[0]]) if weight_dq else None
    if kernel is None or kernel.shape[1] >= PADDED_CHANNELS:
        if Path(out) != Path(src):
            shutil.copyfile(src, out)
        return False
    extra = PADDED_CHANNELS - kernel.shape[1]
    zeros = np.zeros((kernel.shape[0], extra, *kernel.shape[2:]), kernel.dtype)
    inits[weight_dq.input[0]].CopyFrom(numpy_helper.from_array(
        np.concatenate([kernel, zeros], 1), weight_dq.input[0]))
    graph.initializer.append(numpy_helper.from_array(
        np.array([0, 0, 0, 0, 0, extra, 0, 0], np.int64), "crops_channel_pads"))
    graph.node.insert(0, helper.make_node("Pad", ["crops", "crops_channel_pads"],
                                          ["crops_padded"], mode="constant"))
    quant.input[0] = "crops_padded"
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path, help="float ONNX model (int8 with --pad-only)")
    ap.add_argument("out", type=Path)
    ap.add_argument("--data", type=Path, help="npz of crops (x uint8)")
    ap.add_argument("--samples", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pad-only", action="store_true",
                    help="only pad an int8 model's first convolution (pad_first_conv)")
    ap.add_argument("--weight-bits", type=int, choices=sorted(WEIGHT_QMAX), default=8,
                    help="7: weights within +-64 (exact on the saturating U8S8 kernels)")
    args = ap.parse_args(argv)
    if args.pad_only:
        padded = pad_first_conv(args.model, args.out)
        print(f"wrote {args.out}" + ("" if padded else
                                     " unchanged (not int8, or padded already)"))
        return 0
    if args.data is None:
        ap.error("--data is needed to quantise")
    quantize(args.model, args.out, args.data, args.samples, args.seed,
             reduce_range=args.weight_bits == 7)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
