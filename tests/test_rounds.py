"""The round state machine, meter books, validation and information hiding."""

import json
from fractions import Fraction

import pytest

from controller.auth import AuthError, Role
from controller.books import audit, report
from controller.hands import Hand
from controller.rounds import IllegalEvent, State


def counts(store):
    db = store.db
    return (db.execute("SELECT COUNT(*) FROM ledger").fetchone()[0],
            db.execute("SELECT state FROM rounds ORDER BY id DESC").fetchone(),
            db.execute("SELECT COUNT(*) FROM wagers").fetchone()[0],
            db.execute("SELECT COUNT(*) FROM cards").fetchone()[0],
            db.execute("SELECT COUNT(*) FROM results").fetchone()[0])


def refusals(store):
    return store.db.execute("SELECT COUNT(*) FROM audit WHERE kind='refused'").fetchone()[0]


def drive_to(h, target):
    """Bring a fresh harness's table to ``target`` state (a win at seat 1 where needed)."""
    t = h.table
    if target is State.CLOSED:
        return
    t.open_round()
    t.set_main(1, True)
    t.set_main(2, True)
    if target is State.BETS_OPEN:
        return
    t.place_wager(1)
    t.lockout()
    if target is State.LOCKED:
        return
    if target is State.HELD:
        t.chip_count(5, h.dealer)
        return
    t.chip_count(1, h.dealer)
    if target is State.DRAWN:
        return
    # seats 1, 2 dealt in: seat1:1 seat2:1 up seat1:2 seat2:2 hole
    h.deal("7H", "2C", "7D", "7H", "3C")
    if target is State.DEALING:
        return
    h.deal("KS")
    t.reveal(h.dealer)
    assert t.current().state is State.FLAGGED
    if target is State.FLAGGED:
        return
    raise AssertionError(target)


EVENTS = {
    "open_round": lambda h: h.table.open_round(),
    "wager": lambda h: h.table.place_wager(2),
    "lockout": lambda h: h.table.lockout(),
    "chip_count": lambda h: h.table.chip_count(1, h.dealer),
    "deal": lambda h: h.table.deal("5S"),
    "reveal": lambda h: h.table.reveal(h.dealer),
    "confirm": lambda h: h.table.confirm_win(1, h.dealer),
    "validate": lambda h: h.table.validate_win(1, h.floor),
    "resolve": lambda h: h.table.resolve(h.floor, "continue", "checked"),
    "document": lambda h: h.table.document_jackpot(1, "JP-1", h.floor),
}
ALLOWED = {
    State.CLOSED: {"open_round"},
    State.BETS_OPEN: {"wager", "lockout"},
    State.LOCKED: {"chip_count"},
    State.HELD: {"resolve"},  # held at the chip count, before the draw
    State.DRAWN: {"deal"},
    State.DEALING: {"deal"},  # reveal needs the hole card, not dealt yet here
    State.FLAGGED: {"confirm", "deal"},
}


@pytest.mark.parametrize("state", list(ALLOWED))
@pytest.mark.parametrize("event", list(EVENTS))
def test_every_illegal_event_in_every_state_is_refused(tmp_path, state, event):
    from tests.conftest import Harness

    h = Harness(tmp_path / "t.db")
    drive_to(h, state)
    before, refused = counts(h.store), refusals(h.store)
    if event in ALLOWED[state]:
        EVENTS[event](h)  # allowed: must not raise
        return
    with pytest.raises(IllegalEvent, match="refused"):
        EVENTS[event](h)
    assert counts(h.store) == before, "a refused event changed the store"
    assert refusals(h.store) == refused + 1, "the refusal was not recorded"
    assert audit(h.store) == []


def test_wager_after_lockout_never_counted(harness):
    h, t = harness, harness.table
    t.open_round()
    for s in (1, 2, 3):
        t.set_main(s, True)
    t.place_wager(1)
    t.lockout()
    with pytest.raises(IllegalEvent, match="wager refused"):
        t.place_wager(2)
    t.chip_count(1, h.dealer)
    assert t.current().wagers == {1: 100}
    assert report(h.store)["wagers_count"] == 1


def test_wager_needs_main_wager(harness):
    t = harness.table
    t.open_round()
    with pytest.raises(IllegalEvent, match="no main wager"):
        t.place_wager(4)
    with pytest.raises(IllegalEvent, match="seats 1-6"):
        t.set_main(9, True)


