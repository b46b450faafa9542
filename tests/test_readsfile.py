"""Saved reads (``vision.readsfile``) and the threshold sweep scored from them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision import readsfile
from vision.dataset import design_list
from vision.procedural import EXTRA_TTF_FAMILIES, HELD_OUT_EXTRA_FAMILIES
from vision.recognize import DEFAULT_MODEL, Recognizer, load_image
from vision.sweep import main as sweep_main
from vision.sweep import sweep_reads, sweep_rendered

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def test_packed_reads_merge_as_the_reads_themselves(tmp_path: Path) -> None:
    """Every read of two sample frames, packed, saved, loaded and unpacked, merges into the
    same cards, face-down cards and refusals at several thresholds, and keeps its labels."""
    rec = Recognizer()
    frames = []
    for name in ("tigullio_000", "proc-5-1011_001"):
        reads = rec.read(load_image(SAMPLES / f"{name}.jpg"))
        labels = json.loads((SAMPLES / f"{name}.json").read_text())
        frames.append((reads, labels))
    path = tmp_path / "reads.npz"
    readsfile.save(path, [(readsfile.pack(r), lab) for r, lab in frames], {"note": "x"})
    meta, loaded = readsfile.load(path)
    assert meta == {"note": "x"} and len(loaded) == 2
    for (reads, labels), (packed, labels_back) in zip(frames, loaded, strict=True):
        assert labels_back == labels and len(packed) == len(reads) > 50
        again = readsfile.unpack(packed)
        for t in (0.9, 0.99, 0.999):
            assert rec.merge(again, t) == rec.merge(reads, t)


def test_a_sweep_scored_from_its_saved_reads_is_the_sweep(tmp_path: Path) -> None:
    """Four rendered frames of two procedural training designs, swept with their reads saved, then
    scored again from the file alone: the same counts at every threshold, the misreads named
    by frame alike; and the reads of another reader are refused."""
    designs = ["proc:0:1031", "proc:1:1031"]  # drawn here: no aisleriot files needed
    path = tmp_path / "reads.npz"
    swept = sweep_rendered([str(DEFAULT_MODEL)], 2, 31, 1, designs=designs, save_reads=path)
    again = sweep_reads(str(DEFAULT_MODEL), [path])
    assert again["models"] == swept["models"] and again["frames"] == swept["frames"] == 4
    assert swept["models"][DEFAULT_MODEL.name][0]["readable_cards"] > 20
    meta, frames = readsfile.load(path)
    assert [f[1]["sweep_frame"] for f in frames] == [[d, k] for d in designs for k in range(2)]
    assert meta["model_sha256"] == readsfile.file_sha256(DEFAULT_MODEL)
    readsfile.save(tmp_path / "other.npz", frames, {**meta, "model_sha256": "0" * 64})
    with pytest.raises(ValueError, match="another model"):
        sweep_reads(str(DEFAULT_MODEL), [tmp_path / "other.npz"])
    with pytest.raises(SystemExit):
        sweep_main(["--from-reads", str(path), "--out", str(tmp_path / "s.json"),
                    str(DEFAULT_MODEL), str(DEFAULT_MODEL)])
    assert sweep_main(["--from-reads", str(path), "--out", str(tmp_path / "s.json"),
                       str(DEFAULT_MODEL)]) == 0
    written = json.loads((tmp_path / "s.json").read_text())
    assert written["models"] == swept["models"] and written["from_reads"] == ["reads.npz"]
    assert np.isclose(written["models"][DEFAULT_MODEL.name][0]["threshold"], 0.5)


def test_a_sweep_of_two_readers_saves_the_reads_of_the_last(tmp_path: Path) -> None:
    """Enrollment reads its house frames with the bundled reader and the enrolled one in one
    sweep and keeps the enrolled (last) one's reads: scored again they are its sweep, and
    they are refused as the other reader's."""
    first = DEFAULT_MODEL.with_name("cards_v4.onnx")
    path = tmp_path / "reads.npz"
    swept = sweep_rendered([str(first), str(DEFAULT_MODEL)], 2, 31, 1,
                           designs=["proc:1:1031"], save_reads=path)
    again = sweep_reads(str(DEFAULT_MODEL), [path])
    assert again["models"][DEFAULT_MODEL.name] == swept["models"][DEFAULT_MODEL.name]
    assert swept["models"][first.name] != swept["models"][DEFAULT_MODEL.name]
    with pytest.raises(ValueError, match="another model"):
        sweep_reads(str(first), [path])


