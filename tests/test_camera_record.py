"""The camera's frames as evidence: the file kept is the frame read, its SHA-256 is in the
chained record with the camera's codes, and ``audit`` finds a frame altered, swapped or gone."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from controller.books import audit
from controller.fusion import CameraCard


def _camera_reads(svc) -> list[dict]:  # noqa: ANN001
    return [json.loads(r["payload"]) for r in svc.store.db.execute(
        "SELECT payload FROM audit WHERE kind = 'camera_read' ORDER BY id")]


@pytest.mark.parametrize(("frame_format", "suffix"), [("png", ".png"), ("jpeg", ".jpg")])
def test_the_kept_frame_reads_again_as_the_camera_read_it(tmp_path: Path, frame_format: str,
                                                          suffix: str) -> None:
    """Reading the kept file again gives the camera's cards and confidences exactly, and the
    file's SHA-256 is the one the reading carries, in either format. (Before, the frame read
    was the rendered one and the file a JPEG of it: a demo round held for a suit misread (KS
    for KC) that the kept file did not show.)"""
    import dataclasses

    from controller.camera import SimulatedCamera
    from controller.config import load_config
    from vision.recognize import load_image

    settings = dataclasses.replace(load_config().camera, frame_format=frame_format)
    camera = SimulatedCamera(tmp_path, seed=19, settings=settings)
    layout = {"seat1": ["KC", "9C"], "seat4": ["2H", "2D", "7S"], "dealer": ["JS", "XX"]}
    read = camera.capture(layout, "r1")
    assert read.frame_names == [f"r1{suffix}"]
    data = (tmp_path / f"r1{suffix}").read_bytes()
    assert data[:4] == (b"\x89PNG" if frame_format == "png" else b"\xff\xd8\xff\xe0")
    assert read.frame_sha256 == [hashlib.sha256(data).hexdigest()]
    again = camera.recognizer.recognize(load_image(tmp_path / f"r1{suffix}"))
    assert sorted((c["code"], c["confidence"]) for c in again["cards"]) \
        == sorted((c.code, c.confidence) for c in read.cards)
    assert len(read.cards) >= 3  # the comparison is not of two empty readings


def test_png_keeps_the_frame_as_the_camera_gave_it(tmp_path: Path) -> None:
    """Lossless: the kept PNG decodes to the very pixels the camera delivered, so keeping the
    frame costs the reading nothing."""
    import cv2
    import numpy as np

    from controller.camera import SimulatedCamera

    frame = np.random.default_rng(2).integers(0, 256, (72, 128, 3), np.uint8)
    kept, names, _ = SimulatedCamera(tmp_path)._keep(frame, "f")
    assert np.array_equal(kept[0], frame)
    assert np.array_equal(cv2.imread(str(tmp_path / names[0])), frame)


def test_a_burst_keeps_and_reads_every_frame(tmp_path: Path) -> None:
    from controller.camera import SimulatedCamera
    from controller.config import CameraSettings

    settings = CameraSettings("none", 150.0, (), (), "DICT_4X4_50", {}, {"seat1": (0.0, 0.0)},
                              model="models/cards_v4.onnx", burst=3)
    camera = SimulatedCamera(tmp_path, seed=3, settings=settings)
    read = camera.capture({"seat2": ["QH", "5S"]}, "b")
    assert read.frame_names == ["b.png", "b.b1.png", "b.b2.png"] and read.frames == 3
    assert read.frame_sha256 == [hashlib.sha256((tmp_path / n).read_bytes()).hexdigest()
                                 for n in read.frame_names]


def test_each_camera_reading_is_a_chained_record_with_its_frames(dealt_service,  # noqa: ANN001
                                                                  tmp_path: Path) -> None:
    """``camera_read``: the camera's code by card position, every frame with its SHA-256, the
    problems; the cards table and the round's frames list say the same. ``audit`` with the
    frames' directory passes, then names a frame altered and a frame gone."""
    svc, rid = dealt_service
    frames = tmp_path / "frames"
    frames.mkdir()
    digests = []
    for name, content in (("a.jpg", b"first frame"), ("b.jpg", b"second frame")):
        (frames / name).write_bytes(content)
        digests.append(hashlib.sha256(content).hexdigest())
    result = svc.camera_check(rid, [CameraCard("KH", "seat1", 0.999)], hole_up=False,
                              frame_names=["a.jpg", "b.jpg"], frame_sha256=digests)
    assert result.problems == []
    (record,) = _camera_reads(svc)
    assert record == {"hole_up": False, "camera": {"0": "KH"}, "problems": [],
                      "frames": [{"name": "a.jpg", "sha256": digests[0]},
                                 {"name": "b.jpg", "sha256": digests[1]}]}
    rnd = svc.table.round(rid)
    assert rnd.data["frames"] == ["a.jpg", "b.jpg"]
    assert [c["camera_code"] for c in rnd.cards] == ["KH"]
    assert audit(svc.store, frames) == []
    (frames / "a.jpg").write_bytes(b"another frame")
    (frames / "b.jpg").unlink()
    assert audit(svc.store, frames) == [
        f"round {rid}: camera frame a.jpg is not the frame read (its SHA-256 differs from the "
        "record's)",
        f"round {rid}: camera frame b.jpg is missing from {frames}"]
    assert audit(svc.store) == []  # without the directory, the frames are not looked at


