"""The step log an interrupted enrollment resumes from: what makes a step count as done."""

from __future__ import annotations

from pathlib import Path

from vision.enroll import _chunk_step, chunk_key, fine_tune_key
from vision.steplog import StepLog


def test_a_torn_or_foreign_log_resumes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "data0.npz"
    out.write_bytes(b"scenes")
    for text in ('{"render": {"key": {"seed": 1}, "outp', "[1, 2]", "\xff\xfe"):
        (tmp_path / "steps.json").write_text(text, encoding="latin-1")
        assert not StepLog(tmp_path / "steps.json").done("render", {"seed": 1}, [out])
    steps = StepLog(tmp_path / "steps.json")
    steps.record("render", {"seed": 1}, [out])  # and is replaced whole by the next record
    assert steps.done("render", {"seed": 1}, [out])
    assert not (tmp_path / "steps.json.tmp").exists()


def test_a_step_is_done_only_with_the_same_outputs(tmp_path: Path) -> None:
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    a.write_bytes(b"a")
    b.write_bytes(b"b")
    steps = StepLog(tmp_path / "steps.json")
    steps.record("render", {"seed": 1}, [a], info=[{"epoch": 0}])
    assert not steps.done("render", {"seed": 1}, [b])
    assert not steps.done("render", {"seed": 1}, [a, b])
    assert steps.info("render") == [{"epoch": 0}] and steps.key("render") == {"seed": 1}
    assert steps.key("fine-tune reader") is None and steps.info("fine-tune reader") is None


def test_a_fine_tune_is_redone_when_its_base_model_or_its_scenes_change(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    steps = StepLog(work / "steps.json")
    job = ("plastic", 0.5, True, 600, 100, str(work / "data0.npz"))
    cal = ("plastic", 0.5, True, 60, 199, str(work / "cal.npz"))
    for j in (job, cal):
        Path(j[-1]).write_bytes(b"scenes")
        steps.record(_chunk_step(j[-1]), chunk_key(j), [Path(j[-1])])
    base = tmp_path / "cards.onnx"
    base.write_bytes(b"weights")
    fine = {"data": [job[-1]], "cal": cal[-1], "epochs": 2, "seed": 1,
            "out": str(work / "reader_float.onnx"), "log": str(work / "log.jsonl"),
            "init": str(base), "label_smoothing": 0.0, "reject_fraction": 0.35, "threads": 2}
    key = fine_tune_key(fine, steps)
    assert fine_tune_key(fine, steps) == key
    assert fine_tune_key({**fine, "epochs": 3}, steps) != key
    base.write_bytes(b"other weights")  # a new bundled reader under the same name
    assert fine_tune_key(fine, steps) != key
    base.write_bytes(b"weights")
    other = (*job[:4], 101, job[5])  # the chunk re-rendered with another seed
    steps.record(_chunk_step(job[-1]), chunk_key(other), [Path(job[-1])])
    assert fine_tune_key(fine, steps) != key


def test_a_rescanned_deck_directory_is_another_deck(tmp_path: Path) -> None:
    deck = tmp_path / "deck"
    deck.mkdir()
    (deck / "AS.png").write_bytes(b"scan 1")
    job = (f"deck:{deck}", 0.5, True, 600, 100, str(tmp_path / "data0.npz"))
    key = chunk_key(job)
    (deck / "AS.png").write_bytes(b"scan 2")
    assert chunk_key(job) != key
