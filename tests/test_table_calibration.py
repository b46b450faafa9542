"""Table calibration: ArUco markers found in rendered frames, four fixed points, the [camera]
configuration, and ``monster-match recognize --table``."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller.camera import LayoutCalibrator
from controller.cli import main
from controller.config import ConfigError, load_config
from vision.calibration import CalibrationError, TableCalibration, detect_markers
from vision.synth import DEFAULT_MARKERS, _project, random_deal, render_table


def test_aruco_calibration_places_cards_like_the_true_pose() -> None:
    """Over tilted, turned, noisy frames the homography from the markers seen puts every card
    in the same area as the renderer's own camera pose does, within a few millimetres."""
    compared = 0
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        img, labels = render_table(random_deal(rng), rng, design="plastic",
                                   markers=DEFAULT_MARKERS)
        truth = TableCalibration(np.linalg.inv(np.array(labels["table_to_image"])))
        cal = TableCalibration.from_aruco(img, DEFAULT_MARKERS)
        for card in labels["cards"]:
            err = np.linalg.norm(truth.to_layout(card["center"]) - cal.to_layout(card["center"]))
            assert err < 10.0, f"seed {seed}: {err:.1f} mm off"
            assert cal.spot_for(card["center"]) == truth.spot_for(card["center"])
            compared += 1
    assert compared > 40


def test_aruco_needs_four_known_markers() -> None:
    rng = np.random.default_rng(1)
    img, _ = render_table({"seat3": ["AS"]}, rng, design="plastic")
    assert detect_markers(img) == {}
    with pytest.raises(CalibrationError, match="four known markers; saw 0"):
        TableCalibration.from_aruco(img, DEFAULT_MARKERS)
    rng = np.random.default_rng(2)
    three = {k: DEFAULT_MARKERS[k] for k in (0, 1, 4)}
    img, labels = render_table({"seat3": ["AS"]}, rng, design="plastic", markers=three,
                               tilt_max=0)
    inside = _project(np.array(labels["table_to_image"]), np.array(list(three.values())))
    assert ((inside >= 0) & (inside < [1280, 720])).all()  # all three are in view
    with pytest.raises(CalibrationError, match="saw 3"):
        TableCalibration.from_aruco(img, DEFAULT_MARKERS)