def test_a_disagreement_is_recorded_with_the_reading_and_holds(dealt_service) -> None:  # noqa: ANN001
    svc, rid = dealt_service
    result = svc.camera_check(rid, [CameraCard("KD", "seat1", 0.999)], hole_up=False)
    assert result.problems == ["shoe/camera disagreement at seat1: shoe KH, camera KD"]
    (record,) = _camera_reads(svc)
    assert record["camera"] == {"0": "KD"} and record["problems"] == result.problems
    assert svc.table.current().state.value == "held"


def test_an_edited_camera_reading_breaks_the_chain(dealt_service) -> None:  # noqa: ANN001
    svc, rid = dealt_service
    svc.camera_check(rid, [CameraCard("KH", "seat1", 0.999)], hole_up=False)
    assert audit(svc.store) == []
    svc.store.db.execute("UPDATE audit SET payload = replace(payload, '\"KH\"', '\"KD\"') "
                         "WHERE kind = 'camera_read'")
    svc.store.db.commit()
    assert any("audit" in p for p in audit(svc.store))


def test_an_edited_camera_code_is_found(dealt_service) -> None:  # noqa: ANN001
    """The cards table's camera code is checked against the chained readings: changed, or set
    for a card the camera never read, ``audit`` names the card."""
    svc, rid = dealt_service
    svc.call(svc.table.deal, "5D")  # a second card, never seen by the camera
    svc.camera_check(rid, [CameraCard("KH", "seat1", 0.999)], hole_up=False)
    assert audit(svc.store) == []
    svc.store.db.execute("UPDATE cards SET camera_code = 'KD' WHERE round_id = ? AND "
                         "position = 0", (rid,))
    svc.store.db.execute("UPDATE cards SET camera_code = '5D' WHERE round_id = ? AND "
                         "position = 1", (rid,))
    svc.store.db.commit()
    assert audit(svc.store) == [
        f"round {rid} card 0: camera code 'KD' is not the recorded reading 'KH'",
        f"round {rid} card 1: camera code '5D' is not the recorded reading None"]


def test_digests_must_match_the_frames(dealt_service) -> None:  # noqa: ANN001
    svc, rid = dealt_service
    with pytest.raises(ValueError, match="one digest for each frame"):
        svc.camera_check(rid, [], hole_up=False, frame_names=["a.jpg", "b.jpg"],
                         frame_sha256=["00"])
    assert _camera_reads(svc) == []


def test_the_demo_s_frames_pass_the_audit_until_one_is_altered(tmp_path: Path) -> None:
    """``monster-match demo`` keeps its frames beside the database; ``monster-match audit``
    checks them there by default, and exits non-zero naming a frame replaced by another."""
    db = tmp_path / "d.db"
    run = [sys.executable, "-m", "controller", "demo", "--rounds", "2", "--pace", "0",
           "--db", str(db), "--seed", "5", "--port", "0"]
    demo = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert demo.returncode == 0, demo.stderr
    frames = db.with_suffix(".frames")
    kept = sorted(frames.glob("*.png"))
    assert len(kept) >= 4
    check = [sys.executable, "-m", "controller", "audit", "--db", str(db)]
    passed = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert passed.returncode == 0 and f"camera frames in {frames} as read" in passed.stdout
    shutil.copyfile(kept[1], kept[0])  # one round's frame swapped for another's
    failed = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1
    assert f"camera frame {kept[0].name} is not the frame read" in failed.stdout
    # replay checks the round's own frames: round 1's is the swapped one, round 2's are intact
    replay = [sys.executable, "-m", "controller", "replay", "--db", str(db), "--round"]
    first = subprocess.run([*replay, "1"], capture_output=True, text=True, timeout=60)
    assert first.returncode == 1 and "DISCREPANCY: round 1: camera frame" in first.stdout
    drawn = tmp_path / "drawn"
    second = subprocess.run([*replay, "2", "--reread", "--annotate", str(drawn)],
                            capture_output=True, text=True, timeout=120)
    assert second.returncode == 0 and "camera_read" in second.stdout
    assert ("camera readings read again from their kept frames: 2, every recorded code read "
            f"again; drawn in {drawn}") in second.stdout
    # each of round 2's readings drawn, named after its frame
    from controller.books import recorded_frames
    from controller.storage import Store

    store = Store(str(db))
    names = [name for _, name, _ in recorded_frames(store, 2)]
    store.close()
    assert sorted(p.name for p in drawn.iterdir()) == sorted(
        Path(n).with_suffix(".jpg").name for n in names if ".b" not in n)
    refused = subprocess.run([*replay, "2", "--annotate", str(drawn)], capture_output=True,
                             text=True, timeout=60)
    assert refused.returncode == 2 and "it needs --reread" in refused.stderr


