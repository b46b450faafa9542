import pytest

from controller.cards import Card, CardCodeError, ForeignCardError, ShoeComposition, parse_cards


def test_parse_round_trip_all_codes():
    for r in "A23456789TJQK":
        for s in "SHDC":
            assert Card.parse(r + s).code == r + s


@pytest.mark.parametrize("bad", ["", "Q", "10H", "1H", "QX", "QHH", "ZZ", " ", "Q H"])
def test_parse_rejects(bad):
    with pytest.raises(CardCodeError, match="bad card code"):
        Card.parse(bad)


def test_parse_rejects_non_string():
    with pytest.raises(CardCodeError):
        Card.parse(12)  # type: ignore[arg-type]


def test_spanish_shoe_composition():
    for decks in (6, 8):
        shoe = ShoeComposition.spanish(decks)
        assert len(shoe) == 48 * decks
        assert sum(shoe.counts().values()) == 48 * decks
        assert shoe.is_foreign(Card.parse("TS"))
        assert not shoe.is_foreign(Card.parse("9S"))
    assert len(ShoeComposition.standard(1)) == 52
    assert not ShoeComposition.standard(1).is_foreign(Card.parse("TD"))


def test_remaining_refuses_foreign_and_excess():
    shoe = ShoeComposition.spanish(6)
    with pytest.raises(ForeignCardError, match="TH is not part"):
        shoe.remaining(parse_cards(["TH"]))
    with pytest.raises(ForeignCardError, match="more copies of AS"):
        shoe.remaining(parse_cards(["AS"] * 7))
    left = shoe.remaining(parse_cards(["AS", "AS", "KD"]))
    assert left[Card.parse("AS")] == 4 and left[Card.parse("KD")] == 5
