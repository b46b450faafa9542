"""Exact odds, proven independently: brute force on small shoes, Monte Carlo on a full one."""

import itertools
import json
import math
import subprocess
import sys
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from controller.cards import ShoeComposition, parse_cards
from controller.config import load_config
from controller.hands import Hand, evaluate, evaluate_indices
from controller.odds import compute_odds, hand_counts


def brute_force(shoe_cards):
    """Every unordered four-card draw of physical cards, evaluated one by one."""
    out = Counter()
    for combo in itertools.combinations(shoe_cards, 4):
        out[evaluate(combo)] += 1
    return out


def test_brute_force_one_spanish_deck():
    shoe = ShoeComposition.spanish(1)
    got = hand_counts(shoe.counts())
    want = brute_force(list(shoe))
    assert {h: got[h] for h in Hand} == {h: want[h] for h in Hand}
    assert sum(got.values()) == math.comb(48, 4)


def test_brute_force_multi_deck_small_shoe():
    # Three decks of three ranks: many copies per card, so suited fours and same-colour threes
    # with repeated identical cards all occur.
    cards = [c for c in ShoeComposition.spanish(3) if c.rank_char in "A7K"]
    counts = Counter(cards)
    got = hand_counts(counts)
    want = brute_force(cards)
    assert {h: got[h] for h in Hand} == {h: want[h] for h in Hand}
    assert got[Hand.FOUR_OF_A_KIND_SUITED] == 0  # three copies of a card cannot make a suited four
    assert want[Hand.FOUR_OF_A_KIND_SAME_COLOR] > 0


def test_brute_force_partial_shoe():
    cards = [c for c in ShoeComposition.spanish(5) if c.rank_char in "QJ"]
    seen = parse_cards(["QH", "QH", "JS", "QD"])
    rest = list(cards)
    for c in seen:
        rest.remove(c)
    full = ShoeComposition.spanish(5).remaining(seen)
    partial = Counter({c: n for c, n in full.items() if c.rank_char in "QJ"})
    got = hand_counts(partial)
    want = brute_force(rest)
    assert {h: got[h] for h in Hand} == {h: want[h] for h in Hand}


def test_monte_carlo_six_decks_within_bound():
    """2,000,000 random four-card draws from a 6-deck shoe, evaluated by the vectorised
    evaluator; every hand's count lies within 5 standard deviations of the exact expectation
    (a failure by chance has probability below 1e-5 per hand)."""
    shoe = np.array([c.index for c in ShoeComposition.spanish(6)], dtype=np.uint8)
    rng = np.random.default_rng(20261129)
    n = 2_000_000
    pos = rng.integers(0, shoe.size, size=(n, 4))
    while True:  # redraw rows that picked the same physical card twice
        s = np.sort(pos, axis=1)
        dup = (s[:, 1:] == s[:, :-1]).any(axis=1)
        if not dup.any():
            break
        pos[dup] = rng.integers(0, shoe.size, size=(int(dup.sum()), 4))
    codes = np.bincount(evaluate_indices(shoe[pos]), minlength=6)
    exact = hand_counts(ShoeComposition.spanish(6).counts())
    total = sum(exact.values())
    for hand in Hand:
        p = exact[hand] / total
        mean, sd = n * p, math.sqrt(n * p * (1 - p))
        got = int(codes[hand.code])
        assert abs(got - mean) <= 5 * sd + 1, (hand, got, mean, sd)


def test_returns_are_exact_and_consistent():
    cfg = load_config()
    r = compute_odds(cfg.shoe.counts(), 6, cfg.paytable, cfg.dynamic)
    total = r.total
    # Base return by hand from the paytable, jackpot at the seed (10,000 for 1).
    want = (Fraction(r.counts[Hand.FOUR_OF_A_KIND_SUITED] * 10000
                     + r.counts[Hand.FOUR_OF_A_KIND_SAME_COLOR] * 500
                     + r.counts[Hand.FOUR_OF_A_KIND] * 100
                     + r.counts[Hand.THREE_OF_A_KIND_SAME_COLOR] * 10
                     + r.counts[Hand.THREE_OF_A_KIND] * 4, total))
    assert r.base_return == want
    assert r.dynamic_return > r.base_return
    # At the break-even meter the return is exactly one.
    at_be = compute_odds(cfg.shoe.counts(), 6, cfg.paytable, cfg.dynamic,
                         r.break_even_meter_units)
    assert at_be.dynamic_return_at_meter == 1


def test_dynamic_return_matches_simulated_draws():
    """The exact expected Dynamic Pays return agrees with an average over many real draws."""
    import random

    from controller.dynamic import draw_dynamic_pays
    cfg = load_config()
    r = compute_odds(cfg.shoe.counts(), 6, cfg.paytable, cfg.dynamic)
    rng = random.Random(7)
    n = 40_000
    acc = Fraction(0)
    for _ in range(n):
        d = draw_dynamic_pays(cfg.dynamic, cfg.paytable, rng)
        for h in Hand:
            pays = cfg.paytable.pays(h)
            if pays is None:
                continue
            value = 10000 if pays == "meter" else (d.pays_for(h) or pays)
            acc += r.probability(h) * value
    mean = float(acc / n)
    assert abs(mean - float(r.dynamic_return)) < 0.01


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True,
                          text=True, timeout=60)


def test_odds_cli_json_keys_and_seen():
    res = run_cli("odds", "--decks", "8", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["decks"] == 8 and doc["total_combinations"] == math.comb(384, 4)
    assert set(doc["hands"]) == {h.value for h in Hand}
    assert doc["hands"]["four_of_a_kind_suited"]["combinations"] == 48 * math.comb(8, 4)
    for key in ("base_return", "dynamic_return", "break_even_meter"):
        assert key in doc
    seen = json.loads(run_cli("odds", "--decks", "8", "--json", "--seen", "AS,AS,AS").stdout)
    assert seen["total_combinations"] == math.comb(381, 4)
    assert (seen["hands"]["four_of_a_kind_suited"]["combinations"]
            < doc["hands"]["four_of_a_kind_suited"]["combinations"])


@pytest.mark.parametrize("args", [["--seen", "TH"], ["--seen", "AS," * 7], ["--seen", "XX"],
                                  ["--meter", "abc"], ["--meter", "-5"]])
def test_odds_cli_bad_input(args):
    res = run_cli("odds", *args)
    assert res.returncode != 0
    assert res.stderr.strip().count("\n") == 0 and res.stderr.startswith("monster-match odds:")


def test_evaluate_cli():
    res = run_cli("evaluate", "AS", "AS", "AS", "AS", "--json")
    assert json.loads(res.stdout) == {"hand": "four_of_a_kind_suited",
                                      "cards": ["AS", "AS", "AS", "AS"]}
    for bad in (["AS", "AS", "AS"], ["AS", "AS", "AS", "1S"], ["AS"] * 5):
        res = run_cli("evaluate", *bad)
        assert res.returncode != 0 and res.stderr.count("\n") == 1