def test_two_readers_of_one_file_name_are_refused_before_a_frame_is_rendered(
        tmp_path: Path) -> None:
    """A sweep's scores are kept under each reader's file name: a copy of a reader in another
    folder under the same name (a candidate beside the bundled one) would have been written
    over the other's scores without a word. It is refused, by the command too, and nothing
    is written."""
    copy = tmp_path / "copy" / DEFAULT_MODEL.name
    copy.parent.mkdir()
    copy.write_bytes(DEFAULT_MODEL.read_bytes())
    with pytest.raises(ValueError, match="share a file name"):
        sweep_rendered([str(DEFAULT_MODEL), str(copy)], 1, 31, 1, designs=["proc:1:1031"])
    out = tmp_path / "s.json"
    with pytest.raises(SystemExit):
        sweep_main(["--frames-per-design", "1", "--workers", "1", "--out", str(out),
                    str(DEFAULT_MODEL), str(copy)])
    assert not out.exists()


def test_saved_reads_scored_for_some_designs_are_the_sweep_of_those_designs(
        tmp_path: Path) -> None:
    """``--designs`` with ``--from-reads`` keeps the frames of the designs named (expanded
    with the file's seed): the counts are those of a sweep rendered with that design alone (a
    frame depends on its design and number, not on the list), and a spec matching no frame
    is refused rather than scored as an empty sweep."""
    path = tmp_path / "reads.npz"
    sweep_rendered([str(DEFAULT_MODEL)], 2, 31, 1, designs=["proc:0:1031", "proc:1:1031"],
                   save_reads=path)
    alone = sweep_rendered([str(DEFAULT_MODEL)], 2, 31, 1, designs=["proc:1:1031"])
    kept = sweep_reads(str(DEFAULT_MODEL), [path], designs="proc:1:1031")
    assert kept["frames"] == 2 and kept["designs"] == "proc:1:1031"
    assert kept["models"] == alone["models"]
    everything = sweep_reads(str(DEFAULT_MODEL), [path])
    assert everything["frames"] == 4 and everything["models"] != kept["models"]
    with pytest.raises(ValueError, match="no frame"):
        sweep_reads(str(DEFAULT_MODEL), [path], designs="fonts-held-out")
    assert sweep_main(["--from-reads", str(path), "--designs", "proc:1:1031", "--out",
                       str(tmp_path / "s.json"), str(DEFAULT_MODEL)]) == 0
    assert json.loads((tmp_path / "s.json").read_text())["models"] == alone["models"]


def test_a_sweep_of_named_designs_renders_those_designs(tmp_path: Path) -> None:
    """``--designs`` names the decks a rendered sweep draws (``fonts``: the typefaces the
    committed reader never saw, needing fonts this machine may lack; here a procedural deck),
    and the result says which; its saved reads (those of the last reader named, here after a
    copy of it under another name) name each frame's design, and scored again they give the
    same counts."""
    out, reads = tmp_path / "s.json", tmp_path / "r.npz"
    first = tmp_path / "first.onnx"
    first.write_bytes(DEFAULT_MODEL.read_bytes())
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    first.with_suffix(".json").write_text(json.dumps(meta))
    (tmp_path / meta["gate"]).write_bytes((DEFAULT_MODEL.parent / meta["gate"]).read_bytes())
    assert sweep_main(["--designs", "proc:2:1031", "--frames-per-design", "2", "--workers",
                       "1", "--seed", "31", "--out", str(out), "--save-reads", str(reads),
                       str(first), str(DEFAULT_MODEL)]) == 0
    swept = json.loads(out.read_text())
    assert swept["frames"] == 2 and swept["designs"] == "proc:2:1031"
    assert swept["models"]["first.onnx"] == swept["models"][DEFAULT_MODEL.name]
    saved, frames = readsfile.load(reads)
    assert saved["model"] == DEFAULT_MODEL.name
    assert [f[1]["sweep_frame"] for f in frames] == [["proc:2:1031", 0], ["proc:2:1031", 1]]
    assert sweep_reads(str(DEFAULT_MODEL), [reads])["models"] == {
        k: v for k, v in swept["models"].items() if k.startswith(DEFAULT_MODEL.name)}
    assert design_list("fonts", 31) == [f"proc:{f}:1031" for f in EXTRA_TTF_FAMILIES]
    held_out = design_list("fonts-held-out", 31)
    assert held_out == [f"proc:{f}:1031" for f in HELD_OUT_EXTRA_FAMILIES]
    assert set(held_out) < set(design_list("fonts", 31)) and len(held_out) == 18


