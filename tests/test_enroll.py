"""House-deck enrollment: deck directories (loading, every refusal), the models' int8 weights
turned back into floats, and a whole enrollment run on a small scale (torch: the train extra)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.deckdir import DeckError, load_deck_dir, write_deck_dir
from vision.designs import get_design
from vision.recognize import DEFAULT_MODEL, Recognizer
from vision.synth import render_table

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"


@pytest.fixture(scope="module")
def deck_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("deck")
    assert write_deck_dir(get_design("proc:2:11"), folder) == 53
    return folder


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for p in src.iterdir():
        (dst / p.name).write_bytes(p.read_bytes())
    return dst


def test_deck_dir_round_trip_renders_like_any_design(deck_dir: Path) -> None:
    original = get_design("proc:2:11")
    deck = load_deck_dir(deck_dir)
    assert deck.size == original.size and len(deck.backs) == 1
    assert np.array_equal(deck.faces["QH"], original.faces["QH"])
    rng = np.random.default_rng(3)
    img, labels = render_table({"seat1": ["QH", "TS"], "dealer": ["AD", "XX"]}, rng,
                               design=f"deck:{deck_dir}", clean=True)
    assert labels["design"] == f"deck:{deck_dir}"
    assert [c["code"] for c in labels["cards"]] == ["QH", "TS", "AD", "face_down"]
    assert img.shape == (720, 1280, 3)


def test_scans_without_alpha_get_round_corners_and_any_size(deck_dir: Path,
                                                            tmp_path: Path) -> None:
    """A JPEG scan (no alpha, another resolution, ``10`` for ten, lower case) loads."""
    folder = _copy(deck_dir, tmp_path / "scans")
    for p in list(folder.glob("*.png")):
        img = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
        big = cv2.resize(img[..., :3], (320, int(round(320 * img.shape[0] / img.shape[1]))))
        name = p.stem.lower().replace("t", "10", 1) if p.stem.startswith("T") else p.stem
        cv2.imwrite(str(folder / f"{name}.jpg"), big, [cv2.IMWRITE_JPEG_QUALITY, 95])
        p.unlink()
    deck = load_deck_dir(folder)
    face = deck.faces["TH"]
    assert face.shape[1] == 160 and face.shape[2] == 4
    assert face[0, 0, 3] == 0 and face[face.shape[0] // 2, 80, 3] == 255  # corner cut, body kept


def test_sixteen_bit_and_grey_scans_load_with_round_corners(deck_dir: Path,
                                                            tmp_path: Path) -> None:
    folder = _copy(deck_dir, tmp_path / "deep")
    img = cv2.imread(str(folder / "5D.png"), cv2.IMREAD_UNCHANGED)[..., :3]
    (folder / "5D.png").unlink()
    cv2.imwrite(str(folder / "5D.tif"), img.astype(np.uint16) * 257)  # a 16-bit TIFF scan
    grey = cv2.cvtColor(cv2.imread(str(folder / "6S.png"), cv2.IMREAD_UNCHANGED)[..., :3],
                        cv2.COLOR_BGR2GRAY)
    (folder / "6S.png").unlink()
    cv2.imwrite(str(folder / "6S.png"), grey)
    deck = load_deck_dir(folder)
    face = deck.faces["5D"]
    assert face.dtype == np.uint8 and face[face.shape[0] // 2, 80, 3] == 255
    assert deck.faces["6S"][0, 0, 3] == 0 and deck.faces["6S"][50, 80, 3] == 255
    assert np.abs(face[..., :3].astype(int) - get_design("proc:2:11").faces["5D"][..., :3]
                  ).mean() < 3


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: (d / "7C.png").unlink(), "1 face missing: 7C"),
    (lambda d: [(d / f"{c}.png").unlink() for c in ("7C", "8C")], "2 faces missing: 7C, 8C"),
    (lambda d: (d / "back.png").unlink(), "no back image"),
    (lambda d: (d / "joker.png").write_bytes((d / "AS.png").read_bytes()), "not a card code"),
    (lambda d: (d / "as.jpg").write_bytes((d / "AS.png").read_bytes()), "AS twice"),
    (lambda d: (d / "9H.png").write_bytes((d / "9H.png").read_bytes()[:200]),
     "not a readable card image"),
    (lambda d: cv2.imwrite(str(d / "KD.png"), cv2.rotate(cv2.imread(str(d / "KD.png"),
                                                                     cv2.IMREAD_UNCHANGED),
                                                          cv2.ROTATE_90_CLOCKWISE)),
     "KD not the shape of the other faces"),
    (lambda d: [cv2.imwrite(str(d / f"{c}.png"), cv2.cvtColor(cv2.imread(str(d / f"{c}.png")),
                                                              cv2.COLOR_BGR2GRAY))
                for c in ("6D", "JH")], "6D, JH show no colour"),
])
def test_bad_deck_dirs_are_refused_with_what_to_fix(deck_dir: Path, tmp_path: Path,
                                                    change, words: str) -> None:  # noqa: ANN001
    folder = _copy(deck_dir, tmp_path / "bad")
    change(folder)
    with pytest.raises(DeckError, match=words):
        load_deck_dir(folder)


def test_enrollment_refuses_a_negative_number_of_hand_walks(deck_dir: Path,
                                                            tmp_path: Path) -> None:
    from vision.enroll import EnrollError, enroll

    with pytest.raises(EnrollError, match="hand walks"):
        enroll(str(deck_dir), tmp_path / "out", hand_walks=-1)
    with pytest.raises(EnrollError, match="weight bits must be 7 or 8"):
        enroll(str(deck_dir), tmp_path / "out", weight_bits=6)
    with pytest.raises(EnrollError, match="walk splits"):
        enroll(str(deck_dir), tmp_path / "out", walk_splits=(2,))
    with pytest.raises(EnrollError, match="lone anchors"):
        enroll(str(deck_dir), tmp_path / "out", lone_anchors="sometimes")
    with pytest.raises(EnrollError, match="unknown precision 'fp16'"):
        enroll(str(deck_dir), tmp_path / "out", precision="fp16")
    assert not (tmp_path / "out").exists()


def test_an_enrolled_reader_walks_as_the_reader_it_starts_from() -> None:
    """By default the enrolled reader's ``"hand_walks"`` are its base reader's (the bundled
    one's three); ``--hand-walks`` overrides them; a negative number is refused."""
    from vision.enroll import EnrollError, enrolled_hand_walks

    bundled = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    assert enrolled_hand_walks(bundled, None) == bundled["hand_walks"] == 3
    assert enrolled_hand_walks(bundled, 1) == 1
    with pytest.raises(EnrollError, match="hand walks"):
        enrolled_hand_walks(bundled, -2)


def test_enroll_deck_command_refuses_a_bad_deck_before_any_work(deck_dir: Path,
                                                                tmp_path: Path) -> None:
    folder = _copy(deck_dir, tmp_path / "bad")
    (folder / "back.png").unlink()
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "controller", "enroll-deck", str(folder),
                        "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode != 0
    assert "no back image" in r.stderr
    assert not out.exists()
    r = subprocess.run([sys.executable, "-m", "controller", "enroll-deck", str(deck_dir),
                        "--out", str(out), "--precision", "fp16"], capture_output=True,
                       text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 2 and "invalid choice: 'fp16'" in r.stderr
    assert not out.exists()


def test_quantised_reader_loads_back_as_floats() -> None:
    """The bundled int8 reader turned back into a torch model reads as it does (the start of
    every enrollment), and its architecture is recognised from its kernel shapes."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    import torch

    from vision.enroll import infer_arch
    from vision.train import build_model, load_onnx_weights

    assert infer_arch(DEFAULT_MODEL) == "reader_wide"
    assert infer_arch(MODELS / "gate_v2.onnx") == "gate_half"
    model = build_model("reader_wide")
    load_onnx_weights(model, DEFAULT_MODEL)
    model.eval()
    rng = np.random.default_rng(0)
    img, labels = render_table({"seat1": ["QH", "TS"], "seat4": ["AD", "7C"]}, rng,
                               design="proc:2:11")
    from vision.crops import extract_crops
    from vision.train import jittered_truth_frames

    crops = extract_crops(img, jittered_truth_frames(labels, rng, per_corner=4))
    int8 = Recognizer(DEFAULT_MODEL).classify(crops)
    with torch.no_grad():
        floats = torch.softmax(model(torch.from_numpy(crops)), 1).numpy()
    agree = (int8.argmax(1) == floats.argmax(1)).mean()
    assert agree >= 0.95, agree
    assert np.abs(int8 - floats).max(1).mean() < 0.05


@pytest.mark.slow
def test_enrollment_writes_a_usable_model_and_an_honest_report(deck_dir: Path,
                                                               tmp_path: Path) -> None:
    """A whole enrollment on a tiny scale: models, metadata, report, data removed."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from vision import calibrate_rank_colour
    from vision.enroll import GATE_NAME, READER_NAME, WEIGHT_BITS, enroll, summary

    out = tmp_path / "enrolled"
    lines: list[str] = []
    report = enroll(str(deck_dir), out, scenes=6, epochs=1, frames=2, workers=1,
                    log=lines.append, hand_walks=2, walk_splits=(3,), opposite_anchors=True,
                    lone_anchors="calibrated")
    meta = json.loads((out / READER_NAME).with_suffix(".json").read_text())
    bundled = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    assert meta["gate"] == GATE_NAME and (out / GATE_NAME).is_file()
    # never looser than the bundled reader on the designs it was trained on: the enrolled one
    # has seen its deck
    assert meta["threshold"] >= bundled.get("seen_threshold", bundled["threshold"])
    assert report["rule"]["floor"] == bundled.get("seen_threshold", bundled["threshold"])
    assert meta["deck"] == f"deck:{deck_dir.resolve()}"
    assert meta["hand_walks"] == report["hand_walks"] == 2  # its threshold was set with them
    assert meta["walk_splits"] == report["walk_splits"] == [3]   # and with these places
    assert meta["opposite_anchors"] is report["opposite_anchors"] is True
    assert meta["lone_anchors"] == report["lone_anchors"] == "calibrated"
    assert meta["weight_bits"] == report["weight_bits"] == WEIGHT_BITS
    assert report["precision"] == "fp32"  # "auto" on a CPU, named as run
    assert report["enrolled"]["threshold"] == meta["threshold"]
    assert report["bundled"]["threshold"] == bundled["threshold"]
    assert report["frames"] == 2 and report["bundled"]["frames"] == 2
    # two frames cannot show a misread bound of 0.1 %: the report says so
    assert report["enrolled"]["rule_met"] is False
    assert report["advice"].startswith("keep the bundled models")
    # nor a rank-and-colour bound: the enrolled reader names no rank and colour (the bundled
    # one's threshold, for designs it never saw, is not inherited)
    assert report["enrolled"]["rank_colour_threshold"] is None
    assert "rank_colour_threshold" not in meta
    assert [r["threshold"] for r in meta["rank_colour_sweep"]] == list(
        calibrate_rank_colour.THRESHOLDS)
    assert sum(r["frames"] for r in meta["rank_colour_sweep"][:1]) == 2
    assert "no threshold keeps the rule" in summary(report)
    # read at the frames' table sizes too; two frames show no bound there either, so the
    # enrolled reader has no calibrated threshold and a calibrated table reads it as before
    cal = report["enrolled_calibrated"]
    assert cal["rule_met"] is False and cal["adopted"] is False and cal["frames"] == 2
    assert cal["threshold"] >= report["rule"]["floor"]
    assert "calibrated_threshold" not in meta
    assert [r["threshold"] for r in meta["calibrated_sweep"]] == [
        r["threshold"] for r in meta["house_sweep"]]
    assert "not used (the misread bound was not shown)" in summary(report)
    assert len(report["training"]["reader"]) == 2  # before, and after the one epoch
    assert not list((out / "work").glob("*.npz"))
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == [
        "cards_house.json", "cards_house.onnx", "enroll_report.json", "gate_house.onnx"]
    assert not list((out / "work").glob("enrolled_candidate*"))
    rec = Recognizer(out / READER_NAME)
    assert rec.threshold == meta["threshold"] and rec.gate_session is not None
    assert rec.rank_colour_threshold is None and rec.hand_walks == 2
    assert rec.walk_splits == (3,) and rec.opposite_anchors is True
    assert rec.lone_anchors == "calibrated"
    assert rec.calibrated_threshold is None
    img, _ = render_table({"seat1": ["QH", "TS"]}, np.random.default_rng(5),
                          design=f"deck:{deck_dir}")
    assert set(rec.recognize(img)) >= {"cards", "face_down", "unreadable"}


@pytest.mark.slow
def test_an_enrollment_killed_after_training_resumes_without_rendering_or_training_again(
        deck_dir: Path, tmp_path: Path) -> None:
    """kill -9 once the reader's fine-tune is recorded; the rerun reuses the scene chunks and
    the reader as they were (same bytes, not rewritten), trains only the gate, and finishes;
    a rerun after a finished --keep-data run with another walk setting trains nothing."""
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    import os
    import signal
    import time

    from vision.enroll import READER_NAME, STEPS_NAME, enroll

    out = tmp_path / "enrolled"
    steps = out / "work" / STEPS_NAME
    args = [str(deck_dir), "--out", str(out), "--scenes", "6", "--epochs", "1",
            "--frames", "2", "--workers", "1"]
    proc = subprocess.Popen([sys.executable, "-m", "vision.enroll", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if steps.is_file() and "fine-tune reader" in steps.read_text():
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the enrollment finished or died before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)  # the spawned workers too
    proc.wait()
    assert not (out / READER_NAME).exists()  # no model before its threshold is set
    made = {p.name: (p.stat().st_mtime_ns, p.read_bytes())
            for p in [*(out / "work").glob("*.npz"), out / "work" / "reader_float.onnx"]}
    assert sorted(made) == ["cal.npz", "data0.npz", "reader_float.onnx"]

    lines: list[str] = []
    report = enroll(str(deck_dir), out, scenes=6, epochs=1, frames=2, workers=1,
                    log=lines.append, keep_data=True)
    assert any(line.startswith("resuming: 2 of 2 scene chunks") for line in lines), lines
    assert any("the reader was fine-tuned" in line for line in lines), lines
    assert not any("the gate was fine-tuned" in line for line in lines), lines  # killed first
    for name, (mtime, data) in made.items():
        p = out / "work" / name
        assert (p.stat().st_mtime_ns, p.read_bytes()) == (mtime, data), name
    # the reader's training history comes back from the record, as the first run saw it
    assert len(report["training"]["reader"]) == 2 and len(report["training"]["gate"]) == 2
    assert (out / READER_NAME).is_file()

    # kept: another walk setting only sets the thresholds again
    lines.clear()
    again = enroll(str(deck_dir), out, scenes=6, epochs=1, frames=2, workers=1,
                   log=lines.append, keep_data=True, lone_anchors="calibrated")
    assert sum("was fine-tuned with these settings" in line for line in lines) == 2, lines
    assert again["training"] == report["training"]
    assert json.loads((out / READER_NAME).with_suffix(".json").read_text())[
        "lone_anchors"] == "calibrated"

    # another seed is another enrollment: rendered and trained again, nothing resumed
    lines.clear()
    enroll(str(deck_dir), out, scenes=6, epochs=1, frames=2, workers=1, seed=2,
           log=lines.append)
    assert not any(line.startswith("resuming") for line in lines), lines
    assert not steps.exists() and not list((out / "work").glob("*.npz"))


def test_seven_bit_weights_run_exactly_on_the_fast_kernels(tmp_path: Path) -> None:
    """``quantize(..., reduce_range=True)`` (``enroll-deck --weight-bits 7``): every int8
    weight within +-64, and onnxruntime's default session (the fast U8S8 kernels, which
    saturate with full-range weights on x86 CPUs without VNNI) computes what the graph says,
    on any CPU; the full-range copy of the same floats has weights of +-127."""
    pytest.importorskip("torch")
    onnx = pytest.importorskip("onnx")
    import onnxruntime as ort
    from onnx import numpy_helper

    from vision.crops import extract_crops
    from vision.kernels import check_session
    from vision.quantize import quantize
    from vision.train import build_model, export_onnx, jittered_truth_frames, load_onnx_weights

    model = build_model("reader_wide")
    load_onnx_weights(model, DEFAULT_MODEL)
    model.eval()
    export_onnx(model, tmp_path / "float.onnx")
    rng = np.random.default_rng(3)
    crops = []
    for seed in range(3):
        img, labels = render_table({"seat1": ["QH", "TS"], "seat4": ["AD", "7C", "9S"]},
                                   np.random.default_rng(seed), design="proc:2:11")
        crops.append(extract_crops(img, jittered_truth_frames(labels, rng, per_corner=4)))
    x = (np.concatenate(crops) * 255).round().astype(np.uint8)
    np.savez(tmp_path / "cal.npz", x=x, y=np.zeros(len(x), np.int64))

    def widest(path: Path) -> int:
        return max(int(np.abs(numpy_helper.to_array(t).astype(int)).max())
                   for t in onnx.load(str(path)).graph.initializer if t.data_type == 3)

    for bits in (7, 8):
        out = tmp_path / f"q{bits}.onnx"
        quantize(tmp_path / "float.onnx", out, tmp_path / "cal.npz", reduce_range=bits == 7)
        assert widest(out) == (64 if bits == 7 else 127)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    fast = ort.InferenceSession(str(tmp_path / "q7.onnx"), opts,
                                providers=["CPUExecutionProvider"])
    assert check_session(fast, tmp_path / "q7.onnx") <= 1.5
