"""Card-to-seat assignment by dealing order, pure and from a shoe over a pty."""

from __future__ import annotations

import pytest
from serial_support import drain

from controller.cards import parse_cards
from controller.devices.dealing import (
    DEALER_HOLE,
    DEALER_UP,
    EXTRA,
    DealAssigner,
    DealIncompleteError,
    assign_deal,
)
from controller.devices.shoe import CardDrawn, ShoeClient
from controller.devices.sim import ShoeSimulator


def test_dealing_order_with_seats_sitting_out_and_hits():
    # seats 2, 4, 5 and 7 sit out; 6 is given first on purpose: order is by seat
    cards = parse_cards(["AS 2H 3D 4C 5S 6H 7D 8C 9S JH QD"])
    deal = assign_deal([6, 1, 3], cards)
    assert deal.seats == (1, 3, 6)
    assert [(p.target, p.round_no) for p in deal.placements] == [
        (1, 1), (3, 1), (6, 1), (DEALER_UP, 1), (1, 2), (3, 2), (6, 2), (DEALER_HOLE, 2),
        (EXTRA, 0), (EXTRA, 0), (EXTRA, 0),
    ]
    c = {x.code: x for x in cards}
    assert deal.player_cards(1) == (c["AS"], c["5S"])
    assert deal.player_cards(3) == (c["2H"], c["6H"])
    assert deal.player_cards(6) == (c["3D"], c["7D"])
    assert deal.dealer_up == c["4C"] and deal.dealer_hole == c["8C"]
    assert deal.four_card_hand(3) == (c["2H"], c["6H"], c["4C"], c["8C"])
    assert [p.card.code for p in deal.extras] == ["9S", "JH", "QD"]  # hits never join a hand
    assert deal.complete and deal.cards_needed == 0
    with pytest.raises(KeyError):
        deal.player_cards(2)


def test_partial_deal_and_no_seats():
    deal = DealAssigner([4])
    deal.add(parse_cards(["KS"])[0])
    assert deal.player_cards(4) == parse_cards(["KS"])
    assert deal.dealer_up is None and not deal.complete and deal.cards_needed == 3
    with pytest.raises(DealIncompleteError):
        deal.four_card_hand(4)
    empty = assign_deal([], parse_cards(["2S 3S 4S"]))
    assert (empty.dealer_up.code, empty.dealer_hole.code) == ("2S", "3S")
    assert [p.card.code for p in empty.extras] == ["4S"]
    with pytest.raises(ValueError):
        DealAssigner([0, 1])


def test_shoe_over_pty_burn_card_then_round_assignment():
    script = parse_cards(["TC", "AH AD AC KS 9H 9D 9C KH 5S"])  # TC is the burn card
    sim = ShoeSimulator("pty", cards=script)
    sim.start()
    shoe = ShoeClient(sim.url)
    shoe.start(require_open=True)
    try:
        events = drain(shoe.events, 5.0, lambda ev: sum(isinstance(e, CardDrawn) for e in ev) >= 10)
        drawn = [e for e in events if isinstance(e, CardDrawn)]
        assert [e.burn for e in drawn] == [True] + [False] * 9
        deal = assign_deal([2, 5, 7], [e.card for e in drawn if not e.burn])
        assert [c.code for c in deal.four_card_hand(2)] == ["AH", "9H", "KS", "KH"]
        assert [c.code for c in deal.four_card_hand(5)] == ["AD", "9D", "KS", "KH"]
        assert [c.code for c in deal.four_card_hand(7)] == ["AC", "9C", "KS", "KH"]
        assert [p.card.code for p in deal.extras] == ["5S"]
    finally:
        shoe.close()
        sim.close()