def _sweep_file(path: Path, misreads: dict[float, int], seed: int) -> Path:
    """A vision.sweep result for the bundled reader: 4000 reports at every threshold, these
    misreads (none where not named)."""
    from vision.calibrate import THRESHOLDS

    keys = ("readable_cards", "correct", "reported")
    rows = [{"threshold": t, "frames": 400, **dict.fromkeys(keys, 4000),
             "misread": misreads.get(t, 0), "false_positives": 0, "face_down": 0,
             "face_down_found": 0, "face_down_false": 0, "unreadable_reports": 0}
            for t in THRESHOLDS]
    path.write_text(json.dumps({"frames": 400, "frames_per_design": 10, "seed": seed,
                                "models": {DEFAULT_MODEL.name: rows}}))
    return path


def test_the_threshold_holds_the_rule_on_designs_the_reader_never_saw(tmp_path: Path) -> None:
    """vision.calibrate with --unseen-sweep: the operating threshold is the higher of the
    picks on the training designs' frames and sweeps and on the unseen designs' sweeps; the
    first is kept as "seen_threshold" (an enrolled reader's floor); without a crop file the
    crop level and the entries chosen apart (burst, the extra walks' bar, the rank-and-colour
    and calibrated thresholds) of the model's .json are kept; and it says when neither crops
    nor a .json are there, or neither crops nor frames."""
    from vision.calibrate import main as calibrate_main

    model = tmp_path / DEFAULT_MODEL.name
    model.write_bytes(DEFAULT_MODEL.read_bytes())
    gate = tmp_path / "gate_v2.onnx"
    gate.write_bytes((DEFAULT_MODEL.parent / "gate_v2.onnx").read_bytes())
    with pytest.raises(SystemExit):  # no crops, no .json to keep a crop level from
        calibrate_main([str(model), "--gate", str(gate), "--frames", str(SAMPLES)])
    old = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    # a burst entry to be kept (cards_v5's .json has none yet; cards_v4's was this one)
    old["burst"] = {"frames": 3, "min_frames": 2, "threshold": 0.993}
    old.update(extra_bar=0.9999, rank_colour_threshold=0.999, calibrated_threshold=0.995,
               threshold_by_width=[[0, 0.999], [60, 0.995]])
    model.with_suffix(".json").write_text(json.dumps(old))
    with pytest.raises(SystemExit):  # neither crops nor frames: nothing to calibrate on
        calibrate_main([str(model), "--gate", str(gate)])
    # seen: 9 misreads in 4000 up to 0.95; unseen: 6 in 4000 up to 0.997
    seen = _sweep_file(tmp_path / "seen.json", {0.9: 9, 0.93: 9, 0.95: 9}, 31)
    unseen_misreads = {t: 6 for t in (0.9, 0.95, 0.99, 0.993, 0.995, 0.997)}
    unseen = [_sweep_file(tmp_path / f"u{s}.json", unseen_misreads, s) for s in (53, 59)]
    scored = json.loads(unseen[1].read_text())  # as vision.sweep --from-reads --designs writes
    unseen[1].write_text(json.dumps({**scored, "designs": "fonts-held-out-strict"}))
    assert calibrate_main([str(model), "--gate", str(gate), "--frames", str(SAMPLES),
                           "--sweep", str(seen), "--unseen-sweep", *map(str, unseen),
                           "--bound"]) == 0
    meta = json.loads(model.with_suffix(".json").read_text())
    assert meta["threshold"] == 0.998 and meta["unseen_calibration"]["threshold"] == 0.998
    assert meta["seen_threshold"] == meta["frame_calibration"]["threshold"] <= 0.96
    assert meta["unseen_calibration"]["reported"] == 8000
    assert [s["seed"] for s in meta["rendered_unseen_sweeps"]] == [53, 59]
    assert [s.get("designs") for s in meta["rendered_unseen_sweeps"]] == [
        None, "fonts-held-out-strict"]
    assert meta["crop_calibration"] == old["crop_calibration"] and meta["burst"] == old["burst"]
    kept = ("extra_bar", "rank_colour_threshold", "calibrated_threshold", "threshold_by_width")
    assert {k: meta.get(k) for k in kept} == {k: old[k] for k in kept}
    assert Recognizer(model).threshold == 0.998
