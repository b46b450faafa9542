"""Check that onnxruntime's kernels on this CPU compute what a model's graph says.

An int8 model runs on integer kernels that differ by CPU. On x86 CPUs without VNNI, the fast
U8S8 kernels add products pairwise in saturating 16-bit lanes: ``cards_v5`` read with them
loses half the cards of the validation frames, with no error (``models/cards_v5.md``,
twenty-third session). `vision.recognize` asks onnxruntime for exact kernels there
(:func:`needs_exact_kernels`); this check makes sure of it, once per model file and process,
by running a few fixed probe crops through the session and through the same graph evaluated
node by node (no fusion, so every ``QuantizeLinear`` / ``DequantizeLinear`` runs as written
and convolutions run in float).

Exact integer sums and float sums of the same dequantised values may round an intermediate
value to the neighbouring step of its quantisation, which can move a logit by a step or so;
saturation moves them by many steps (about ten for ``cards_v5``).
"""

from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

import numpy as np

#: Probe crops per check: 8 already show cards_v5's saturation on an AVX2 CPU (logits 3-4
#: off); 16 cost about 40 ms node by node, once per model and process.
PROBE_CROPS = 16
#: Allowed difference, in steps of the logits' quantisation.
MAX_STEPS = 2.5
#: Differences within this share of the largest logit (at least 1e-3) are float rounding
#: (the float gate: 3e-6), not a step of anything.
FLOAT_TOLERANCE = 1e-3

_checked: dict[tuple[str, int, int], float] = {}


#: CPU flags (``/proc/cpuinfo``) under which onnxruntime's U8S8 kernels sum exactly: VNNI
#: (AVX-512 or AVX) multiply-adds into 32 bits, AMX tiles too.
EXACT_U8S8_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})
X86_MACHINES = frozenset({"x86_64", "amd64", "i386", "i486", "i586", "i686", "x86"})


@functools.cache
def _cpuinfo() -> dict[str, str]:
    """Each field of ``/proc/cpuinfo`` as it first appears (the first processor's), read once a
    process; empty where there is none (not Linux)."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def cpu_flags() -> frozenset[str]:
    """The processor's flags (x86) or features (ARM); empty where they cannot be read."""
    info = _cpuinfo()
    return frozenset((info.get("flags") or info.get("Features") or "").split())


def cpu_model() -> str:
    """The processor's name ("model name"), else what ``platform`` says."""
    return _cpuinfo().get("model name") or platform.processor() or platform.machine()


def needs_exact_kernels(flags: frozenset[str] | set[str] | None = None,
                        machine: str | None = None) -> bool:
    """Whether sessions must ask for onnxruntime's exact U8U8 kernels
    (``session.x64quantprecision``): on an x86 CPU without VNNI or AMX, and on an x86 CPU whose
    flags cannot be read. Not elsewhere: onnxruntime would rewrite the weights on a VNNI CPU
    too (its test is only whether the U8U8 and U8S8 kernel tables differ, as they do on every
    x86 CPU with AVX2) and so give up the faster VNNI kernels for the same sums; on ARM the
    option does nothing.

    >>> needs_exact_kernels({"avx2", "fma"}, "x86_64")
    True
    >>> needs_exact_kernels({"avx2", "avx512bw", "avx512_vnni"}, "x86_64")
    False
    >>> needs_exact_kernels(set(), "AMD64")
    True
    >>> needs_exact_kernels({"asimd", "asimddp"}, "aarch64")
    False
    """
    machine = (machine if machine is not None else platform.machine()).lower()
    if machine not in X86_MACHINES:
        return False
    flags = cpu_flags() if flags is None else flags
    return not flags & EXACT_U8S8_FLAGS


#: The CPU flag under which onnxruntime's QGEMM (an int8 convolution with a weight zero point
#: other than 0: im2col, then a matrix product) runs on AMX tiles (MLAS's U8S8 AMX kernels).
#: Its convolutions with zero point 0 ("symmetric", as `vision.quantize` writes them) run on
#: AVX-512 VNNI kernels of their own instead, AMX or not.
AMX_FLAG = "amx_int8"
#: Convolutions this deep (input channels x kernel height x width) or deeper are moved to the
#: QGEMM path where the CPU has AMX (:func:`gemm_routed`). Measured on an Intel Xeon with AMX
#: (forty-seventh session, ``cards_v7``, one thread): the first convolution (depth 36: four
#: channels, 3 x 3) takes 27 us a crop on the symmetric kernels and 39 on QGEMM; the four
#: deeper ones (288 to 1152) 104 us against 69; the reader 0.138 -> 0.100 ms a crop.
GEMM_CONV_MIN_DEPTH = 64


