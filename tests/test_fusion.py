from controller.cards import ShoeComposition
from controller.fusion import CameraCard, cross_check

SHOE = ShoeComposition.spanish(6)
CARDS = [
    {"position": 0, "spot": "seat1:1", "code": "7H"},
    {"position": 1, "spot": "seat3:1", "code": "2C"},
    {"position": 2, "spot": "dealer:up", "code": "KS"},
    {"position": 3, "spot": "seat1:2", "code": "7D"},
    {"position": 4, "spot": "seat3:2", "code": "9S"},
    {"position": 5, "spot": "dealer:hole", "code": "QD"},
    {"position": 6, "spot": "extra", "code": "4C"},
]


def cam(*pairs):
    return [CameraCard(code, area) for area, code in pairs]


def test_agreement_including_a_hit_and_an_unread_card():
    r = cross_check(CARDS, cam(("seat1", "7D"), ("seat1", "7H"), ("seat3", "2C"),
                               ("seat3", "4C"), ("dealer", "KS")), SHOE)
    assert r.problems == []
    assert r.camera_by_position == {0: "7H", 1: "2C", 2: "KS", 3: "7D", 4: None, 5: None, 6: None}


def test_disagreement():
    r = cross_check(CARDS, cam(("seat1", "7H"), ("seat1", "7S")), SHOE)
    assert r.problems == ["shoe/camera disagreement at seat1: shoe 7D, camera 7S"]
    assert r.camera_by_position[3] == "7S"


def test_card_never_dealt():
    r = cross_check(CARDS, cam(("seat1", "7H"), ("seat1", "7D"), ("seat1", "AS")), SHOE)
    assert r.problems == ["card AS at seat1 was never dealt from the shoe"]
    r = cross_check(CARDS, cam(("seat5", "AS")), SHOE)
    assert r.problems == ["card AS at seat5 was never dealt from the shoe"]


def test_foreign_and_too_many_copies():
    r = cross_check(CARDS, cam(("seat1", "TH")), SHOE)
    assert "foreign card TH on the layout at seat1" in r.problems
    many = cam(*[("seat1", "7H")] * 7)
    r = cross_check(CARDS, many, SHOE)
    assert any("7 copies of 7H" in p for p in r.problems)


def test_unknown_code():
    r = cross_check(CARDS, [CameraCard("XX", "seat1")], SHOE)
    assert r.problems == ["camera reports an unknown card code 'XX'"]
