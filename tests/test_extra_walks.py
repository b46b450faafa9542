"""The extra walks (``vision.recognize.EXTRA_BAR``; the bundled reader's ``.json`` asks for
them at 0.9999 since the sixtieth session): their reads come after the pipeline's own and are
tagged with their bar; they add cards only at that bar, only where the pipeline's own reads
report none, and leave everything the pipeline reports as it was. Most tests here read at the
fifty-eighth session's bar, 0.9995, at which the samples show an added card."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from vision import readsfile
from vision.codes import CLASSES, FACE_DOWN_INDEX
from vision.evaluate import labelled_images, score_frame
from vision.merge import _Read, merge_reads, over_cards
from vision.proposals import IndexFrame
from vision.recognize import DEFAULT_MODEL, EXTRA_WALKS_BAR, Recognizer, load_image
from vision.settings import applied, parse
from vision.sweep import OWN_SUFFIX, sweep_reads, sweep_rendered

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"
BAR = 0.9995
EXTRA = [parse(f"recognize.EXTRA_BAR={BAR}")]


@pytest.fixture(scope="module")
def rec() -> Recognizer:
    """The bundled reader with the extra walks."""
    return Recognizer(extra_bar=BAR)


@pytest.fixture(scope="module")
def plain_reader() -> Recognizer:
    """The bundled reader without the extra walks."""
    return Recognizer(extra_bar=0)


def _key(r: _Read) -> tuple:
    f = r.frame
    return (r.cls, r.prob, r.code_mass, *f.point, *f.x_axis, f.width, f.height, f.direct)


def test_the_pipelines_own_reads_come_first_unchanged(rec: Recognizer,
                                                       plain_reader: Recognizer) -> None:
    assert rec.extra_walk_bar() == BAR
    assert plain_reader.extra_walk_bar() is None
    # the bundled reader as its .json asks, and --extra-walks: at the adopted bar
    assert Recognizer().extra_walk_bar() == EXTRA_WALKS_BAR == 0.9999
    img = load_image(SAMPLES / "neoclassical_000.jpg")
    both, plain = rec.read(img), plain_reader.read(img)
    assert all(r.extra_bar == 0.0 for r in plain)
    own = [r for r in both if not r.extra_bar]
    assert [_key(r) for r in both[:len(own)]] == [_key(r) for r in plain]
    assert [_key(r) for r in own] == [_key(r) for r in plain]
    extra = both[len(own):]
    assert len(extra) > 50  # the lone anchors' grid alone is dozens of places
    assert {r.extra_bar for r in extra} == {BAR}


def test_the_extra_walks_read_no_walked_place_over_a_reported_card(rec: Recognizer) -> None:
    # with EXTRA_OFF_CARDS off, the same places are read and then some: those left out are
    # exactly the ones whose card would lie over a card the own reads report, and the
    # cards come out the same (merge_reads adds none there)
    for name in ("neoclassical_000.jpg", "tigullio_000.jpg"):
        img = load_image(SAMPLES / name)
        reads, result = rec.read(img), rec.recognize(img)
        with applied([parse("recognize.EXTRA_OFF_CARDS=False")]):
            every = rec.read(img)
            unfiltered = rec.recognize(img)
        own = [r for r in reads if not r.extra_bar]
        assert [_key(r) for r in own] == [_key(r) for r in every if not r.extra_bar]
        extra = {_key(r)[3:] for r in reads if r.extra_bar}
        left_out = [r for r in every if r.extra_bar and _key(r)[3:] not in extra]
        assert extra <= {_key(r)[3:] for r in every if r.extra_bar}
        assert len(left_out) > 20  # most of the walk's places: copies moved onto read cards
        cards = merge_reads(own, rec.threshold)["cards"]
        assert over_cards([r.frame for r in left_out], cards, own[0].place).all()
        assert _cards(result) == _cards(unfiltered)


def test_a_reader_at_another_threshold_walks_the_same_places(rec: Recognizer) -> None:
    # a sweep reads at 0.5 to score every threshold: its extra walks must leave out the
    # places over the cards reported at the model's threshold, as recognize's do (at 0.5
    # they left out more)
    img = load_image(SAMPLES / "tigullio_000.jpg")
    swept = Recognizer(threshold=0.5, extra_bar=BAR)
    assert swept.model_threshold == rec.model_threshold == rec.threshold != swept.threshold
    assert [_key(r) for r in swept.read(img)] == [_key(r) for r in rec.read(img)]


def _cards(result: dict) -> set[tuple[str, tuple[float, float]]]:
    return {(c["code"], tuple(c["center"])) for c in result["cards"]}


def test_recognize_adds_sure_cards_only_where_the_pipeline_reported_none(
        rec: Recognizer, plain_reader: Recognizer) -> None:
    right = {"plain": 0, "extra": 0}
    wrong = {"plain": 0, "extra": 0}
    added_at = []
    for image, label_file in labelled_images(SAMPLES):
        img, labels = load_image(image), json.loads(label_file.read_text())
        plain, more = plain_reader.recognize(img), rec.recognize(img)
        assert _cards(plain) <= _cards(more)  # nothing the pipeline reports is changed
        assert more["face_down"] == plain["face_down"]
        taken = [np.array(c["center"]) for c in plain["cards"]]
        for c in more["cards"]:
            if (c["code"], tuple(c["center"])) in _cards(plain):
                continue
            width = float(np.linalg.norm(np.subtract(c["corners"][1], c["corners"][0])))
            assert c["confidence"] >= BAR
            assert all(np.linalg.norm(np.array(c["center"]) - t) > 0.5 * width for t in taken)
            # a refusal under the added card is gone: the card stands in its place
            assert all(np.linalg.norm(np.array(u["center"]) - np.array(c["center"]))
                       > 0.5 * width for u in more["unreadable"])
            added_at.append((image.name, c["code"]))
        for name, result in (("plain", plain), ("extra", more)):
            score = score_frame(result, labels)
            right[name] += score.correct
            wrong[name] += score.misread
    # the hand of neoclassical_000 whose 2C the pipeline never reached
    assert ("neoclassical_000.jpg", "2C") in added_at
    assert right["extra"] == right["plain"] + len(added_at)
    assert wrong["extra"] == wrong["plain"] == 0


def _read(code: str, prob: float, point: tuple[float, float], bar: float = 0.0) -> _Read:
    f = IndexFrame(np.array(point, float), np.array([1.0, 0.0]), np.array([0.0, 1.0]),
                   60.0, 87.0, True)
    cls = FACE_DOWN_INDEX if code == "back" else CLASSES.index(code)
    return _Read(cls, prob, 1.0 if cls < 52 else 0.0, f, extra_bar=bar)


def test_merge_holds_extra_reads_to_their_bar_and_off_the_pipelines_cards() -> None:
    sure_extra = _read("7D", 0.9997, (400, 100), BAR)
    # alone, at their bar: a card; under it: nothing, and no refusal of it either
    assert [c["code"] for c in merge_reads([sure_extra], 0.997)["cards"]] == ["7D"]
    weak = merge_reads([_read("7D", 0.9990, (400, 100), BAR)], 0.997)
    assert weak["cards"] == []
    # a threshold above the bar is the bar
    assert merge_reads([sure_extra], 0.9998)["cards"] == []
    # over a card the pipeline reports, another code: the pipeline's card stays, alone
    own = _read("QH", 0.998, (100, 100))
    out = merge_reads([own, _read("QD", 0.9999, (101, 101), BAR)], 0.997)
    assert [c["code"] for c in out["cards"]] == ["QH"] and out["unreadable"] == []
    # over a face-down card the pipeline reports: nothing added
    back = _read("back", 0.99, (100, 100))
    out = merge_reads([back, _read("QD", 0.9999, (101, 101), BAR)], 0.997)
    assert out["cards"] == [] and len(out["face_down"]) == 1
    # a card of the extra reads with the code of a reported card, misjudged in size (a
    # card's index, 1.5 reported widths off): that card's other corner, not added; another
    # code there is another card
    small = IndexFrame(np.array([190.0, 100.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0]),
                       12.0, 17.0, True)
    for code, kept in (("QH", ["QH"]), ("8S", ["QH", "8S"])):
        far = _Read(CLASSES.index(code), 0.9999, 1.0, small, extra_bar=BAR)
        out = merge_reads([_read("QH", 0.998, (100, 100)), far], 0.997)
        assert [c["code"] for c in out["cards"]] == kept
    # a refused card the extra reads make sure: one card, no refusal, the other refusal kept
    refused = [_read("QH", 0.99, (100, 100)), _read("9C", 0.99, (400, 300))]
    out = merge_reads([*refused, _read("QH", 0.9996, (103, 99), BAR)], 0.997)
    assert [c["code"] for c in out["cards"]] == ["QH"]
    assert out["unreadable"] == [{"center": [430.0, 343.5]}]
    # without extra reads, the merge of the pipeline's own
    assert merge_reads(refused, 0.997) == merge_reads(
        [_read("QH", 0.99, (100, 100)), _read("9C", 0.99, (400, 300))], 0.997)


def _copy_model(tmp_path: Path, name: str = "cards_v7", **meta: object) -> Path:
    """The bundled models copied, the reader as ``name``, its ``.json`` updated by ``meta``
    (a key given ``None`` left out)."""
    for model in ("cards_v7.onnx", "gate_v2.onnx"):
        shutil.copy(DEFAULT_MODEL.parent / model, tmp_path / model)
    shutil.copy(DEFAULT_MODEL, tmp_path / f"{name}.onnx")
    data = {**json.loads(DEFAULT_MODEL.with_suffix(".json").read_text()), **meta}
    (tmp_path / f"{name}.json").write_text(json.dumps(
        {k: v for k, v in data.items() if v is not None}))
    return tmp_path / f"{name}.onnx"


def test_a_models_extra_bar(tmp_path: Path) -> None:
    assert Recognizer(_copy_model(tmp_path, extra_bar=0.9999)).extra_walk_bar() == 0.9999
    with applied(EXTRA):  # the model's 0 says none, whatever the setting
        assert Recognizer(_copy_model(tmp_path, extra_bar=0)).extra_walk_bar() is None
        assert Recognizer(_copy_model(tmp_path, extra_bar=None)).extra_walk_bar() == BAR
    # a model without the key reads as the setting says (by default without them)
    assert Recognizer(_copy_model(tmp_path, extra_bar=None)).extra_walk_bar() is None
    for bad in (1.5, 0.2, True, "0.9995", [0.9995]):
        with pytest.raises(ValueError, match="extra_bar must be"):
            Recognizer(_copy_model(tmp_path, extra_bar=bad))


def test_saved_reads_keep_the_extra_bar(rec: Recognizer, plain_reader: Recognizer,
                                        tmp_path: Path) -> None:
    reads = [_read("QH", 0.99, (100, 100)), _read("QH", 0.9996, (103, 99), BAR)]
    rows = readsfile.pack(reads)
    assert rows.shape == (2, readsfile.COLUMNS)
    assert [r.extra_bar for r in readsfile.unpack(rows)] == [0.0, BAR]
    assert merge_reads(readsfile.unpack(rows), 0.997) == merge_reads(reads, 0.997)
    # rows saved before the column: the pipeline's own reads
    assert [r.extra_bar for r in readsfile.unpack(rows[:, :15])] == [0.0, 0.0]
    plain = readsfile.reader_identity(plain_reader)
    assert plain["extra_walks"] is None
    extra = readsfile.reader_identity(rec)
    assert extra["extra_walks"]["bar"] == BAR and extra["extra_walks"]["off_cards"] == 0.997
    with applied([parse("recognize.EXTRA_OFF_CARDS=False")]):  # other places: other reads
        assert readsfile.reader_identity(rec)["extra_walks"]["off_cards"] is None
    with pytest.raises(ValueError, match="another extra walks"):
        readsfile.check_identity(plain, extra, tmp_path / "reads.npz")
    # a file saved before the key: made without extra walks
    readsfile.check_identity({k: v for k, v in plain.items() if k != "extra_walks"}, plain,
                             tmp_path / "reads.npz")


def test_a_sweep_scores_the_pipeline_without_its_extra_walks_for_no_more_reading(
        tmp_path: Path) -> None:
    plain, extra = str(_copy_model(tmp_path, "plain", extra_bar=0)), str(DEFAULT_MODEL)
    swept = sweep_rendered([plain, extra], 2, 31, 1, designs=["proc:1:1031"])
    models = swept["models"]
    own = Path(extra).name + OWN_SUFFIX
    assert set(models) == {Path(plain).name, Path(extra).name, own}
    # the extra reader's own places read exactly what the plain reader read
    assert models[own] == models[Path(plain).name]
    assert models[own][0]["readable_cards"] > 0


def test_reads_saved_at_one_bar_are_scored_at_the_readers_bar(tmp_path: Path) -> None:
    """The extra walks' bar decides which of their cards the merge keeps, not what is read:
    a sweep's reads saved with the extra walks at one bar, scored from the file by a reader
    whose ``.json`` names another, are that reader's own sweep of the same frames (how the
    sixtieth session judged several bars from one set of sweeps)."""
    (tmp_path / "low").mkdir()
    (tmp_path / "high").mkdir()
    low = _copy_model(tmp_path / "low", extra_bar=0.5)
    high = _copy_model(tmp_path / "high", extra_bar=0.9999)
    designs = ["proc:1:1031"]
    path = tmp_path / "reads.npz"
    saved = sweep_rendered([str(low)], 2, 31, 1, designs=designs, save_reads=path)
    direct = sweep_rendered([str(high)], 2, 31, 1, designs=designs)
    name = low.name
    assert saved["models"][name] != direct["models"][name]  # the bar does change cards
    assert saved["models"][name + OWN_SUFFIX] == direct["models"][name + OWN_SUFFIX]
    assert sweep_reads(str(high), [path])["models"] == direct["models"]
    assert sweep_reads(str(low), [path])["models"] == saved["models"]
    # without extra walks the reads are still another reader's
    with pytest.raises(ValueError, match="another extra walks"):
        sweep_reads(str(_copy_model(tmp_path, extra_bar=0)), [path])


def test_the_commands_read_with_the_extra_walks_unless_told_not_to(
        capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    frame = str(SAMPLES / "neoclassical_000.jpg")
    assert main(["recognize", "--json", "--no-extra-walks", frame]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["recognize", "--json", "--extra-bar", str(BAR), frame]) == 0
    more = json.loads(capsys.readouterr().out)
    assert _cards(more) - _cards(plain) == {("2C", (908.7, 394.3))}
    # by default (the bundled .json's 0.9999) and with --extra-walks: the 2C, read at
    # 0.9996, is under the bar
    assert ("2C", 0.9996) in {(c["code"], c["confidence"]) for c in more["cards"]}
    for asked in ([], ["--extra-walks"], ["--extra-bar", "0.99999"],
                  ["--extra-walks", "--extra-bar", "0"]):
        assert main(["recognize", "--json", *asked, frame]) == 0
        assert _cards(json.loads(capsys.readouterr().out)) == _cards(plain)
    assert main(["vision-eval", "--json", "--no-extra-walks", str(SAMPLES)]) == 0
    base = json.loads(capsys.readouterr().out)
    assert base["extra_walks"] is None
    assert main(["vision-eval", "--json", str(SAMPLES)]) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["extra_walks"] == EXTRA_WALKS_BAR
    assert default["misread"] == base["misread"] and default["correct"] >= base["correct"]
    assert main(["vision-eval", "--json", "--extra-bar", str(BAR), str(SAMPLES)]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert scored["extra_walks"] == BAR
    assert scored["correct"] == base["correct"] + 1 and scored["misread"] == base["misread"]
    assert main(["vision-eval", str(SAMPLES)]) == 0
    assert f"read with the extra walks: the cards only they found at {EXTRA_WALKS_BAR}" in (
        capsys.readouterr().out)
    # told both ways: refused before a frame is read
    assert main(["recognize", "--json", "--no-extra-walks", "--extra-walks", frame]) != 0
    captured = capsys.readouterr()
    assert captured.out == "" and "--no-extra-walks reads without the extra walks" in (
        captured.err)


def test_a_bar_out_of_range_is_refused_before_a_frame_is_read(
        capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    assert main(["recognize", "--json", "--extra-bar", "1.5",
                 str(SAMPLES / "neoclassical_000.jpg")]) != 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "extra_bar must be a probability from 0.5 to 1" in captured.err