def routes_convs_to_gemm(flags: frozenset[str] | set[str] | None = None,
                         machine: str | None = None) -> bool:
    """Whether an int8 reader's deeper convolutions may be moved to onnxruntime's QGEMM path
    (:func:`gemm_routed`; :func:`gemm_pays` then decides): on an x86 CPU with AMX only.
    Elsewhere the symmetric kernels stay (QGEMM without AMX was slower than them where it was
    measured, on this CPU with AMX unused: see :func:`gemm_pays`).

    >>> routes_convs_to_gemm({"avx512_vnni", "amx_tile", "amx_int8"}, "x86_64")
    True
    >>> routes_convs_to_gemm({"avx512_vnni"}, "x86_64")
    False
    >>> routes_convs_to_gemm({"amx_int8"}, "aarch64")
    False
    """
    machine = (machine if machine is not None else platform.machine()).lower()
    flags = cpu_flags() if flags is None else flags
    return machine in X86_MACHINES and AMX_FLAG in flags


def gemm_routed(model: bytes, min_depth: int = GEMM_CONV_MIN_DEPTH) -> tuple[bytes, int]:
    """A copy of the serialised int8 ``model`` computing the same, whose convolutions of depth
    ``min_depth`` or more run on onnxruntime's QGEMM path; and how many were moved.

    A convolution's int8 weight ``w`` with zero point 0 (a ``DequantizeLinear`` before the
    ``Conv``) is stored as ``w - 1`` with zero point -1: the same dequantised weights and the
    same exact integer sums, but no longer "symmetric", which is what routes onnxruntime to
    QGEMM. Moved only where that is sure to be the same: the weight and its zero point each
    used by that one ``DequantizeLinear``, every zero point 0, every weight above -128.
    """
    from vision.onnxwire import INT8, graph, int8_values, with_raw_data

    nodes, inits = graph(model)
    uses: dict[str, int] = {}
    for node in nodes:
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1
    dequant = {node.outputs[0]: node for node in nodes
               if node.op_type == "DequantizeLinear" and len(node.inputs) == 3 and node.outputs}
    values: dict[str, bytes] = {}
    for node in nodes:
        if node.op_type != "Conv" or len(node.inputs) < 2 or node.inputs[1] not in dequant:
            continue
        w_name, _, z_name = dequant[node.inputs[1]].inputs
        w, z = inits.get(w_name), inits.get(z_name)
        if (w is None or z is None or len(w.dims) != 4
                or w.data_type != INT8 or z.data_type != INT8
                or uses.get(w_name) != 1 or uses.get(z_name) != 1
                or w.dims[1] * w.dims[2] * w.dims[3] < min_depth):
            continue
        weights, zeros = int8_values(model, w), int8_values(model, z)
        if zeros.any() or weights.min() < -127:
            continue
        values[w_name] = (weights.astype(np.int16) - 1).astype(np.int8).tobytes()
        values[z_name] = np.full(zeros.shape, -1, np.int8).tobytes()
    return (with_raw_data(model, values) if values else model), len(values) // 2


#: Probe runs a session for :func:`gemm_pays` (after one to warm it), and how much faster
#: the QGEMM session must be: noise of a few per cent must not pick it.
GEMM_PROBE_RUNS = 5
GEMM_MIN_GAIN = 0.9


def gemm_pays(symmetric, routed, runs: int = GEMM_PROBE_RUNS) -> bool:  # noqa: ANN001
    """Whether ``routed`` (a reader's session from :func:`gemm_routed`) runs a batch of
    :data:`PROBE_CROPS` x 2 probe crops in at most :data:`GEMM_MIN_GAIN` of the time of
    ``symmetric`` (the same reader as its file has it), timed in turns, medians compared.

    Why measure instead of trusting the CPU's flags: onnxruntime decides when it is loaded
    whether it may use AMX, and it does not when the process is held to one core at that
    moment (``taskset -c 0``, or ``os.sched_setaffinity`` before the import; forty-seventh
    session, an Intel Xeon with AMX): its QGEMM then runs on VNNI at 0.174 ms a crop of
    ``cards_v7``, slower than the symmetric kernels' 0.14, against 0.10 with AMX.
    """
    import time

    inp = symmetric.get_inputs()[0]
    crops = {inp.name: probe_crops(tuple(int(d) for d in inp.shape[1:]), 2 * PROBE_CROPS)}
    times: tuple[list[float], list[float]] = ([], [])
    for i in range(runs + 1):
        for session, took in ((symmetric, times[0]), (routed, times[1])):
            t0 = time.perf_counter()
            session.run(None, crops)
            if i:  # the first run of each warms it
                took.append(time.perf_counter() - t0)
    return float(np.median(times[1])) <= GEMM_MIN_GAIN * float(np.median(times[0]))