def test_a_recorded_code_its_frame_does_not_bear_out_is_found(dealt_service,  # noqa: ANN001
                                                               tmp_path: Path) -> None:
    """``replay --reread``: the camera's recorded codes are read again from the kept frames by
    the reader the record names. A reading made as the camera read the frame passes; one
    that records a card the frame does not show (KH, which is not on this layout) is named."""
    from controller.camera import SimulatedCamera
    from controller.config import load_config
    from controller.reread import reread_round
    from vision.selfcheck import identity

    svc, rid = dealt_service
    camera = SimulatedCamera(tmp_path, seed=4)
    svc.camera_started(identity(camera.recognizer))
    reader = json.loads(svc.store.db.execute(
        "SELECT payload FROM audit WHERE kind = 'camera_started'").fetchone()[0])
    read = camera.capture({"seat1": ["9C", "4D"], "dealer": ["JS", "XX"]}, "f")
    assert read.cards, "the frame reads some card"
    svc.camera_check(rid, read.cards, hole_up=False, frame_names=read.frame_names,
                     frame_sha256=read.frame_sha256)
    cfg = load_config()
    assert reread_round(svc.store, cfg, rid, tmp_path, reader) == (1, [])
    svc.camera_check(rid, [CameraCard("KH", "seat1", 0.999)], hole_up=False,
                     frame_names=read.frame_names, frame_sha256=read.frame_sha256)
    assert reread_round(svc.store, cfg, rid, tmp_path, reader) == (2, [
        f"round {rid}: the recorded camera code KH is not read again from f.png"])
    # drawn: the frame with the cards read again, and what the record holds under the headline
    drawn = tmp_path / "drawn"
    assert reread_round(svc.store, cfg, rid, tmp_path, reader, drawn)[0] == 2
    from vision.annotate import annotate, headline
    from vision.recognize import load_image

    frame = load_image(tmp_path / "f.png")
    picture = load_image(drawn / "f.jpg")
    result = camera.recognizer.recognize(frame)
    assert picture.shape == frame.shape
    assert "KH" not in {c["code"] for c in result["cards"]}
    # (the caption's words are drawn, not stored: the drawing matches one made with them)
    # the recorded card named with its area (the round's first card went to seat 1)
    want = annotate(frame, result, caption="recorded: seat1 KH | not read again: KH")
    other = annotate(frame, result, caption="recorded: KH | not read again: KH")
    words = np.any(want != other, axis=-1)  # where the two captions differ
    assert words.sum() > 50
    err = np.abs(picture.astype(int) - want).sum(-1)[words].mean()
    assert err * 3 < np.abs(picture.astype(int) - other).sum(-1)[words].mean()  # (JPEG)
    assert headline(result).startswith(f"{len(result['cards'])} read")
    # a reader other than the one recorded does not read them
    other = {**reader, "model": "cards_v4.onnx", "model_sha256": "0" * 64}
    done, problems = reread_round(svc.store, cfg, rid, tmp_path, other)
    assert done == 0 and "its frames were read by cards_v4.onnx" in problems[0]


def test_a_caption_names_each_recorded_card_s_area() -> None:
    """What the record holds, under a drawing's headline: by area (the cards' spots in the
    round, in card order), else in card order alone."""
    from controller.reread import Reread

    def caption(areas: list[str], unread: list[str] = []) -> str:  # noqa: B006
        return Reread({}, np.zeros((1, 1, 3), np.uint8), None, ["9C", "JS", "4D", "-"],
                      unread, ["f.png"], areas).caption()

    assert caption(["seat1", "dealer", "seat1", "hit"]) == "recorded: seat1 9C 4D, dealer JS, hit -"
    assert caption([], ["JS"]) == "recorded: 9C JS 4D - | not read again: JS"
    assert caption(["seat1"]) == "recorded: 9C JS 4D -"  # areas of other cards: not guessed


