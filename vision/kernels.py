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
    stat = model.stat()
    key = (str(model.resolve()), stat.st_size, stat.st_mtime_ns)
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