def pin_to_one_core(core: int | None = None) -> None:
    """Hold this process to one core (``core``, else the lowest it may run on), as the speed
    benchmarks do, after loading onnxruntime: loaded in a process already held to one core,
    onnxruntime does not use AMX (:func:`gemm_pays`), which no table's process is."""
    import onnxruntime  # noqa: F401 - loaded first, for the reason above

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core if core is not None else min(os.sched_getaffinity(0))})


def model_key(model: Path) -> tuple[str, int, int]:
    """A model file as this process's once-per-model work knows it: its path, size and
    modification time (a file replaced in place is another model)."""
    stat = model.stat()
    return str(model.resolve()), stat.st_size, stat.st_mtime_ns


class KernelError(ValueError):
    """The CPU's kernels give another result than the model's graph: a model that cannot be
    used here, a ``ValueError`` like the recogniser's other refusals of a model file, so that
    every command reporting those reports this one in one line."""


def probe_crops(shape: tuple[int, int, int], n: int = PROBE_CROPS) -> np.ndarray:
    """Fixed crops of random dark strokes on light card (seeded): the sums that saturate are
    those of many dark and light pixels against large weights.

    >>> probe_crops((3, 4, 2), 2).shape
    (2, 3, 4, 2)
    """
    rng = np.random.default_rng(0)
    return ((rng.random((n, *shape), dtype=np.float32) > 0.7) * 0.9 + 0.05).astype(np.float32)


def logit_step(logits: np.ndarray) -> float:
    """The smallest gap between distinct values: the output's quantisation step when it is
    dequantised int8 (every value a multiple of one scale), tiny for a float output.

    >>> logit_step(np.array([[0.5, 1.0, -0.5], [1.5, 0.5, 0.0]]))
    0.5
    >>> logit_step(np.array([[1.0, 1.0]]))
    0.0
    """
    values = np.unique(logits)
    return float(np.diff(values).min()) if len(values) > 1 else 0.0


def disagreement(got: np.ndarray, want: np.ndarray) -> float:
    """How far ``got`` (the session's logits) lies from ``want`` (the graph's), in steps of
    ``want``'s quantisation; 0 within :data:`FLOAT_TOLERANCE` of its largest magnitude.

    >>> want = np.array([[0.5, 1.0, -0.5], [1.5, 0.5, 0.0]])
    >>> disagreement(want, want)
    0.0
    >>> disagreement(want + np.array([[0.0, 0.5, 0.0], [0, 0, 0]]), want)
    1.0
    >>> disagreement(want + 2.0, want)
    4.0
    >>> float_logits = np.array([[2000.0, -1500.25, 3.125]])
    >>> disagreement(float_logits * (1 + 1e-6), float_logits)
    0.0
    """
    if not got.size:
        return 0.0
    diff = float(np.abs(got - want).max())
    tolerance = FLOAT_TOLERANCE * max(1.0, float(np.abs(want).max()))
    if diff <= tolerance:
        return 0.0
    step = logit_step(want)
    return diff / step if step > tolerance else float("inf")


def graph_session(model: Path):  # noqa: ANN201 - onnxruntime is imported lazily
    """``model`` evaluated node by node on one thread: no fusion, so every
    ``QuantizeLinear`` / ``DequantizeLinear`` runs as written and no integer kernel is used."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])


def check_session(session, model: Path) -> float:  # noqa: ANN001 - onnxruntime imported lazily
    """Run the probe through ``session`` and through ``model``'s graph node by node; return
    the disagreement in steps, raise :class:`KernelError` above :data:`MAX_STEPS`. Once per
    model file (path, size, modification time) and process."""
    key = model_key(model)
    if key in _checked:
        return _checked[key]
    inp = session.get_inputs()[0]
    shape = tuple(int(d) for d in inp.shape[1:])
    crops = probe_crops(shape)
    got = session.run(None, {inp.name: crops})[0]
    want = graph_session(model).run(None, {inp.name: crops})[0]
    steps = disagreement(got, want)
    if steps > MAX_STEPS:
        raise KernelError(
            f"{model}: onnxruntime's kernels on this CPU compute logits up to "
            f"{float(np.abs(got - want).max()):.3g} away from the model's own graph "
            f"({steps:.1f} quantisation steps; at most {MAX_STEPS} expected): its reads would "
            "be wrong. benchmarks/reader_kernels.py measures it; models/cards_v5.md "
            "(twenty-third session) tells the known case, int8 kernels on x86 CPUs without "
            "VNNI.")
    _checked[key] = steps
    return steps
