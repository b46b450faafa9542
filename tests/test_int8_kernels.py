"""The int8 reader must compute what its graph says on every CPU.

onnxruntime's fast U8S8 kernels on x86 CPUs without VNNI (AVX2, AVX-512 before VNNI) add
products pairwise in saturating 16-bit lanes; with ``cards_v5``'s full-range int8 weights some
logits came out ~5 off and half the cards of the validation frames were lost (twenty-third
session, an AMD EPYC with AVX2). `vision.recognize._session` asks for the exact kernels
(``session.x64quantprecision``) on such CPUs (`vision.kernels.needs_exact_kernels`). On a CPU
with VNNI this test passes with or without that option; on one without, it fails without it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from vision.kernels import graph_session, probe_crops
from vision.recognize import DEFAULT_MODEL, _session


def _patterns(n: int) -> np.ndarray:
    """Ink-on-card crops of random strokes (the kernel check's probe)."""
    return probe_crops((3, 36, 28), n)


def test_the_readers_integer_kernels_match_its_graph_evaluated_step_by_step() -> None:
    model = Path(DEFAULT_MODEL)
    fused = _session(model, 1)
    # No fusion: every QuantizeLinear / DequantizeLinear runs as written, convolutions in float
    # on the dequantised values, so no integer kernel is involved.
    reference = graph_session(model)
    crops = _patterns(256)
    got = fused.run(None, {"crops": crops})[0]
    want = reference.run(None, {"crops": crops})[0]
    # Integer and float sums may round an intermediate value to the neighbouring step: at most
    # one step of the logits' quantisation (0.486 for cards_v5) where the kernels are exact,
    # ~4.9 where they saturate.
    assert np.abs(got - want).max() < 0.75
    assert (got.argmax(axis=1) == want.argmax(axis=1)).all()


def test_a_session_that_computes_something_else_is_refused_with_a_clear_error(
        monkeypatch) -> None:
    from vision import kernels

    monkeypatch.setattr(kernels, "_checked", {})
    other = _session(Path(DEFAULT_MODEL).with_name("cards_v4.onnx"), 1)
    with pytest.raises(kernels.KernelError, match="away from the model's own graph"):
        kernels.check_session(other, Path(DEFAULT_MODEL))
    # the bundled reader and gate on their own kernels pass, and the result is kept
    assert kernels.check_session(_session(Path(DEFAULT_MODEL), 1), Path(DEFAULT_MODEL)) <= 1.5
    assert str(Path(DEFAULT_MODEL).resolve()) in {key[0] for key in kernels._checked}


def test_saturating_kernels_are_caught_where_the_cpu_has_them(monkeypatch) -> None:
    """On a CPU without VNNI, a session made without the exact-kernel option is refused."""
    from vision import kernels

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    fast = ort.InferenceSession(str(DEFAULT_MODEL), opts, providers=["CPUExecutionProvider"])
    crops = _patterns(16)
    exact = _session(Path(DEFAULT_MODEL), 1).run(None, {"crops": crops})[0]
    if np.array_equal(fast.run(None, {"crops": crops})[0], exact):
        pytest.skip("this CPU's default int8 kernels are exact (VNNI, or not x86)")
    monkeypatch.setattr(kernels, "_checked", {})  # _session above checked its own session
    with pytest.raises(kernels.KernelError):
        kernels.check_session(fast, Path(DEFAULT_MODEL))


def test_the_kernel_benchmark_reports_both_sessions() -> None:
    """benchmarks/reader_kernels.py times the exact and the default session and says how far
    each lies from the graph; the exact one (the one the recogniser uses) within a step."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, str(root / "benchmarks" / "reader_kernels.py"),
                          "--crops", "16", "--reps", "2"], capture_output=True, text=True,
                         timeout=120, cwd=root, check=True).stdout
    lines = out.splitlines()
    assert lines[0].startswith("onnxruntime ") and "vnni=" in lines[0]
    exact = next(line for line in lines if line.startswith("as vision.recognize opens it"))
    default = next(line for line in lines if line.startswith("onnxruntime's default"))
    steps = float(exact.split(", ")[-1].split(" steps")[0])
    assert steps <= 1.5
    assert "ms / 16 crops" in default
    # the same model with its deeper convolutions on QGEMM: no step from the graph either
    routed = next(line for line in lines if line.startswith("4 convolutions moved to QGEMM"))
    assert float(routed.split(", ")[-1].split(" steps")[0]) <= 1.5


def test_the_commands_report_kernels_that_compute_otherwise_in_one_line(
        monkeypatch, capsys) -> None:
    """Where the CPU's kernels disagree with the model, `recognize` and `vision-eval` exit 2
    with the reason (simulated: the check made to see a disagreement)."""
    from controller.cli import main
    from vision import kernels

    def disagreeing(session, model):  # noqa: ANN001, ANN202
        raise kernels.KernelError(f"{model}: onnxruntime's kernels on this CPU compute logits "
                                  "up to 4.38 away from the model's own graph")

    monkeypatch.setattr("vision.recognize.check_session", disagreeing)
    samples = Path(__file__).resolve().parent.parent / "sample_images"
    assert main(["recognize", "--json", str(samples)]) == 2
    assert "away from the model's own graph" in capsys.readouterr().err
    assert main(["vision-eval", str(samples)]) == 2
    assert "away from the model's own graph" in capsys.readouterr().err
