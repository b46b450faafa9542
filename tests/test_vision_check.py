"""``monster-match vision-check``: this install against the reference reads of the samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.cli import main
from vision.selfcheck import REFERENCE


def test_this_install_reads_the_samples_as_the_reference_install(capsys) -> None:
    """Fails where a library or the CPU's kernels make the pipeline read otherwise than where
    the model card was measured (OpenCV 4.11 did: three differences, one card more)."""
    status = main(["vision-check"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "the same reads as" in out and "on all 8 frames" in out
    assert "kernel check: model" in out


def _tampered(tmp_path: Path, edit) -> Path:  # noqa: ANN001
    lines = [json.loads(line) for line in REFERENCE.read_text().splitlines()]
    edit(lines)
    path = tmp_path / "reference.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_card_read_otherwise_is_named(tmp_path: Path, capsys) -> None:
    def recode(lines: list[dict]) -> None:
        frame = next(f for f in lines[1:] if f["cards"])
        frame["cards"][0]["code"] = "KS" if frame["cards"][0]["code"] != "KS" else "KC"
        frame["unreadable"].append({"center": [5.0, 5.0]})

    ref = _tampered(tmp_path, recode)
    assert main(["vision-check", "--reference", str(ref)]) == 1
    out = capsys.readouterr().out
    assert "2 differences" in out
    assert ": cards " in out and "unreadable at" in out
    report_status = main(["vision-check", "--json", "--reference", str(ref)])
    report = json.loads(capsys.readouterr().out)
    assert report_status == 1 and report["same"] is False and len(report["differences"]) == 2
    assert report["environment"]["opencv"] and report["kernel_steps"]["model"] <= 1.5


def test_a_reference_of_another_model_is_not_compared_card_by_card(tmp_path: Path,
                                                                      capsys) -> None:
    def other_model(lines: list[dict]) -> None:
        lines[0]["model_sha256"] = "0" * 64

    assert main(["vision-check", "--reference", str(_tampered(tmp_path, other_model))]) == 1
    out = capsys.readouterr().out
    assert "1 difference from" in out and "model_sha256: reference 0000" in out


def test_a_reference_read_with_other_extra_walks_is_not_compared_card_by_card(
        tmp_path: Path, capsys) -> None:
    def other_walks(lines: list[dict]) -> None:
        lines[0]["extra_bar"] = 0.9

    assert main(["vision-check", "--reference", str(_tampered(tmp_path, other_walks))]) == 1
    out = capsys.readouterr().out
    assert "1 difference from" in out and "extra_bar: reference 0.9, here" in out


def test_a_written_reference_is_read_back_the_same(tmp_path: Path, capsys) -> None:
    ref = tmp_path / "ref.jsonl"
    assert main(["vision-check", "--write-reference", "--reference", str(ref)]) == 0
    assert "8 frames" in capsys.readouterr().out
    assert main(["vision-check", "--reference", str(ref)]) == 0


@pytest.mark.parametrize("text", ["", "{\"image\": \"x.jpg\"}\n"])
def test_a_file_that_is_no_reference_is_refused(tmp_path: Path, capsys, text: str) -> None:
    ref = tmp_path / "ref.jsonl"
    ref.write_text(text)
    assert main(["vision-check", "--reference", str(ref)]) == 2
    assert "not a reference written by vision.selfcheck" in capsys.readouterr().err


def test_without_the_sample_frames_it_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    """A wheel install carries no sample_images/: the check says so instead of passing."""
    monkeypatch.setattr("vision.selfcheck.SAMPLES", tmp_path / "sample_images")
    assert main(["vision-check"]) == 2
    assert "the sample frames are not installed here" in capsys.readouterr().err


def test_the_vision_benchmark_names_the_cpu_and_libraries_it_measured_on() -> None:
    """A speed figure means little without its CPU (the int8 kernels above all)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    run = subprocess.run([sys.executable, str(root / "benchmarks" / "vision_bench.py"), "--json",
                          str(root / "sample_images")], capture_output=True, text=True,
                         timeout=300, cwd=root, check=True)
    out = json.loads(run.stdout)
    env = out["environment"]
    assert env["cpu"] and env["opencv"] and env["onnxruntime"]
    assert isinstance(env["exact_kernels_asked"], bool)
    assert out["overall"]["readable_cards"] == 80
    # milliseconds and counts apart (a count printed among the times read as milliseconds)
    assert set(out["first_pass_ms_median"]) == {"outline", "pick size", "propose",
                                                "crop+classify"}
    assert set(out["counts_median"]) == {"size hypotheses", "proposals"}
    assert out["counts_median"]["proposals"] > 0
