"""The evaluator: scalar against vectorised, properties, and named examples."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import ALL_CARDS, Card, ShoeComposition, parse_cards
from controller.hands import HAND_CODES, Hand, HandSizeError, evaluate, evaluate_indices

cards = st.sampled_from(ALL_CARDS)
hands4 = st.lists(cards, min_size=4, max_size=4)


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        ("AS AS AS AS", Hand.FOUR_OF_A_KIND_SUITED),
        ("KS KC KS KC", Hand.FOUR_OF_A_KIND_SAME_COLOR),
        ("KH KD KD KD", Hand.FOUR_OF_A_KIND_SAME_COLOR),
        ("7H 7S 7D 7C", Hand.FOUR_OF_A_KIND),
        ("7H 7H 7H 7S", Hand.FOUR_OF_A_KIND),
        ("2H 2D 2H 9C", Hand.THREE_OF_A_KIND_SAME_COLOR),
        ("2H 2H 2H 9H", Hand.THREE_OF_A_KIND_SAME_COLOR),  # suited three counts as same colour
        ("9C 2H 2S 2H", Hand.THREE_OF_A_KIND),
        ("QH QH 5D 5D", Hand.LOSS),  # two pair is not a win
        ("QH QH 5D 6D", Hand.LOSS),
        ("AS 2S 3S 4S", Hand.LOSS),
    ],
)
def test_named_hands(codes, expected):
    cards_ = parse_cards([codes])
    assert evaluate(cards_) is expected
    idx = np.array([[c.index for c in cards_]])
    assert HAND_CODES[int(evaluate_indices(idx)[0])] is expected


def test_wrong_size_refused():
    with pytest.raises(HandSizeError):
        evaluate(parse_cards(["AS", "AS", "AS"]))
    with pytest.raises(HandSizeError):
        evaluate_indices(np.zeros((3, 5), dtype=np.uint8))


def test_foreign_card_never_wins_in_spanish_shoe():
    shoe = ShoeComposition.spanish(6)
    assert evaluate(parse_cards(["TS"] * 4), shoe) is Hand.LOSS
    assert evaluate(parse_cards(["5H", "5H", "5H", "TS"]), shoe) is Hand.LOSS
    assert evaluate(parse_cards(["TS"] * 4), ShoeComposition.standard(6)) is (
        Hand.FOUR_OF_A_KIND_SUITED
    )


def test_vectorised_matches_scalar_on_every_rank_pattern():
    # All 52^4 ordered hands is 7.3M; every ordered hand over two ranks x all suits covers every
    # rank pattern (four, three+1, two pair, pair) with every suit combination.
    two_ranks = [c for c in ALL_CARDS if c.rank_char in "A7"]
    combos = list(itertools.product(two_ranks, repeat=4))
    idx = np.array([[c.index for c in h] for h in combos], dtype=np.uint8)
    got = evaluate_indices(idx)
    want = [evaluate(h).code for h in combos]
    assert got.tolist() == want


@settings(max_examples=400, deadline=None)
@given(st.lists(hands4, min_size=1, max_size=50))
def test_vectorised_matches_scalar_random(batch):
    idx = np.array([[c.index for c in h] for h in batch])
    assert evaluate_indices(idx).tolist() == [evaluate(h).code for h in batch]


@settings(max_examples=300, deadline=None)
@given(hands4, st.permutations(range(4)))
def test_order_never_matters(hand, perm):
    assert evaluate(hand) is evaluate([hand[i] for i in perm])


@settings(max_examples=300, deadline=None)
@given(hands4)
def test_recolouring_never_raises_a_hand_above_its_rank_class(hand):
    # Changing suits can move a hand within its class (four/three) but never into another class,
    # and the suit-free class is the lowest of its family.
    h = evaluate(hand)
    fours = {Hand.FOUR_OF_A_KIND, Hand.FOUR_OF_A_KIND_SAME_COLOR, Hand.FOUR_OF_A_KIND_SUITED}
    threes = {Hand.THREE_OF_A_KIND, Hand.THREE_OF_A_KIND_SAME_COLOR}
    for suits in itertools.product(range(4), repeat=4):
        other = evaluate([Card(c.rank, s) for c, s in zip(hand, suits, strict=True)])
        if h in fours:
            assert other in fours
        elif h in threes:
            assert other in threes
        else:
            assert other is Hand.LOSS


@settings(max_examples=300, deadline=None)
@given(hands4)
def test_suit_constraint_never_raises_rank(hand):
    # Adding a suit/colour constraint that the hand satisfies gives the constrained hand; a hand
    # that fails it falls back to the unconstrained one, never above.
    h = evaluate(hand)
    ranks = sorted(c.rank for c in hand)
    counts = {r: ranks.count(r) for r in ranks}
    n = max(counts.values())
    if n == 4:
        assert h in {Hand.FOUR_OF_A_KIND, Hand.FOUR_OF_A_KIND_SAME_COLOR,
                     Hand.FOUR_OF_A_KIND_SUITED}
        colours = {c.is_red for c in hand}
        suits = {c.suit for c in hand}
        assert (h is Hand.FOUR_OF_A_KIND_SUITED) == (len(suits) == 1)
        assert (h is Hand.FOUR_OF_A_KIND_SAME_COLOR) == (len(colours) == 1 and len(suits) > 1)
    elif n == 3:
        trip = [c for c in hand if counts[c.rank] == 3]
        same = len({c.is_red for c in trip}) == 1
        assert h is (Hand.THREE_OF_A_KIND_SAME_COLOR if same else Hand.THREE_OF_A_KIND)
    else:
        assert h is Hand.LOSS
    # Hand ranks form a total order consistent with the paytable ranking.
    assert Hand.FOUR_OF_A_KIND_SUITED.rank > Hand.FOUR_OF_A_KIND_SAME_COLOR.rank > (
        Hand.FOUR_OF_A_KIND.rank) > Hand.THREE_OF_A_KIND_SAME_COLOR.rank > (
        Hand.THREE_OF_A_KIND.rank) > Hand.LOSS.rank