def test_a_burst_is_drawn_on_the_layout_s_areas(dealt_service, tmp_path: Path) -> None:  # noqa: ANN001
    """A calibrated table's burst: the camera placed its fused cards by the first frame's
    calibration, and a reading read again is drawn placed the same way (the cards' areas
    named), not unplaced. (``cards_v4`` is the reader with a burst threshold.)"""
    from controller.camera import SimulatedCamera
    from controller.config import load_config
    from controller.reread import Rereader
    from vision.annotate import annotate
    from vision.calibration import assign_spots
    from vision.selfcheck import identity

    v4 = Path(__file__).resolve().parent.parent / "models" / "cards_v4.onnx"
    (tmp_path / "t.toml").write_text(
        f'[camera]\ncalibration = "aruco"\nburst = 3\nmodel = "{v4}"\n')
    cfg = load_config(tmp_path / "t.toml")
    svc, rid = dealt_service
    camera = SimulatedCamera(tmp_path, seed=4, settings=cfg.camera)
    read = camera.capture({"seat1": ["9C", "4D"], "dealer": ["JS", "XX"]}, "f")
    assert len(read.frame_names) == 3 and any(c.area != "off-layout" for c in read.cards)
    svc.camera_check(rid, read.cards, hole_up=False, frame_names=read.frame_names,
                     frame_sha256=read.frame_sha256)
    reading = _camera_reads(svc)[-1]
    again = Rereader(cfg, tmp_path).reread(rid, reading, identity(camera.recognizer),
                                           {0: "seat1:1"})
    assert again.calibration is not None and again.areas == ["seat1"]
    placed = assign_spots(again.result, again.calibration)
    assert {c["spot"] for c in placed["cards"]} >= {c.area for c in read.cards}
    drawing = again.drawing()
    unplaced = annotate(again.image, again.result, caption=again.caption())
    assert np.any(drawing != unplaced), "the areas are drawn"


def test_a_frame_that_cannot_be_calibrated_is_read_again_at_its_own_sizes(
        dealt_service, tmp_path: Path) -> None:  # noqa: ANN001
    """A table calibrated by ArUco markers whose kept frame shows none: the camera read it at
    the frame's own card sizes, and so does ``--reread``, instead of failing."""
    from controller.camera import SimulatedCamera
    from controller.config import load_config
    from controller.reread import reread_round
    from vision.selfcheck import identity

    svc, rid = dealt_service
    camera = SimulatedCamera(tmp_path, seed=4)  # no settings: the layout carries no markers
    svc.camera_started(identity(camera.recognizer))
    reader = json.loads(svc.store.db.execute(
        "SELECT payload FROM audit WHERE kind = 'camera_started'").fetchone()[0])
    read = camera.capture({"seat1": ["9C", "4D"], "dealer": ["JS", "XX"]}, "f")
    svc.camera_check(rid, read.cards, hole_up=False, frame_names=read.frame_names,
                     frame_sha256=read.frame_sha256)
    (tmp_path / "t.toml").write_text('[camera]\ncalibration = "aruco"\n')
    cfg = load_config(tmp_path / "t.toml")
    assert reread_round(svc.store, cfg, rid, tmp_path, reader) == (1, [])


def test_audit_shows_its_progress_over_many_frames(dealt_service, tmp_path: Path,  # noqa: ANN001
                                                   monkeypatch, capsys) -> None:  # noqa: ANN001
    """A long record's frames take a while to hash: ``audit`` shows a bar on stderr from
    ``PROGRESS_FRAMES`` frames (here lowered to 2), none with ``--json``."""
    from controller.cli import main
    from controller.commands import books

    svc, rid = dealt_service
    names = [f"{i}.png" for i in range(3)]
    for name in names:
        (tmp_path / name).write_bytes(name.encode())
    svc.camera_check(rid, [], hole_up=False, frame_names=names,
                     frame_sha256=[hashlib.sha256(n.encode()).hexdigest() for n in names])
    monkeypatch.setattr(books, "PROGRESS_FRAMES", 2)
    db = str(svc.store.path)
    assert main(["audit", "--db", db, "--frames", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert "camera frames: 100%" in out.err and "3/3" in out.err and "as read" in out.out
    assert main(["audit", "--db", db, "--frames", str(tmp_path), "--json"]) == 0
    assert "camera frames" not in capsys.readouterr().err
