"""The recognize / vision-eval commands and the recogniser on the committed sample images."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from controller.cli import main
from vision.evaluate import Score, labelled_images, score_frame
from vision.recognize import Recognizer, load_image

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


@pytest.fixture(scope="module")
def recognizer() -> Recognizer:
    return Recognizer()


@pytest.fixture(scope="module")
def sample_scores(recognizer: Recognizer) -> list[tuple[dict, dict]]:
    pairs = labelled_images(SAMPLES)
    assert len(pairs) >= 6
    return [(recognizer.recognize(load_image(i)), json.loads(j.read_text())) for i, j in pairs]


def test_samples_are_read_without_misreads(sample_scores: list[tuple[dict, dict]]) -> None:
    """No reported card is wrong or phantom (matching as in vision.evaluate), and the recall
    does not fall below 45 % (a regression guard: 51.25 % with cards_v5 at its operating
    threshold 0.997, nineteenth session, as with cards_v4 at 0.999 of the eighteenth session,
    held to the misread rule on designs the reader never saw; before,
    at 0.99, 50 %: 56.25 % on the set as the documented command
    makes it since the renderer draws hands tighter (made again in the twelfth session; 55.0 %
    before the hand walk's row step);
    on the set made before: 63.75 % measured with the int8
    models/cards_v4 behind gate_v2 at its threshold 0.99 with the hand walk (seventh
    session; 62.5 % without the walk), 60.0 % at 0.993
    behind cards_v1 after the merge and refinement changes of the sixth session, 56.25 %
    before them, 47.5 % before the card-size
    hypotheses at 0.995; cards_v3 read 53.75 % at 0.99, cards_v2 51.25 %, cards_v1 alone
    41.25 %; far from the 99.5 % target; see models/cards_v4.md)."""
    total = Score()
    for result, labels in sample_scores:
        total.add(score_frame(result, labels))
    assert total.misread == 0, total.confusions
    assert total.false_positive == 0
    assert total.readable > 40
    assert total.recall >= 0.45, total.summary()


def test_the_documented_command_remakes_the_sample_images(tmp_path: Path) -> None:
    """sample_images/README.md's command makes these very scenes: a change to the renderer
    that moves them (and so every validation set made before it) shows here, and is then
    made again on purpose. Labels exactly; pixels up to JPEG coding differences."""
    from vision.dataset import design_list, write_labelled_set

    write_labelled_set(tmp_path, design_list("val", 11), 2, seed=11, quality=85)
    made = labelled_images(tmp_path)
    assert [p.name for p, _ in made] == [p.name for p, _ in labelled_images(SAMPLES)]
    for img, label in made:
        assert label.read_text() == (SAMPLES / label.name).read_text(), label.name
        diff = np.abs(load_image(img).astype(int) - load_image(SAMPLES / img.name))
        assert diff.mean() < 0.5, img.name


def test_every_read_carries_a_confidence_above_threshold(
        sample_scores: list[tuple[dict, dict]], recognizer: Recognizer) -> None:
    n = 0
    for result, _ in sample_scores:
        for card in result["cards"]:
            assert recognizer.threshold <= card["confidence"] <= 1.0
            assert len(card["corners"]) == 4 and all(len(p) == 2 for p in card["corners"])
            centre = np.mean(np.array(card["corners"]), axis=0)
            assert np.allclose(centre, card["center"], atol=1.0)
            n += 1
    assert n > 0


def test_the_gate_loses_no_card(sample_scores: list[tuple[dict, dict]],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate only spares the reader work: with the reader on every candidate (no code
    mass asked of the gate) the sample frames give the same cards, to the pixel."""
    import vision.recognize as recognize

    assert Recognizer().gate_session is not None
    monkeypatch.setattr(recognize, "GATE_CODE_MASS", 0.0)
    everything = Recognizer()
    for (gated, _), (image, _) in zip(sample_scores, labelled_images(SAMPLES), strict=True):
        alone = everything.recognize(load_image(image))
        assert [(c["code"], c["center"]) for c in alone["cards"]] == \
            [(c["code"], c["center"]) for c in gated["cards"]], image.name


def test_a_higher_threshold_never_adds_cards(recognizer: Recognizer) -> None:
    img = load_image(labelled_images(SAMPLES)[0][0])
    strict = Recognizer(threshold=0.9999)
    assert len(strict.recognize(img)["cards"]) <= len(recognizer.recognize(img)["cards"])


def test_recognize_json_lines_and_bad_files(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    good = labelled_images(SAMPLES)[0][0]
    shutil.copy(good, tmp_path / "a_good.jpg")
    (tmp_path / "b_corrupt.jpg").write_bytes(b"this is not a jpeg at all")
    data = good.read_bytes()
    (tmp_path / "c_truncated.jpg").write_bytes(data[: len(data) // 2])
    status = main(["recognize", "--json", str(tmp_path), str(tmp_path / "missing.png")])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert status == 1
    assert [Path(x["image"]).name for x in lines] == [
        "a_good.jpg", "b_corrupt.jpg", "c_truncated.jpg", "missing.png"]
    ok = lines[0]
    # the keys, and the camera's condition measured in the frame (vision.quality)
    assert list(ok) == ["image", "cards", "face_down", "unreadable", "quality", "elapsed_ms"]
    assert ok["cards"], "the sample frame has readable cards"
    for card in ok["cards"]:
        assert list(card) == ["code", "confidence", "center", "corners"]
        assert len(card["code"]) == 2 and isinstance(card["confidence"], float)
    for entry in ok["face_down"]:
        assert list(entry) == ["center"] and len(entry["center"]) == 2
    for entry in ok["unreadable"]:  # a rank and colour sure where the code is not, or neither
        assert list(entry) in (["center"], ["center", "rank", "color", "confidence", "corners"])
        assert len(entry["center"]) == 2
    assert isinstance(ok["elapsed_ms"], float)
    for bad in lines[1:]:
        assert list(bad) == ["image", "error"] and bad["error"]


def test_recognize_plain_output(capsys: pytest.CaptureFixture[str]) -> None:
    good = labelled_images(SAMPLES)[0][0]
    assert main(["recognize", str(good)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(str(good)) and "ms" in out


def test_vision_eval_prints_the_metrics(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vision-eval", str(SAMPLES)]) == 0
    out = capsys.readouterr().out
    for word in ("recall", "misread rate", "false positives", "ms/frame"):
        assert word in out
    assert main(["vision-eval", "--json", str(SAMPLES)]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["frames"] == len(labelled_images(SAMPLES)) and 0 <= s["recall"] <= 1
    # per design: every label's design, and the parts add up to the whole
    designs = {json.loads(lab.read_text())["design"] for _, lab in labelled_images(SAMPLES)}
    assert set(s["by_design"]) == designs and len(designs) > 1
    for key in ("frames", "readable_cards", "correct", "reported", "misread", "face_down"):
        assert sum(d[key] for d in s["by_design"].values()) == s[key], key
    table = out.split("by design:\n")[1].split("by the camera's condition")[0].splitlines()
    assert [line.split()[0] for line in table] == sorted(designs)
    for line, d in zip(table, (s["by_design"][k] for k in sorted(designs)), strict=True):
        assert f"({d['correct']}/{d['readable_cards']})" in line


def test_vision_eval_without_design_labels_prints_no_design_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Labels that name no design (the format leaves it optional) are scored as one set."""
    for img, lab in labelled_images(SAMPLES)[:2]:
        (tmp_path / img.name).write_bytes(img.read_bytes())
        labels = json.loads(lab.read_text())
        labels.pop("design")
        (tmp_path / lab.name).write_text(json.dumps(labels))
    assert main(["vision-eval", str(tmp_path)]) == 0
    assert "by design" not in capsys.readouterr().out
    assert main(["vision-eval", "--json", str(tmp_path)]) == 0
    assert list(json.loads(capsys.readouterr().out)["by_design"]) == [""]


def test_vision_eval_refuses_a_directory_without_labels(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vision-eval", str(tmp_path)]) == 2
    assert "no labelled images" in capsys.readouterr().err


def test_output_piped_into_a_reader_that_leaves_stops_quietly() -> None:
    """``recognize --json ... | head -1``: the first line arrives whole, then the command
    stops with SIGPIPE's status and no traceback."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "recognize", "--json",
                             str(SAMPLES), str(SAMPLES)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=SAMPLES.parent)
    first = json.loads(proc.stdout.readline())
    proc.stdout.close()  # the reader leaves after one line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert first["cards"] and "Traceback" not in err and "BrokenPipe" not in err


def test_a_broken_pipe_that_is_not_our_output_is_still_an_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A device's socket closing under a command is not a reader leaving: it propagates."""
    import argparse

    import controller.cli as cli

    def broken(args: argparse.Namespace) -> int:
        raise BrokenPipeError("socket closed by the table board")

    parser = argparse.ArgumentParser(prog="monster-match")
    parser.add_subparsers(dest="command").add_parser("serve").set_defaults(func=broken)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    with pytest.raises(BrokenPipeError, match="table board"):
        cli.main(["serve"])


def test_recognize_with_workers_writes_the_same_lines_in_the_same_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--workers 2``: every sample, a corrupt and a truncated file and a missing one, read
    by two processes, give the lines one process gives, in the same order (times aside)."""
    for img, _ in labelled_images(SAMPLES):
        shutil.copy(img, tmp_path / img.name)
    (tmp_path / "m_corrupt.jpg").write_bytes(b"this is not a jpeg at all")
    data = labelled_images(SAMPLES)[0][0].read_bytes()
    (tmp_path / "n_truncated.jpg").write_bytes(data[: len(data) // 2])
    runs = []
    for workers in ("1", "2"):
        status = main(["recognize", "--json", "--workers", workers, str(tmp_path),
                       str(tmp_path / "missing.png")])
        lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        for line in lines:
            line.pop("elapsed_ms", None)
        runs.append((status, lines))
    assert runs[0] == runs[1]
    status, lines = runs[0]
    assert status == 1 and len(lines) == len(labelled_images(SAMPLES)) + 3
    assert [("error" in x) for x in lines].count(True) == 3
    assert sum(len(x.get("cards", [])) for x in lines) > 20
    assert main(["recognize", "--workers", "-1", str(tmp_path)]) == 2
    assert "--workers" in capsys.readouterr().err


def test_vision_eval_with_workers_scores_alike(capsys: pytest.CaptureFixture[str]) -> None:
    scores = []
    for workers in ("1", "2"):
        assert main(["vision-eval", "--json", "--calibrated", "--workers", workers,
                     str(SAMPLES)]) == 0
        s = json.loads(capsys.readouterr().out)
        s.pop("ms_per_frame_median")
        for d in [*s["by_design"].values(), *s["by_image_warning"].values()]:
            d.pop("ms_per_frame_median")
        scores.append(s)
    assert scores[0] == scores[1] and scores[0]["correct"] > 20


def test_vision_eval_frames_out_says_card_by_card_what_each_frame_got(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--frames-out``: a line per frame whose counts add up to the summary, whose missed
    cards are the labels' readable cards less the right reads, and a wrong read planted in
    a result shows as a misread of the frame it came from."""
    out = tmp_path / "frames.jsonl"
    assert main(["vision-eval", "--json", "--frames-out", str(out), str(SAMPLES)]) == 0
    summary = json.loads(capsys.readouterr().out)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    pairs = labelled_images(SAMPLES)
    assert [x["image"] for x in lines] == [str(img) for img, _ in pairs]
    for key in ("readable_cards", "correct", "reported", "misread", "false_positives"):
        assert sum(x[key] for x in lines) == summary[key], key
    for line, (_, lab) in zip(lines, pairs, strict=True):
        readable = [c for c in json.loads(lab.read_text())["cards"]
                    if c["code"] != "face_down" and c.get("readable", True)]
        assert len(line["missed_cards"]) == len(readable) - line["correct"]
        assert {m["code"] for m in line["missed_cards"]} <= {c["code"] for c in readable}
        assert len(line["misread_cards"]) == line["misread"]
    assert main(["vision-eval", "--frames-out", str(tmp_path / "no" / "dir.jsonl"),
                 str(SAMPLES)]) == 2
    assert "dir.jsonl" in capsys.readouterr().err


def test_frame_report_names_a_planted_misread() -> None:
    from vision.evaluate import frame_report

    img, lab = labelled_images(SAMPLES)[2]
    labels = json.loads(lab.read_text())
    result = Recognizer().recognize(load_image(img))
    assert result["cards"]
    wrong = dict(result["cards"][0])
    true_code = wrong["code"]
    wrong["code"] = "AS" if true_code != "AS" else "KD"
    report = frame_report({**result, "cards": [wrong, *result["cards"][1:]]}, labels)
    assert report["misread_cards"][0]["code"] == true_code
    assert report["misread_cards"][0]["read"] == wrong["code"]
    assert true_code in {m["code"] for m in report["missed_cards"]}
    assert frame_report(result, labels)["misread_cards"] == []


def _session_processes(sid: int) -> list[int]:
    """The live processes of session ``sid`` (from /proc: the sixth field of stat)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_ctrl_c_stops_a_run_with_workers_quietly() -> None:
    """Ctrl-C (SIGINT to the terminal's whole process group) during ``--workers 2``: the
    command stops at once with status 130, no worker prints a traceback, and no worker is
    left behind; the lines written before are whole."""
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "recognize", "--json",
                             "--workers", "2", *[str(SAMPLES)] * 10], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=SAMPLES.parent, start_new_session=True)
    first = json.loads(proc.stdout.readline())  # the workers are up and reading
    os.killpg(proc.pid, signal.SIGINT)
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err.decode() and first["cards"]
    for line in rest.decode().splitlines():
        json.loads(line)
    deadline = time.time() + 10
    while _session_processes(proc.pid) and time.time() < deadline:
        time.sleep(0.1)
    assert _session_processes(proc.pid) == []


def _suite(root: Path) -> dict[str, Path]:
    """A lab's suite in folders: two samples in ``a/``; in ``b/`` a third as a lossless TIFF
    (the same pixels its JPEG decodes to) and a truncated JPEG, both labelled; a hidden
    folder's copy, which is left out. The files by role."""
    import cv2

    pairs = labelled_images(SAMPLES)
    for sub in ("a", "b", ".trash"):
        (root / sub).mkdir(parents=True)
    for img, lab in pairs[:2]:
        shutil.copy(img, root / "a" / img.name)
        shutil.copy(lab, root / "a" / lab.name)
    shutil.copy(pairs[0][0], root / ".trash" / pairs[0][0].name)
    shutil.copy(pairs[0][1], root / ".trash" / pairs[0][1].name)
    tif_source, tif_label = pairs[2]
    assert cv2.imwrite(str(root / "b" / "frame.tif"), load_image(tif_source))
    shutil.copy(tif_label, root / "b" / "frame.json")
    data = pairs[3][0].read_bytes()
    (root / "b" / "broken.jpg").write_bytes(data[: len(data) // 2])
    shutil.copy(pairs[3][1], root / "b" / "broken.json")
    return {"tif": root / "b" / "frame.tif", "tif_source": tif_source,
            "broken": root / "b" / "broken.jpg"}


def test_vision_eval_scores_a_suite_in_folders_and_lists_the_frames_it_cannot_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``vision-eval --recursive``: the frames of every folder (a TIFF too, read as its
    source JPEG is), scored in all and per folder; a truncated frame is listed with its
    error and not scored, the rest are, and the exit status is 1. Without ``--recursive``
    a suite kept in folders is refused with the hint."""
    files = _suite(tmp_path)
    assert main(["vision-eval", str(tmp_path)]) == 2
    assert "subdirectories hold 4: --recursive" in capsys.readouterr().err
    out = tmp_path / "frames.jsonl"
    assert main(["vision-eval", "--json", "-r", "--frames-out", str(out), str(tmp_path)]) == 1
    s = json.loads(capsys.readouterr().out)
    assert s["frames"] == 3 and s["unread_frames"] == 1
    assert s["unread"] == [f"{files['broken']}: truncated JPEG (no end-of-image marker)"]
    assert set(s["by_folder"]) == {"a", "b"}
    assert (s["by_folder"]["a"]["frames"], s["by_folder"]["b"]["frames"]) == (2, 1)
    assert s["by_folder"]["b"]["unread_frames"] == 1
    for key in ("readable_cards", "correct", "reported"):
        assert sum(f[key] for f in s["by_folder"].values()) == s[key] > 0, key
    lines = {Path(x["image"]).name: x for x in map(json.loads, out.read_text().splitlines())}
    assert lines["broken.jpg"]["error"].endswith("truncated JPEG (no end-of-image marker)")
    expected = score_frame(Recognizer().recognize(load_image(files["tif_source"])),
                           json.loads(files["tif_source"].with_suffix(".json").read_text()))
    assert (lines["frame.tif"]["correct"], lines["frame.tif"]["reported"]) == (
        expected.correct, expected.reported)
    assert main(["vision-eval", "-r", str(tmp_path)]) == 1
    text = capsys.readouterr().out
    assert "by folder:" in text and "frames not read 1" in text
    assert f"not read: {files['broken']}: truncated JPEG" in text


@pytest.mark.parametrize(("card", "message"), [
    ({"code": "10H"}, 'card 2: "10H" is not a card code (a rank of A23456789TJQK and a suit '
                      'of SHDC, a ten as T: "TH"), nor "face_down"'),
    ({"code": "qh"}, 'card 2: "qh" is not a card code (a rank of A23456789TJQK and a suit of '
                     'SHDC, a ten as T: "QH"), nor "face_down"'),
    ({"card_width_px": None}, 'card 2: "card_width_px" must be a number above 0, not null'),
    ({"center": [10]}, 'card 2: "center" must be [x, y] in image pixels, not [10]'),
    ({"readable": "yes"}, 'card 2: "readable" must be true or false, not "yes"'),
], ids=["ten", "lower-case", "no-width", "centre", "readable"])
def test_vision_eval_refuses_a_wrong_label_before_it_reads_a_frame(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], card: dict, message: str) -> None:
    """A label a lab wrote by hand with a card the scores cannot use (a ten as ``10H``, a
    width left out, ...) would score a suite wrongly without a word: it is refused, naming
    the file and the card, before any frame is read (the last file in order holds it, and
    no frame's line was written)."""
    pairs = labelled_images(SAMPLES)
    for img, lab in pairs[:3]:
        shutil.copy(img, tmp_path / img.name)
        shutil.copy(lab, tmp_path / lab.name)
    last = tmp_path / pairs[2][1].name
    labels = json.loads(last.read_text())
    labels["cards"][1] = {**labels["cards"][1], **card}
    last.write_text(json.dumps(labels))
    out = tmp_path / "frames.jsonl"
    assert main(["vision-eval", "--frames-out", str(out), str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"monster-match vision-eval: {last}: {message}"
    assert out.read_text() == ""
    last.write_text('{"cards": [')
    assert main(["vision-eval", str(tmp_path)]) == 2
    assert f"{last}: not JSON (" in capsys.readouterr().err


def test_vision_eval_calibrated_names_a_label_without_corners(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    img, lab = labelled_images(SAMPLES)[0]
    shutil.copy(img, tmp_path / img.name)
    labels = json.loads(lab.read_text())
    del labels["cards"][0]["corners"]
    (tmp_path / lab.name).write_text(json.dumps(labels))
    assert main(["vision-eval", "--calibrated", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"monster-match vision-eval: {tmp_path / lab.name}: its cards' \"corners\" are not "
        "four [x, y] points each: it cannot be read as a calibrated table's frame")


def test_recognize_recursive_reads_a_suite_in_folders(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``recognize -r``: the images of every folder but the hidden ones, in path order, a
    TIFF among them; without it, a directory whose images lie in folders gives the hint."""
    files = _suite(tmp_path)
    assert main(["recognize", "--json", str(tmp_path)]) == 2
    assert "their subdirectories hold 4: --recursive reads them" in capsys.readouterr().err
    assert main(["recognize", "--json", "--recursive", str(tmp_path)]) == 1
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [Path(x["image"]).relative_to(tmp_path).as_posix() for x in lines] == [
        *(f"a/{img.name}" for img, _ in labelled_images(SAMPLES)[:2]), "b/broken.jpg",
        "b/frame.tif"]
    assert "error" in lines[2]
    source = Recognizer().recognize(load_image(files["tif_source"]))
    assert [c["code"] for c in lines[3]["cards"]] == [c["code"] for c in source["cards"]]


def test_vision_eval_names_its_misreads(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A card read right but labelled as another (here on purpose) is a misread, and the
    report says which: ``labelled -> read``, counted."""
    from vision.evaluate import match_reports

    img, lab = labelled_images(SAMPLES)[0]
    labels = json.loads(lab.read_text())
    result = Recognizer().recognize(load_image(img))
    read = result["cards"][0]
    best, _ = match_reports([read], labels["cards"])[0]
    assert labels["cards"][best]["code"] == read["code"]
    wrong = "KC" if read["code"] != "KC" else "QC"
    labels["cards"][best]["code"] = wrong
    shutil.copy(img, tmp_path / img.name)
    (tmp_path / lab.name).write_text(json.dumps(labels))
    assert main(["vision-eval", "--json", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["misreads"] == {f"{wrong}->{read['code']}": 1}
    assert main(["vision-eval", str(tmp_path)]) == 0
    assert f"misreads (labelled -> read): {wrong}->{read['code']}\n" in capsys.readouterr().out


def test_vision_eval_frames_out_is_on_disk_frame_by_frame(tmp_path: Path) -> None:
    """``--frames-out`` is written a line at a time: the file first shows a frame's line or a
    few, not a block of a dozen (as it did, block-buffered), so a run killed with ``kill
    -9`` keeps a whole line for every frame it scored."""
    import os
    import signal
    import subprocess
    import sys
    import time

    for k in range(4):  # 32 frames: the run outlasts the lines waited for
        for img, lab in labelled_images(SAMPLES):
            shutil.copy(img, tmp_path / f"{k}_{img.name}")
            shutil.copy(lab, tmp_path / f"{k}_{lab.name}")
    out = tmp_path / "frames.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "controller", "vision-eval", "--json",
                             "--frames-out", str(out), str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: list[int] = []  # lines in the file each time it was looked at (10 ms apart)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and len(seen) < 2:
            if out.exists() and (n := out.read_text().count("\n")):
                seen.append(n)
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        proc.kill()
    assert seen[0] <= 4, seen  # (block-buffered: 12 lines at once)
    text = out.read_text()
    assert text.endswith("\n")
    lines = [json.loads(x) for x in text.splitlines()]
    assert seen[-1] <= len(lines) < 32 and all("readable_cards" in x for x in lines)
