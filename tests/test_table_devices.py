"""Shoe and table board events into the round state machine, over real pseudo-terminals."""

import random
import time

import pytest

from controller.auth import Role
from controller.config import load_config
from controller.devices.sim import BoardSimulator, ShoeSimulator
from controller.rounds import State
from controller.service import TableService
from controller.storage import Store
from controller.table_devices import TableDevices


def wait(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


@pytest.fixture
def rig(tmp_path):
    store = Store(tmp_path / "d.db")
    svc = TableService(store, load_config(), rng=random.Random(2))
    svc.auth.add_user("d", Role.DEALER, "dealer-password")
    dealer = svc.actor(svc.auth.login("d", "dealer-password"))
    shoe = ShoeSimulator("pty", cards=[], decks=6, shuffle=True, linger=10**6)
    board = BoardSimulator("pty", seats=6)
    shoe.start()
    board.start()
    dev = TableDevices(svc, shoe.url, board.url)
    dev.start()
    wait(lambda: store.get_meta("burn_pending") == "1")
    yield svc, dev, shoe, board, dealer
    dev.close()
    shoe.close()
    board.close()
    store.close()


def test_round_through_devices_lock_out_and_late_bet(rig):
    svc, dev, shoe, board, dealer = rig
    t = svc.table
    svc.call(t.open_round)
    dev.open_bets()
    board.main(2, True)
    board.bet(2, True)
    board.bet(4, True)  # no main wager at seat 4: never a wager
    wait(lambda: 2 in svc.call(t.current).wagers)
    board.press("LOCKOUT")
    assert board.wait_for_command(lambda f: f.type == "LOCK" and f.fields == ("ON",), 2)
    wait(lambda: svc.call(t.current).state is State.LOCKED)
    board.main(5, True)
    board.bet(5, True)  # after lock-out: refused, never counted
    time.sleep(0.2)
    assert svc.call(t.current).wagers == {2: 100}
    svc.call(t.chip_count, 1, dealer)
    for code in ("9S", "7H", "7D", "7C", "KH"):  # burn, seat2, up, seat2, hole
        shoe.deliver("CARD", code, "1000")
    wait(lambda: svc.call(t.current).hole_dealt)
    board.press("REVEAL")
    light = board.wait_for_command(lambda f: f.type == "LIGHT" and f.fields[0] == "2"
                                   and f.fields[2] == "Three of a Kind", 3)
    assert light is not None and light.fields[1] == "ON"
    assert svc.call(t.current).state is State.FLAGGED


def test_shoe_error_and_card_out_of_turn_hold_the_round(rig):
    svc, dev, shoe, board, dealer = rig
    t = svc.table
    svc.call(t.open_round)
    dev.open_bets()
    board.main(1, True)
    board.bet(1, True)
    wait(lambda: 1 in svc.call(t.current).wagers)
    shoe.deliver("CARD", "9S", "1")  # the burn card: fine at any time
    shoe.deliver("CARD", "5D", "2")  # a card while bets are open: held
    wait(lambda: svc.call(t.current).state is State.HELD)
    assert "drawn while the round was bets_open" in svc.call(t.current).hold_reason
    shoe.deliver("ERR", "JAM", "card jam")
    wait(lambda: "shoe error JAM" in (svc.call(t.current).hold_reason or ""))