def test_count_mismatch_holds_until_floorperson(harness):
    h, t = harness, harness.table
    t.open_round()
    t.set_main(1, True)
    t.place_wager(1)
    t.lockout()
    assert t.chip_count(2, h.dealer) is False
    rnd = t.current()
    assert rnd.state is State.HELD and "does not equal" in rnd.hold_reason
    assert rnd.draw is None
    with pytest.raises(IllegalEvent):
        t.deal("5S")
    with pytest.raises(IllegalEvent, match="not a floorperson"):
        t.resolve(h.dealer, "continue", "recount")
    t.resolve(h.floor, "continue", "recounted: one chip")
    assert t.current().state is State.DRAWN and t.current().draw is not None
    assert audit(h.store) == []


def test_void_before_draw_counts_nothing(harness):
    h, t = harness, harness.table
    t.open_round()
    t.set_main(1, True)
    t.place_wager(1)
    t.lockout()
    t.chip_count(0, h.dealer)
    t.resolve(h.floor, "void", "chips returned to player")
    assert t.current() is None
    assert report(h.store)["wagers_count"] == 0
    assert audit(h.store) == []


def test_redraw_impossible_and_restart_keeps_draw(harness):
    h = harness
    h.play_to_deal()
    first = h.table.current().draw
    h.deal("5S")
    h.reopen(seed=99)
    rnd = h.table.current()
    assert rnd.draw == first and rnd.wagers == {1: 100, 3: 100}
    assert [c["code"] for c in rnd.cards] == ["5S"]
    with pytest.raises(IllegalEvent):
        h.table.chip_count(2, h.dealer)
    draws = h.store.db.execute(
        "SELECT COUNT(*) FROM audit WHERE kind='dynamic_pays_drawn'").fetchone()[0]
    assert draws == 1


