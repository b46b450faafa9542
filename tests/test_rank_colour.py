"""A card's rank and colour where its suit is in doubt (``vision.rankcolour``): the reads,
the merge, the scoring, the threshold's calibration, and the shoe cross-check."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from controller.cards import ShoeComposition
from controller.fusion import CameraCard, CameraRankColour, cross_check
from vision import readsfile
from vision.calibrate_rank_colour import main as calibrate_main
from vision.calibrate_rank_colour import sweep as rank_colour_sweep
from vision.codes import CARD_CODES, CLASS_INDEX, CLASSES
from vision.evaluate import labelled_images, score_frame
from vision.merge import merge_reads
from vision.rankcolour import (
    RANK_COLOUR_NAMES,
    name,
    of_code,
    rank_colour_probs,
    representative,
    with_rank_colour,
)
from vision.recognize import DEFAULT_MODEL, Recognizer, load_image

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


def test_the_26_classes_sum_the_two_suits_of_each_colour() -> None:
    """Each code's probability lands on its own rank and colour, and nowhere else; face down
    and reject on none; the representative code of a class has its rank and colour."""
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(len(CLASSES)), size=20)
    rc = rank_colour_probs(probs)
    assert rc.shape == (20, 26)
    for k, (rank, colour) in enumerate(RANK_COLOUR_NAMES):
        codes = [CLASS_INDEX[c] for c in CARD_CODES if of_code(c) == (rank, colour)]
        assert len(codes) == 2
        assert np.allclose(rc[:, k], probs[:, codes].sum(1), atol=1e-6)
        assert of_code(CLASSES[representative(k)]) == name(k) == (rank, colour)
    assert np.allclose(rc.sum(1), probs[:, :52].sum(1), atol=1e-5)


@pytest.fixture(scope="module")
def sample_reads() -> list[tuple[list, dict]]:
    rec = Recognizer()
    return [(rec.read(load_image(img)), json.loads(lab.read_text()))
            for img, lab in labelled_images(SAMPLES)]


def test_rank_and_colour_on_the_samples(sample_reads: list[tuple[list, dict]]) -> None:
    """On the sample frames, at the codes' operating threshold for both: the cards reported by
    their codes are unchanged, more readable cards are known by rank and colour than by code,
    and every refusal that names a rank and colour names that of the card it lies on (the
    samples are of the validation designs)."""
    rec = Recognizer()
    codes_only = more = 0
    for reads, labels in sample_reads:
        plain = merge_reads(reads, rec.threshold)
        assert all("rank" not in u for u in plain["unreadable"])
        both = with_rank_colour(plain, reads, rec.threshold)
        assert both["cards"] == plain["cards"] and both["face_down"] == plain["face_down"]
        entries = [u for u in both["unreadable"] if "rank" in u]
        for u in entries:
            assert list(u) == ["center", "rank", "color", "confidence", "corners"]
            assert u["confidence"] >= rec.threshold and len(u["corners"]) == 4
            # not a card reported by its code (that one lies within half a card width)
            for c in both["cards"]:
                width = np.linalg.norm(np.subtract(c["corners"][1], c["corners"][0]))
                assert (np.linalg.norm(np.subtract(c["center"], u["center"])) >= 0.2 * width)
        score = score_frame(both, labels)
        assert score.rc_misread == 0, labels["design"]
        codes_only += score.correct
        more += score.rc_correct
    assert codes_only >= 36 and more >= 5, (codes_only, more)


def test_reads_keep_their_rank_and_colour_when_saved(sample_reads: list[tuple[list, dict]],
                                                    tmp_path: Path) -> None:
    """Packed and unpacked, reads keep their rank and colour (the merge with it is the same);
    rows of 13, saved before they were kept, unpack to reads that know none, and the
    rank-and-colour calibration refuses such a file."""
    reads, labels = sample_reads[0]
    again = readsfile.unpack(readsfile.pack(reads))
    assert [(r.rank_colour, r.rank_colour_prob) for r in again] == [
        (r.rank_colour, r.rank_colour_prob) for r in reads]
    assert any(r.rank_colour >= 0 for r in reads)
    rec = Recognizer()
    assert rec.merge(again, rank_colour_threshold=0.99) == rec.merge(reads,
                                                                     rank_colour_threshold=0.99)
    old = readsfile.unpack(readsfile.pack(reads)[:, :13])
    assert all(r.rank_colour == -1 for r in old)
    assert all("rank" not in u for u in rec.merge(old, rank_colour_threshold=0.99)["unreadable"])
    path = tmp_path / "old.npz"
    readsfile.save(path, [(readsfile.pack(reads)[:, :13], labels)],
                   readsfile.reader_identity(rec))
    with pytest.raises(ValueError, match="without their ranks"):
        rank_colour_sweep(DEFAULT_MODEL, [path])


def test_the_threshold_is_picked_by_the_misread_rule(sample_reads: list[tuple[list, dict]],
                                                     tmp_path: Path) -> None:
    """The calibration scores saved reads at each threshold (the rank-and-colour recall
    falls as the threshold rises, never below the codes'), picks by the rule (at most one
    misread per thousand reports at the 95 % bound: 80 sample frames cannot show that, so no
    threshold is written), and with a looser limit writes its pick to a copy of the model's
    .json, which the recogniser then applies."""
    rec = Recognizer()
    path = tmp_path / "reads.npz"
    readsfile.save(path, [(readsfile.pack(r), lab) for r, lab in sample_reads],
                   readsfile.reader_identity(rec))
    rows = rank_colour_sweep(DEFAULT_MODEL, [path])
    recalls = [r["rank_colour_recall"] for r in rows]
    assert recalls == sorted(recalls, reverse=True) and recalls[-1] >= rows[0]["recall"]
    assert rows[0]["rank_colour_recall"] > rows[0]["recall"] and rows[0]["reported"] > 0
    model = tmp_path / DEFAULT_MODEL.name
    model.write_bytes(DEFAULT_MODEL.read_bytes())
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    meta.pop("rank_colour_threshold", None)
    model.with_suffix(".json").write_text(json.dumps(meta))
    (tmp_path / meta["gate"]).write_bytes((DEFAULT_MODEL.parent / meta["gate"]).read_bytes())
    assert Recognizer(model).rank_colour_threshold is None
    assert calibrate_main([str(model), "--unseen-reads", str(path), "--write"]) == 1
    assert "rank_colour_threshold" not in json.loads(model.with_suffix(".json").read_text())
    assert calibrate_main([str(model), "--unseen-reads", str(path), "--max-error", "1",
                           "--max-fp", "5", "--write"]) == 0
    written = json.loads(model.with_suffix(".json").read_text())
    assert written["rank_colour_threshold"] == 0.99  # every threshold keeps so loose a rule
    assert written["rank_colour_sweeps"]["unseen"]["reads"] == ["reads.npz"]
    assert Recognizer(model).rank_colour_threshold == written["rank_colour_threshold"]


SHOE = ShoeComposition.spanish(6)
DEALT = [{"position": 0, "spot": "seat1:1", "code": "QS"},
         {"position": 1, "spot": "seat1:2", "code": "7H"},
         {"position": 2, "spot": "dealer:up", "code": "KD"},
         {"position": 3, "spot": "extra", "code": "5D"}]  # a hit, to some seat


def test_the_shoe_is_checked_against_rank_and_colour() -> None:
    """A shoe card whose code the camera could not read is confirmed by its rank and colour
    (recorded as such), contradicted by another (held), and a hit's rank and colour is
    expected; the same card read by code and by rank and colour is one card; a rank and
    colour with no shoe card left is listed, not a problem."""
    ok = cross_check(DEALT, [CameraCard("7H", "seat1")], SHOE,
                     [CameraRankColour("Q", "black", "seat1"),
                      CameraRankColour("K", "red", "dealer"),
                      CameraRankColour("5", "red", "seat1")])
    assert ok.problems == [] and ok.unmatched_rank_colour == []
    assert ok.camera_by_position == {0: "Q black", 1: "7H", 2: "K red", 3: None}
    wrong = cross_check(DEALT, [CameraCard("7H", "seat1")], SHOE,
                        [CameraRankColour("Q", "red", "seat1")])
    assert wrong.problems == ["shoe/camera disagreement at seat1: shoe QS, camera Q red"]
    assert wrong.camera_by_position[0] == "Q red"
    twice = cross_check(DEALT, [CameraCard("7H", "seat1")], SHOE,
                        [CameraRankColour("7", "red", "seat1")])  # the 7H seen again
    assert twice.problems == [] and twice.camera_by_position[0] is None
    extra = cross_check(DEALT, [CameraCard("7H", "seat1"), CameraCard("QS", "seat1")], SHOE,
                        [CameraRankColour("9", "black", "seat1")])
    assert extra.problems == [] and extra.unmatched_rank_colour == ["9 black at seat1"]


def test_the_table_records_a_rank_and_colour_and_holds_on_another(dealt_service) -> None:  # noqa: ANN001
    """Through the table service and its SQLite file: the shoe's KH confirmed by the camera's
    "K red" is recorded as the camera's reading of that card, and no problem; a "K black"
    there holds the round, saying both."""
    svc, rid = dealt_service
    ok = svc.camera_check(rid, [], hole_up=False,
                          rank_colour=[CameraRankColour("K", "red", "seat1", 0.999)])
    assert ok.problems == [] and svc.table.current().state.value != "held"
    row = svc.store.db.execute("SELECT code, camera_code FROM cards WHERE round_id = ?",
                               (rid,)).fetchone()
    assert (row["code"], row["camera_code"]) == ("KH", "K red")
    bad = svc.camera_check(rid, [], hole_up=False,
                           rank_colour=[CameraRankColour("K", "black", "seat1", 0.999)])
    assert bad.problems == ["shoe/camera disagreement at seat1: shoe KH, camera K black"]
    assert svc.table.current().state.value == "held"


def _read(code: str, other: str, p: float, x: float, y: float = 0.0):  # noqa: ANN202
    """A read of an index corner at (x, y), axes upright, a card 60 x 87: ``code`` at ``p``,
    ``other`` at ``1 - p``."""
    from vision.merge import _Read
    from vision.proposals import IndexFrame

    f = IndexFrame(np.array([x, y]), np.array([1.0, 0.0]), np.array([0.0, 1.0]), 60.0, 87.0,
                   True)
    probs = np.zeros((1, len(CLASSES)))
    probs[0, CLASS_INDEX[code]], probs[0, CLASS_INDEX[other]] = p, 1 - p
    rc = rank_colour_probs(probs)[0]
    return _Read(CLASS_INDEX[code], p, 1.0, f, 1.0, int(rc.argmax()), float(rc.max()))


def test_a_card_read_by_code_is_not_given_a_rank_and_colour_again() -> None:
    """Reads too unsure of their code to join a card reported by it, sure of its rank and
    colour, a hand step off its corner (a neighbour's corner showing its index), are that
    card, not another of the same rank and colour; a neighbour of another rank is its own."""
    card = [_read("7S", "7C", 0.9995, 0.0), _read("7S", "7C", 0.9993, 2.0)]
    beside = _read("7C", "7S", 0.6, 24.0, 26.0)  # 0.4 widths along, 0.3 heights down
    result = merge_reads(card + [beside], 0.997)
    assert [c["code"] for c in result["cards"]] == ["7S"]
    assert all("rank" not in u for u in with_rank_colour(result, card + [beside],
                                                         0.997)["unreadable"])
    other = _read("9C", "9S", 0.6, 24.0, 26.0)
    named = [u for u in with_rank_colour(merge_reads(card + [other], 0.997), card + [other],
                                         0.997)["unreadable"] if "rank" in u]
    assert [(u["rank"], u["color"]) for u in named] == [("9", "black")]


def test_the_commands_give_ranks_and_colours_when_asked(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``recognize --json --rank-colour-threshold`` puts them on refusals,
    ``--no-rank-colour`` leaves every refusal its centre alone; ``vision-eval`` with a
    threshold reports the rank-and-colour recall and misreads beside the codes'."""
    from controller.cli import main

    frame = str(SAMPLES / "proc-5-1011_001.jpg")
    assert main(["recognize", "--json", "--rank-colour-threshold", "0.99", frame]) == 0
    named = [u for u in json.loads(capsys.readouterr().out)["unreadable"] if "rank" in u]
    assert named and all(u["color"] in ("red", "black") for u in named)
    assert main(["recognize", "--json", "--no-rank-colour", frame]) == 0
    assert all(list(u) == ["center"]
               for u in json.loads(capsys.readouterr().out)["unreadable"])
    assert main(["vision-eval", "--json", "--rank-colour-threshold", "0.99", str(SAMPLES)]) == 0
    score = json.loads(capsys.readouterr().out)
    assert score["rank_colour_recall"] > score["recall"] and score["rc_reported"] > 0
    assert main(["vision-eval", "--rank-colour-threshold", "0.99", str(SAMPLES)]) == 0
    assert "rank and colour: recall" in capsys.readouterr().out