def test_points_calibration_from_config(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    img, labels = render_table({"seat6": ["9C"], "dealer": ["2D"]}, rng, design="plastic")
    h = np.array(labels["table_to_image"])
    layout = [[-400.0, -200.0], [400.0, -200.0], [400.0, 150.0], [-400.0, 150.0]]
    image_pts = _project(h, np.array(layout)).round(2).tolist()
    (tmp_path / "t.toml").write_text(
        f'[camera]\ncalibration = "points"\nimage_points = {image_pts}\n'
        f"layout_points = {layout}\n")
    calibrator = LayoutCalibrator(load_config(tmp_path / "t.toml").camera)
    cal = calibrator.for_frame(img)
    assert [cal.spot_for(c["center"]) for c in labels["cards"]] == ["seat6", "dealer"]
    # the points were measured on 1280x720 frames ([camera] capture_size): a camera giving
    # another size would have every card placed in the wrong area
    with pytest.raises(CalibrationError, match=r"^the frame is 1920x1080; \[camera\] "
                       r"capture_size is 1280x720, the size its image_points were measured"):
        calibrator.for_frame(cv2.resize(img, (1920, 1080)))


@pytest.mark.parametrize(("text", "words"), [
    ('calibration = "magic"', "calibration must be one of none, points, aruco"),
    ('calibration = "points"\nimage_points = [[1, 2]]', "needs exactly four image_points"),
    ('calibration = "points"\nimage_points = [[1, 2], [3], [5, 6], [7, 8]]',
     "must be a point [x, y]"),
    ('calibration = "aruco"\naruco_dictionary = "DICT_9X9_1"', "unknown ArUco dictionary"),
    ('calibration = "aruco"\n[camera.aruco_markers]\n0 = [0, 0]\n1 = [1, 0]\n2 = [0, 1]',
     "at least four markers"),
    ('[camera.aruco_markers]\nseven = [0, 0]', "marker ids are whole numbers"),
    ("max_distance_mm = -3", "max_distance_mm must be positive"),
    ('model = "house/cards_house.onnx"', "no such model"),
    ("model = 3", "[camera] model must be a path"),
    ("card_mm = [88.9, 63.5]", "card_mm is the card's [width, height] in millimetres"),
    ("card_mm = [63.5]", "must be a point [x, y]"),
    ('place = "seat"', "[camera] place is how cards go to layout areas, one of card, hand"),
    ("place = true", "[camera] place must be a string"),
    ('frame_format = "tiff"',
     "[camera] frame_format is how kept frames are encoded, one of png, jpeg"),
])
def test_bad_camera_config_refused(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text("[camera]\n" + text + "\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert words in str(exc.value)
    assert str(path) in str(exc.value)


def test_the_decks_size_goes_to_the_calibration(tmp_path: Path) -> None:
    """``[camera] card_mm`` (poker size by default) is the size a calibrated frame's cards are
    placed on the layout at."""
    assert load_config().camera.card_mm == (63.5, 88.9)
    path = tmp_path / "t.toml"
    path.write_text('[camera]\ncalibration = "points"\ncard_mm = [57.2, 88.9]\n'
                    "image_points = [[100, 100], [1100, 100], [1100, 650], [100, 650]]\n"
                    "layout_points = [[-500, -300], [500, -300], [500, 250], [-500, 250]]\n")
    settings = load_config(path).camera
    assert settings.card_mm == (57.2, 88.9)
    assert LayoutCalibrator(settings).for_frame(np.zeros((720, 1280, 3), np.uint8)).card_mm \
        == (57.2, 88.9)


def test_hands_are_placed_whole_where_the_table_file_asks(tmp_path: Path) -> None:
    """``[camera] place = "hand"`` reaches the calibration (:mod:`vision.handspots`); by
    default each card goes to the area nearest it."""
    assert load_config().camera.place == "card"
    frame = np.zeros((720, 1280, 3), np.uint8)
    for place in ("card", "hand"):
        path = tmp_path / f"{place}.toml"
        path.write_text(f'[camera]\ncalibration = "points"\nplace = "{place}"\n'
                        "image_points = [[100, 100], [1100, 100], [1100, 650], [100, 650]]\n"
                        "layout_points = [[-500, -300], [500, -300], [500, 250], [-500, 250]]\n")
        settings = load_config(path).camera
        assert settings.place == place
        assert LayoutCalibrator(settings).for_frame(frame).by_hand == (place == "hand")


def test_camera_model_is_found_beside_the_table_file(tmp_path: Path) -> None:
    """``[camera] model`` (a house deck's enrolled reader) is taken relative to the TOML file,
    and the camera reads with it: its threshold and its gate, from its ``.json``."""
    from controller.camera import SimulatedCamera
    from vision.recognize import DEFAULT_MODEL

    house = tmp_path / "house"
    house.mkdir()
    meta = json.loads(DEFAULT_MODEL.with_suffix(".json").read_text())
    meta["threshold"] = 0.995
    (house / "cards_house.onnx").write_bytes(DEFAULT_MODEL.read_bytes())
    (house / "cards_house.json").write_text(json.dumps(meta))
    gate = DEFAULT_MODEL.parent / meta["gate"]
    (house / meta["gate"]).write_bytes(gate.read_bytes())
    path = tmp_path / "t.toml"
    path.write_text('[camera]\nmodel = "house/cards_house.onnx"\n')
    settings = load_config(path).camera
    assert settings.model == str(house / "cards_house.onnx")
    camera = SimulatedCamera(None, settings=settings)
    assert camera.recognizer.threshold == 0.995
    assert camera.recognizer.gate_session is not None
    assert load_config().camera.model == ""


def test_a_table_file_replaces_the_marker_list_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[camera]\ncalibration = "aruco"\n[camera.aruco_markers]\n'
                    "10 = [0, 0]\n11 = [100, 0]\n12 = [100, 100]\n13 = [0, 100]\n")
    assert sorted(load_config(path).camera.aruco_markers) == [10, 11, 12, 13]
    assert sorted(load_config().camera.aruco_markers) == sorted(DEFAULT_MARKERS)


def test_recognize_with_table_places_cards(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(5)
    img, labels = render_table({"seat2": ["AS", "9D"], "seat5": ["KH", "KC"]}, rng,
                               design="plastic", markers=DEFAULT_MARKERS, tilt_max=25,
                               card_px=(60, 70))
    cv2.imwrite(str(tmp_path / "a.jpg"), img)
    plain, _ = render_table({"seat2": ["AS"]}, rng, design="plastic")
    cv2.imwrite(str(tmp_path / "b.jpg"), plain)
    (tmp_path / "t.toml").write_text('[camera]\ncalibration = "aruco"\n')
    status = main(["recognize", "--json", "--table", str(tmp_path / "t.toml"),
                   str(tmp_path / "a.jpg"), str(tmp_path / "b.jpg")])
    a, b = (json.loads(x) for x in capsys.readouterr().out.splitlines())
    assert status == 0
    truth = {c["code"]: c["spot"] for c in labels["cards"]}
    assert a["cards"], "the frame has readable cards"
    assert all(c["spot"] == truth[c["code"]] for c in a["cards"])
    assert "calibration_error" in b and "four known markers" in b["calibration_error"]
    # the calibrator travels to the workers with the reader: the same places, the same error
    assert main(["recognize", "--json", "--workers", "2", "--table",
                 str(tmp_path / "t.toml"), str(tmp_path / "a.jpg"), str(tmp_path / "b.jpg")]) == 0
    both = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    for line in (a, b, *both):
        line.pop("elapsed_ms")
    assert both == [a, b]
    (tmp_path / "none.toml").write_text("[table]\nseats = 6\n")
    assert main(["recognize", "--table", str(tmp_path / "none.toml"),
                 str(tmp_path / "a.jpg")]) == 2
    assert 'calibration is "none"' in capsys.readouterr().err


def test_simulated_camera_calibrates_each_frame_from_its_markers(tmp_path: Path) -> None:
    from controller.camera import SimulatedCamera

    (tmp_path / "t.toml").write_text('[camera]\ncalibration = "aruco"\n')
    cam = SimulatedCamera(None, seed=3, settings=load_config(tmp_path / "t.toml").camera,
                          card_px=(60.0, 66.0))
    layout = {"seat1": ["7H", "2C"], "seat4": ["JD", "5S"], "dealer": ["9H", "XX"]}
    placed = 0
    for _ in range(3):
        read = cam.capture(layout)
        for card in read.cards:
            assert any(card.code in codes for area, codes in layout.items()
                       if area == card.area), f"{card.code} placed at {card.area}"
            placed += 1
    assert placed >= 6


def test_a_frame_not_placed_on_the_layout_holds_the_round(dealt_service) -> None:  # noqa: ANN001
    svc, rid = dealt_service
    why = "ArUco calibration needs four known markers; saw 2 (0, 4) of 6"
    result = svc.camera_check(rid, [], hole_up=False, calibration_error=why)
    assert result.problems == [f"camera frame not placed on the layout: {why}"]
    assert svc.table.current().state.value == "held"


def test_rendered_hands_stay_in_their_own_area() -> None:
    """The simulated dealer keeps each hand in its area: with the renderer's own pose, every
    card's true centre is nearest its own spot (a side-by-side hand of three cards once
    reached the next seat, and the demo's camera cross-check held the round)."""
    wrong = total = 0
    for seed in range(25):
        rng = np.random.default_rng(500 + seed)
        _, labels = render_table(random_deal(rng), rng, design="proc:0:1", clean=True)
        cal = TableCalibration(np.linalg.inv(np.array(labels["table_to_image"])))
        for card in labels["cards"]:
            total += 1
            wrong += cal.spot_for(card["center"]) != card["spot"]
    assert total > 250 and wrong == 0


def test_long_hands_stay_in_their_area_as_the_demo_camera_draws_them() -> None:
    """Hands of five and six cards (Spanish 21 hits) at every seat: drawn as the demo's camera
    draws them (``hands_in_area``), every card's true centre is nearest its own spot; drawn as
    the data sets were (the step across a hand not shortened), some lie nearer the next seat's
    (the demo once held a round for a card so placed)."""
    from vision.codes import CARD_CODES

    wrong = {True: 0, False: 0}
    total = 0
    for seed in range(30):
        for in_area in (True, False):
            rng = np.random.default_rng(900 + seed)
            deal = {f"seat{k}": list(rng.choice(CARD_CODES, 5 + k % 2)) for k in range(1, 8)}
            _, labels = render_table(deal, rng, design="proc:0:1", size=(640, 360), clean=True,
                                     hands_in_area=in_area)
            cal = TableCalibration(np.linalg.inv(np.array(labels["table_to_image"])))
            for card in labels["cards"]:
                total += in_area
                wrong[in_area] += cal.spot_for(card["center"]) != card["spot"]
    assert total > 1000 and wrong[True] == 0
    assert wrong[False] > 0


def test_cards_are_placed_by_their_index_corner_and_real_size() -> None:
    """A card read at one index corner with a card size estimated 1.6 times too large has its
    reported centre far off; the layout position from the corner point, the edge directions
    and the card's real size is not, and decides the card's area."""
    from vision.calibration import assign_spots

    rng = np.random.default_rng(8)
    _, labels = render_table({"seat5": ["9S"]}, rng, design="plastic", tilt_max=30,
                             clean=True)
    cal = TableCalibration(np.linalg.inv(np.array(labels["table_to_image"])))
    card = labels["cards"][0]
    q = np.array(card["corners"])
    x, y = (q[1] - q[0]) * 1.6, (q[3] - q[0]) * 1.6  # the size estimate 1.6x too large
    quad = [q[0], q[0] + x, q[0] + x + y, q[0] + y]
    wrong_centre = np.mean(quad, axis=0)
    truth = cal.to_layout(card["center"])
    assert np.linalg.norm(cal.to_layout(wrong_centre) - truth) > 30
    assert np.linalg.norm(cal.card_centre(quad) - truth) < 6
    result = {"cards": [{"code": "9S", "confidence": 1.0, "center": wrong_centre.tolist(),
                         "corners": [p.tolist() for p in quad]}],
              "face_down": [], "unreadable": []}
    assert assign_spots(result, cal)["cards"][0]["spot"] == "seat5"


def _layout_and_image_points(seed: int) -> tuple[list[list[float]], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    img, labels = render_table({"seat2": ["4H"]}, rng, design="plastic", tilt_max=35)
    layout = [[-400.0, -200.0], [400.0, -200.0], [400.0, 150.0], [-400.0, 150.0]]
    return layout, _project(np.array(labels["table_to_image"]), np.array(layout)), img


@pytest.mark.parametrize("seed", range(6))
def test_a_mirrored_camera_or_misordered_points_are_refused(tmp_path: Path, seed: int) -> None:
    """Layout millimetres run as the rendered picture does at every tilt and turn, so a map
    that reverses the turning sense is a mirrored picture (all four points) or points out of
    order (some of them); the table file says which, and the good points still load."""
    layout, pts, _ = _layout_and_image_points(seed)
    TableCalibration.from_points(pts, layout)
    mirrored = pts * [-1, 1] + [1279, 0]
    with pytest.raises(CalibrationError, match="picture is mirrored"):
        TableCalibration.from_points(mirrored, layout)
    swapped = pts[[1, 0, 2, 3]]
    with pytest.raises(CalibrationError, match="do not make one view"):
        TableCalibration.from_points(swapped, layout)
    path = tmp_path / "t.toml"
    path.write_text(f'[camera]\ncalibration = "points"\nimage_points = {mirrored.tolist()}\n'
                    f"layout_points = {layout}\n")
    with pytest.raises(ConfigError, match="camera's picture is mirrored"):
        load_config(path)


def test_a_mirrored_frame_is_not_calibrated_from_its_markers() -> None:
    """ArUco markers seen in a mirror do not decode as the markers printed (none or others),
    so a mirrored frame gets a calibration error, never a mirrored calibration."""
    rng = np.random.default_rng(8)
    img, _ = render_table({"seat3": ["AS"]}, rng, design="plastic", markers=DEFAULT_MARKERS,
                          tilt_max=10)
    TableCalibration.from_aruco(img, DEFAULT_MARKERS)
    with pytest.raises(CalibrationError):
        TableCalibration.from_aruco(cv2.flip(img, 1), DEFAULT_MARKERS)


def test_recognize_with_table_says_how_wide_a_card_is_at_each_spot(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """From the calibration alone, the card width at every spot of the layout (what an
    installer needs from one frame of the empty table), and the spots where it is under the
    reader's small-card width: none for a camera near the table, every one for a far one."""
    from vision.quality import SMALL_CARD_PX

    rng = np.random.default_rng(7)
    (tmp_path / "t.toml").write_text('[camera]\ncalibration = "aruco"\n')
    for name, card_px in (("near", (60, 64)), ("far", (30, 33))):
        img, labels = render_table({"seat3": ["7S"]}, rng, design="plastic",
                                   markers=DEFAULT_MARKERS, tilt_max=0, card_px=card_px)
        cv2.imwrite(str(tmp_path / f"{name}.png"), img)
        assert main(["recognize", "--json", "--table", str(tmp_path / "t.toml"),
                     str(tmp_path / f"{name}.png")]) == 0
        line = json.loads(capsys.readouterr().out)
        assert "calibration_error" not in line
        widths = line["quality"]["spot_card_px"]
        assert set(widths) == set(load_config().camera.areas)
        true_width = labels["cards"][0]["card_width_px"]
        assert all(0.8 * true_width < w < 1.2 * true_width for w in widths.values()), widths
        small = line["quality"]["small_spots"]
        assert small == ([] if name == "near" else
                         [s for s, w in widths.items() if w < SMALL_CARD_PX]) and (
            name == "near" or small)
    assert main(["recognize", "--table", str(tmp_path / "t.toml"),
                 str(tmp_path / "far.png")]) == 0
    out = capsys.readouterr().out
    assert "small cards at " in out and all(f"{s} (" in out for s in small)