def test_dealing_order_and_extras(harness):
    h = harness
    h.play_to_deal(wagers=(1, 3), mains=(1, 3, 5))  # seat 2 sits out; 5 plays without wager
    spots = h.deal("AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "JS")
    assert spots == ["seat1:1", "seat3:1", "seat5:1", "dealer:up", "seat1:2", "seat3:2",
                     "seat5:2", "dealer:hole", "extra", "extra"]
    h.table.reveal(h.dealer)
    hands = h.table.hands(h.table.round(1))
    assert hands[1][0] == ["AS", "5S", "4S", "8S"] and set(hands) == {1, 3}


def test_information_hiding_before_reveal(harness):
    h = harness
    h.play_to_deal(wagers=(1,), mains=(1,))
    h.deal("7H", "7D", "7H", "KH")  # seat1 7H, up 7D, seat1 7H, hole KH... three of a kind
    view = h.table.public_view()
    assert h.lights == []
    assert view["round"]["wins"] == [] and "KH" not in json.dumps(view)
    # Nor in any audit record readable before the reveal.
    payloads = " ".join(r[0] for r in h.store.db.execute("SELECT payload FROM audit"))
    assert "KH" not in payloads and '"hands"' not in payloads
    h.table.reveal(h.dealer)
    assert h.lights == [[(1, "ON", "Three of a Kind Same Color")]]
    assert "three_of_a_kind_same_color" in json.dumps(h.table.public_view())


def test_fixed_win_needs_dealer_then_floorperson(harness):
    h, t = harness, harness.table
    h.play_to_deal(wagers=(1,), mains=(1,))
    h.deal("7H", "7D", "7S", "KH")
    t.reveal(h.dealer)
    rnd = t.current()
    assert rnd.state is State.FLAGGED
    with pytest.raises(IllegalEvent, match="not confirmed"):
        t.validate_win(1, h.floor)
    with pytest.raises(IllegalEvent, match="not a dealer"):
        t.confirm_win(1, h.floor)
    t.confirm_win(1, h.dealer)
    with pytest.raises(IllegalEvent, match="not a floorperson"):
        t.validate_win(1, h.dealer)
    rnd_hand = Hand.THREE_OF_A_KIND
    odds = rnd.draw.pays_for(rnd_hand)
    t.validate_win(1, h.floor)
    assert t.current() is None
    res = h.store.db.execute("SELECT * FROM results").fetchone()
    assert res["hand"] == rnd_hand.value and res["odds"] == (odds or 4)
    assert res["confirmed_by"] == "dealer1" and res["validated_by"] == "floorperson1"
    assert report(h.store)["fixed_pays_total"] == f"{(odds or 4)}.00"
    assert audit(h.store) == []


def test_shared_jackpot_reseed_and_books(harness):
    h, t = harness, harness.table
    # Seats 1 and 2 both make four aces of spades: two meter winners.
    t.open_round()
    for s in (1, 2):
        t.set_main(s, True)
        t.place_wager(s)
    t.lockout()
    t.chip_count(2, h.dealer)
    meter_before = t.meter
    assert meter_before == 1_000_000 + Fraction(28)  # seed + 2 x 14 cents
    h.deal("AS", "AS", "AS", "AS", "AS", "AS")  # six copies: all a 6-deck shoe holds
    assert t.current().state is State.DEALING
    t.reveal(h.dealer)
    rnd = t.current()
    assert [(r["seat"], r["source"], r["meter_order"]) for r in rnd.results] == [
        (1, "meter", 1), (2, "meter", 2)]
    for s in (1, 2):
        t.confirm_win(s, h.dealer)
        t.validate_win(s, h.floor)
    with pytest.raises(IllegalEvent, match="no win to document"):
        t.document_jackpot(3, "x", h.floor)
    t.document_jackpot(1, "JP-0001", h.floor)
    assert t.current() is not None, "round closed before every meter payout was documented"
    t.document_jackpot(2, "JP-0002", h.floor)
    assert t.current() is None
    share = 500_014  # (1,000,028 cents) / 2
    rep = report(h.store)
    assert rep["jackpots_paid"] == "10000.28" and rep["jackpots_count"] == 2
    # Reseed: reserve held 2 x 4 cents, the house paid the rest of 10,000.00.
    assert rep["reseeds_total"] == "10000.00" and rep["house_contributions"] == "9999.92"
    assert rep["meter"] == "10000.00" and rep["reserve"] == "0.00"
    paid = [int(r[0]) for r in h.store.db.execute("SELECT amount FROM results ORDER BY seat")]
    assert paid == [share, share]
    assert audit(h.store) == []


def test_jackpot_remainder_stays_on_meter(harness):
    h, t = harness, harness.table
    for _ in range(3):  # three rounds of one 1-dollar wager: meter = seed + 42 cents
        t.open_round()
        t.set_main(1, True)
        t.place_wager(1)
        t.lockout()
        t.chip_count(1, h.dealer)
        h.deal("2C", "3D", "4H", "5S")
        t.reveal(h.dealer)
    # Now 3 meter winners sharing 1,000,042 + 3 x 14 cents.
    t.open_round()
    for s in (1, 2, 3):
        t.set_main(s, True)
        t.place_wager(s)
    t.lockout()
    t.chip_count(3, h.dealer)
    meter_at_hit = t.meter
    assert meter_at_hit == 1_000_084
    h.deal(*["KD"] * 8)  # no shoe loaded in this test, so copies are not counted
    t.reveal(h.dealer)
    for s in (1, 2, 3):
        t.confirm_win(s, h.dealer)
        t.validate_win(s, h.floor)
        t.document_jackpot(s, f"JP-{s}", h.floor)
    rep = report(h.store)
    assert rep["jackpots_paid"] == "10000.83"  # 3 x 333,361 cents
    assert rep["meter"] == "10000.01"  # 1 cent remainder stays, plus the reseed
    assert audit(h.store) == []


def test_exact_sub_cent_increments(tmp_path):
    cfg_path = tmp_path / "t.toml"
    cfg_path.write_text('[table]\nwager = "0.25"\n')
    import random

    from controller.auth import Auth
    from controller.config import load_config
    from controller.rounds import Table
    from controller.storage import Store
    store = Store(tmp_path / "q.db")
    t = Table(store, load_config(cfg_path), rng=random.Random(1))
    auth = Auth(store)
    auth.add_user("d", Role.DEALER, "a-long-password")
    t.open_round()
    t.set_main(1, True)
    t.place_wager(1)
    t.lockout()
    t.chip_count(1, auth.actor(auth.login("d", "a-long-password")))
    assert t.meter == 250_000 + Fraction(7, 2)  # 14% of 25 cents = 3.5 cents, carried exactly
    assert report(store)["meter"] == "2500.035"
    assert t.public_view()["meter"] == "2500.03"


def test_database_of_another_table_refused(tmp_path, harness):
    from controller.config import load_config
    from controller.rounds import Table
    cfg_path = tmp_path / "t.toml"
    cfg_path.write_text('[table]\nwager = "5.00"\n')
    with pytest.raises(IllegalEvent, match="belongs to a table"):
        Table(harness.store, load_config(cfg_path))


def test_auth_hashes_and_roles(harness):
    h = harness
    from pathlib import Path

    raw = Path(h.path).read_bytes() + Path(str(h.path) + "-wal").read_bytes()
    assert b"pw-dealer-0123" not in raw
    with pytest.raises(AuthError, match="wrong user name or password"):
        h.auth.login("dealer1", "not-the-password")
    with pytest.raises(AuthError, match="wrong user name or password"):
        h.auth.login("nobody", "whatever-long")
    token = h.auth.login("surveillance1", "pw-surveillance-0123")
    with pytest.raises(AuthError, match="needs a floorperson"):
        h.auth.actor(token, Role.FLOORPERSON)
    with pytest.raises(AuthError, match="at least"):
        h.auth.add_user("x", Role.DEALER, "short")
    h.store.db.execute("UPDATE sessions SET expires = 0")
    with pytest.raises(AuthError, match="expired"):
        h.auth.actor(token)


def test_sign_in_throttled_after_repeated_failures(harness):
    from controller.auth import MAX_FAILURES

    h = harness
    for _ in range(MAX_FAILURES):
        with pytest.raises(AuthError, match="wrong user name or password"):
            h.auth.login("floorperson1", "guess-guess-guess")
    with pytest.raises(AuthError, match="too many failed sign-ins"):
        h.auth.login("floorperson1", "pw-floorperson-0123")  # even the right password
    assert h.auth.login("dealer1", "pw-dealer-0123")  # other users are not affected


def test_audit_detects_tampering(harness):
    h, t = harness, harness.table
    h.play_to_deal(wagers=(1,), mains=(1,))
    h.deal("7H", "7D", "7S", "KH")
    t.reveal(h.dealer)
    assert audit(h.store) == []
    db = h.store.db
    db.execute("UPDATE ledger SET amount = '15' WHERE kind = 'increment'")
    problems = audit(h.store)
    assert any("ledger row" in p and "hash" in p for p in problems)
    assert any("meter: ledger gives" in p for p in problems)
    db.execute("UPDATE ledger SET amount = '14' WHERE kind = 'increment'")
    assert audit(h.store) == []
    db.execute("UPDATE audit SET actor = 'someone else' WHERE kind = 'win_confirmed' OR id = 3")
    assert any("audit row 3" in p for p in audit(h.store))


def test_audit_detects_deleted_last_row(harness):
    h = harness
    h.play_to_deal()
    h.store.db.execute("DELETE FROM audit WHERE id = (SELECT MAX(id) FROM audit)")
    assert any("chain head" in p or "rows" in p for p in audit(h.store))


def test_foreign_and_excess_cards_hold_the_round(harness):
    h, t = harness, harness.table
    t.shuffle(6, {"seed": 1})
    t.open_round()
    t.set_main(1, True)
    t.place_wager(1)
    t.lockout()
    t.chip_count(1, h.dealer)
    assert h.deal("9C") == ["burn"]
    h.deal("TS")
    rnd = t.current()
    assert rnd.state is State.HELD and "foreign card TS" in rnd.hold_reason
    with pytest.raises(IllegalEvent, match="held"):
        t.reveal(h.dealer)
    t.resolve(h.floor, "continue", "ten removed from play; hand stands as dealt")
    h.deal("QH", "QH", "QH", "QH", "QH")
    h.deal("QH", "QH")  # seventh queen of hearts from six decks
    rnd = t.current()
    assert rnd.state is State.HELD and "more than the 6 copies" in rnd.hold_reason
    t.resolve(h.floor, "continue", "checked")
    t.reveal(h.dealer)
    # The foreign ten is in seat 1's hand: never a winning hand.
    assert t.hands(t.round(rnd.id))[1][1] is Hand.LOSS
    assert audit(h.store) == []
