"""Paytable and configuration loading: defaults, validation, the line at fault."""

import random
from fractions import Fraction

import pytest

from controller.config import ConfigError, load_config
from controller.dynamic import DynamicDraw, draw_dynamic_pays
from controller.hands import Hand
from controller.paytable import Paytable
from controller.settlement import settle, split_meter

GOOD_PAYTABLE = """name = "Test"
[meter]
seed_multiple = 10000
increment_rate = "14%"
reserve_rate = "4%"
[[hand]]
name = "four_of_a_kind_suited"
pays = "meter"
[[hand]]
name = "four_of_a_kind_same_color"
pays = 500
dynamic = [750, 1000]
[[hand]]
name = "four_of_a_kind"
pays = 100
dynamic = [150]
[[hand]]
name = "three_of_a_kind_same_color"
pays = 10
dynamic = [15]
[[hand]]
name = "three_of_a_kind"
pays = 4
dynamic = [6]
"""


def test_builtin_dynamic1_matches_regulation():
    t = Paytable.builtin("dynamic1")
    assert t.pays(Hand.FOUR_OF_A_KIND_SUITED) == "meter"
    assert [t.pays(h) for h in (Hand.FOUR_OF_A_KIND_SAME_COLOR, Hand.FOUR_OF_A_KIND,
                                Hand.THREE_OF_A_KIND_SAME_COLOR, Hand.THREE_OF_A_KIND)] == [
        500, 100, 10, 4]
    assert t.dynamic_choices(Hand.FOUR_OF_A_KIND_SAME_COLOR) == (
        750, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000)
    assert t.dynamic_choices(Hand.THREE_OF_A_KIND) == (6, 8, 12, 16, 20, 24, 28, 32, 36, 40)
    assert t.seed_multiple == 10000
    assert (t.increment_rate, t.reserve_rate) == (Fraction(14, 100), Fraction(4, 100))


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        ("pays = 100\n", "pays = -100\n", 15, "pays must be"),
        ('name = "four_of_a_kind"\n', 'name = "four_of_kind"\n', 14, "unknown hand name"),
        ("dynamic = [150]", "dynamic = [90]", 16, "increasing and above"),
        ('reserve_rate = "4%"', 'reserve_rate = "four"', 5, "rate"),
        ("seed_multiple = 10000", "seed_multiple = 0", 3, "seed_multiple"),
        ("pays = 10\n", "pays = 3\n", 19, "less than"),
    ],
)
def test_malformed_paytable_names_the_line(tmp_path, old, new, line, words):
    text = GOOD_PAYTABLE.replace(old, new, 1)
    assert text != GOOD_PAYTABLE
    path = tmp_path / "p.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        Paytable.load(path)
    msg = str(info.value)
    assert f"line {line}" in msg and words in msg, msg


def test_paytable_syntax_error_has_line(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(GOOD_PAYTABLE.replace("pays = 500", "pays = = 500"))
    with pytest.raises(ConfigError, match="line 11"):
        Paytable.load(path)


def test_missing_hand_refused(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(GOOD_PAYTABLE.split('[[hand]]\nname = "three_of_a_kind"\n')[0])
    with pytest.raises(ConfigError, match="'three_of_a_kind' is missing"):
        Paytable.load(path)


def test_defaults_and_override(tmp_path):
    cfg = load_config()
    assert (cfg.table.decks, cfg.table.seats, cfg.table.wager_cents) == (6, 6, 100)
    assert cfg.seed_cents == 1_000_000
    path = tmp_path / "t.toml"
    path.write_text('[table]\ndecks = 8\nwager = "5.00"\n')
    cfg = load_config(path)
    assert (cfg.table.decks, cfg.table.wager_cents, cfg.seed_cents) == (8, 500, 5_000_000)
    assert cfg.increment(500) == 70 and cfg.reserve_increment(25) == 1


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[table]\ndecks = 7\n", "line 2: Player's Edge 21 deals six or eight"),
        ('[table]\nwager = "1.005"\n', "line 2: wager must be a positive amount in whole cents"),
        ("[table]\nwager = 1.0\n", "line 2:"),
        ("[tabel]\nseats = 3\n", "unknown section"),
        ("[table]\nseats = 9\n", "line 2: seats must be 1 to 7"),
        ("[dynamic_pays]\nversion = 'v'\n[dynamic_pays.count_weights]\n4 = 1\n",
         "between one and three"),
        ("[dynamic_pays]\nversion = 'v'\n[dynamic_pays.count_weights]\n1 = 1\n"
         "[dynamic_pays.combination_weights]\nthree_of_a_kind = 1\n"
         "[dynamic_pays.payout_weights]\nthree_of_a_kind = [1, 2]\n", "one weight per choice"),
        ("[dynamic_pays]\nversion = 'v'\n[dynamic_pays.count_weights]\n3 = 1\n"
         "[dynamic_pays.combination_weights]\nthree_of_a_kind = 1\n"
         "[dynamic_pays.payout_weights]\nthree_of_a_kind = [1,1,1,1,1,1,1,1,1,1]\n",
         "only 1 have weight"),
    ],
)
def test_bad_config_refused(tmp_path, text, words):
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert words in str(info.value), str(info.value)


