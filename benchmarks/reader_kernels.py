"""The reader's int8 kernels on this CPU: exact or saturating, and what exactness costs.

    python benchmarks/reader_kernels.py [--model models/cards_v5.onnx] [--crops 110] [--reps 30]

Prints whether the CPU has VNNI (``/proc/cpuinfo``), then for the reader as
`vision.recognize` opens it (exact kernels: ``session.x64quantprecision``) and as onnxruntime
opens it by default: the median ms for ``--crops`` probe crops in one batch (about a 720p
frame's reader crops) on one thread, and how far each lies from the model's graph run node by
node (`vision.kernels.disagreement`, in steps of the logits' quantisation). On a CPU with VNNI
the two sessions are one and the same; on an x86 CPU without it the default saturates (many
steps off) and the exact one pays for its 16-bit arithmetic (twenty-third session, an AMD EPYC
with AVX2: 54 ms default, 75 ms exact for 110 crops). A third row: the same model with its
deeper convolutions moved to onnxruntime's QGEMM path (`vision.kernels.gemm_routed`), which
uses AMX tiles where the CPU has them; the line before the rows says whether
`vision.recognize` keeps that session here (on an AMX CPU, where it measures faster).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from vision.kernels import (
    cpu_flags,
    disagreement,
    gemm_routed,
    graph_session,
    needs_exact_kernels,
    probe_crops,
)
from vision.recognize import DEFAULT_MODEL, _session, on_qgemm, session_options


def _default(model: Path) -> ort.InferenceSession:
    """``model`` as onnxruntime opens it without being asked anything but one thread."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=Path(DEFAULT_MODEL))
    ap.add_argument("--crops", type=int, default=110)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    flags = cpu_flags()
    vnni = sorted(f for f in flags if "vnni" in f or f == "amx_int8")
    print(f"onnxruntime {ort.__version__}; CPU flags: avx2={'avx2' in flags} "
          f"avx512bw={'avx512bw' in flags} vnni={','.join(vnni) or 'none'}; "
          f"vision.recognize asks for exact kernels: {needs_exact_kernels(flags)}")
    sessions = {
        "as vision.recognize opens it": _session(args.model, 1),
        "onnxruntime's default": _default(args.model),
    }
    routed, moved = gemm_routed(args.model.read_bytes())
    if moved:  # the same model, its deeper convolutions on QGEMM (AMX where there is one)
        sessions[f"{moved} convolutions moved to QGEMM"] = ort.InferenceSession(
            routed, session_options(1), providers=["CPUExecutionProvider"])
        print(f"vision.recognize keeps the QGEMM session: {on_qgemm(args.model)}")
    graph = graph_session(args.model)
    name = sessions["onnxruntime's default"].get_inputs()[0].name
    shape = tuple(int(d) for d in graph.get_inputs()[0].shape[1:])
    crops = probe_crops(shape, args.crops)
    want = graph.run(None, {name: crops})[0]
    times: dict[str, list[float]] = {k: [] for k in sessions}
    for _ in range(args.reps):
        for key, sess in sessions.items():  # interleaved: both see the same load
            t0 = time.perf_counter()
            sess.run(None, {name: crops})
            times[key].append((time.perf_counter() - t0) * 1e3)
    for key, sess in sessions.items():
        steps = disagreement(sess.run(None, {name: crops})[0], want)
        print(f"{key:40s} {np.median(times[key]):7.1f} ms / {args.crops} crops "
              f"({np.median(times[key]) / args.crops:.3f} a crop), {steps:.1f} steps "
              "from the graph")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