def test_settlement_x_for_1_includes_wager():
    t = Paytable.builtin("dynamic1")
    draw = DynamicDraw(((Hand.THREE_OF_A_KIND, 40),), "v")
    p = settle(Hand.FOUR_OF_A_KIND_SAME_COLOR, 100, t, draw, Fraction(10**6))
    assert (p.amount, p.odds, p.source, p.dynamic) == (50_000, 500, "table_inventory", False)
    p = settle(Hand.THREE_OF_A_KIND, 500, t, draw, Fraction(10**6))
    assert (p.amount, p.odds, p.dynamic) == (20_000, 40, True)
    p = settle(Hand.FOUR_OF_A_KIND_SUITED, 100, t, draw, Fraction(2_000_029, 2))
    assert (p.amount, p.source, p.odds) == (1_000_014, "meter", None)
    assert settle(Hand.LOSS, 100, t, draw, Fraction(10**6)) is None


def test_split_meter_exact():
    assert split_meter(Fraction(1_000_000), 3) == (333_333, Fraction(1))
    share, rest = split_meter(Fraction(1_234_567, 7), 2)
    assert share * 2 + rest == Fraction(1_234_567, 7) and 0 <= rest < 2


def test_dynamic_draw_chi_square_against_weights():
    """100,000 draws: counts, combinations and payouts each fit the configured weights
    (chi-square below the 99.9% critical value)."""
    cfg = load_config()
    w = cfg.dynamic
    rng = random.Random(1234)
    n = 100_000
    count_obs = {k: 0 for k in w.count_weights}
    combo_obs = {h: 0 for h in w.combination_weights}
    pay_obs = {h: {p: 0 for p in cfg.paytable.dynamic_choices(h)} for h in w.combination_weights}
    for _ in range(n):
        d = draw_dynamic_pays(w, cfg.paytable, rng)
        count_obs[len(d.selections)] += 1
        assert len({h for h, _ in d.selections}) == len(d.selections)
        for h, p in d.selections:
            combo_obs[h] += 1
            pay_obs[h][p] += 1

    def chi2(obs, probs, total):
        return sum((obs[k] - total * float(probs[k])) ** 2 / (total * float(probs[k]))
                   for k in obs)

    tw = sum(w.count_weights.values())
    assert chi2(count_obs, {k: Fraction(v, tw) for k, v in w.count_weights.items()}, n) < 13.82
    incl = w.combination_probabilities()
    # Inclusion counts are not multinomial, but each is binomial: check each within 4.5 sd.
    for h, p in incl.items():
        sd = (n * float(p) * (1 - float(p))) ** 0.5
        assert abs(combo_obs[h] - n * float(p)) < 4.5 * sd
    for h, obs in pay_obs.items():
        ws = w.payout_weights[h]
        probs = {p: Fraction(x, sum(ws)) for p, x in zip(cfg.paytable.dynamic_choices(h), ws,
                                                          strict=True)}
        assert chi2(obs, probs, combo_obs[h]) < 27.88  # 9 degrees of freedom, 99.9%


def test_dynamic_draw_uses_os_generator_by_default():
    cfg = load_config()
    draws = {draw_dynamic_pays(cfg.dynamic, cfg.paytable).to_json() for _ in range(50)}
    assert len(draws) > 5
    d = draw_dynamic_pays(cfg.dynamic, cfg.paytable)
    assert DynamicDraw.from_json(d.to_json()) == d and d.weights_version == "DP1-2026.11-a"
