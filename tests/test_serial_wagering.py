"""Wager recognition (§ 635b.3(c)(1), (d)) with the board client and simulator over a pty."""

from __future__ import annotations

import queue
import time

import pytest
from serial_support import drain

from controller.devices.board import Bet, BoardClient, BoardCommandError, Button, Main
from controller.devices.sim import BoardSimulator
from controller.devices.wagering import (
    REFUSED_LOCKED,
    REFUSED_NO_MAIN,
    LockedOut,
    SensorAfterLockout,
    WagerAccepted,
    WagerRecognizer,
    WagerRefused,
    WagerWithdrawn,
)


@pytest.fixture
def table():
    sim = BoardSimulator("pty", seats=7)
    sim.start()
    decisions: queue.Queue = queue.Queue()
    events: queue.Queue = queue.Queue()
    holder: dict = {}

    def on_event(e):
        events.put(e)
        holder["rec"].handle(e)

    board = BoardClient(sim.url, on_event=on_event)
    holder["rec"] = rec = WagerRecognizer(board, on_decision=decisions.put)
    board.start(require_open=True)
    assert sim.wait_hello(3.0)
    deadline = time.monotonic() + 2  # the HELLO is acknowledged before it is handled
    while board.last_hello is None and time.monotonic() < deadline:
        time.sleep(0.01)
    yield sim, board, rec, decisions
    board.close()
    sim.close()


def _next(decisions: queue.Queue, n: int = 1) -> list:
    got = drain(decisions, 3.0, lambda d: len(d) >= n)
    assert len(got) == n, got
    return got


def test_bet_needs_main_and_open_bets_and_lockout_sends_lock_on(table):
    sim, board, rec, decisions = table
    assert board.seats == 7 and board.last_hello.model == "SIM-BOARD"
    rec.open_bets()
    assert sim.wait_for_command(lambda f: f.type == "LOCK" and f.fields == ("OFF",), 2.0)

    sim.main(1, True)
    sim.bet(1, True)
    assert _next(decisions) == [WagerAccepted(1)]
    ack = sim.wait_for_command(lambda f: f.type == "LIGHT" and f.fields[0] == "1", 2.0)
    assert ack.fields == ("1", "ON", "WAGER")  # acknowledged at the seat

    sim.bet(2, True)  # seat 2 has no main wager
    assert _next(decisions) == [WagerRefused(2, REFUSED_NO_MAIN)]
    blink = sim.wait_for_command(lambda f: f.type == "LIGHT" and f.fields[0] == "2", 2.0)
    assert blink.fields == ("2", "BLINK", "NO MAIN WAGER")

    sim.main(3, True)
    sim.bet(3, True)
    sim.bet(3, False)  # taken back while bets are open
    assert _next(decisions, 2) == [WagerAccepted(3), WagerWithdrawn(3, "progressive bet removed")]

    sim.press("LOCKOUT")
    t_pressed = time.monotonic()
    lock = sim.wait_for_command(lambda f: f.type == "LOCK" and f.fields == ("ON",), 2.0)
    assert lock is not None and time.monotonic() - t_pressed < 0.5
    assert sim.locked
    assert _next(decisions) == [LockedOut(wagers=(1,), seats_in=(1, 3))]

    sim.main(4, True)
    sim.bet(4, True)  # after lock-out: refused, reported, never counted
    sim.bet(3, True)
    got = _next(decisions, 3)
    assert got == [
        SensorAfterLockout("MAIN", 4, True),
        WagerRefused(4, REFUSED_LOCKED),
        WagerRefused(3, REFUSED_LOCKED),
    ]
    assert rec.wagers == frozenset({1})
    assert rec.locked_out.wagers == (1,)
    assert not rec.bets_open


def test_removing_main_withdraws_the_wager_and_next_round_resets(table):
    sim, board, rec, decisions = table
    rec.open_bets()
    sim.main(5, True)
    sim.bet(5, True)
    sim.main(5, False)
    assert _next(decisions, 2) == [WagerAccepted(5), WagerWithdrawn(5, "main wager removed")]
    sim.main(5, True)  # main back, progressive still on the spot: recognised again
    assert _next(decisions) == [WagerAccepted(5)]
    sim.press("LOCKOUT")
    assert _next(decisions) == [LockedOut((5,), (5,))]
    rec.open_bets()  # next round: sensors still on, recognised again while open
    assert _next(decisions) == [WagerAccepted(5)]
    assert rec.bets_open and rec.wagers == frozenset({5})


def test_bet_before_bets_open_is_not_counted():
    rec = WagerRecognizer()  # starts locked: nothing counts before open_bets()
    assert rec.handle(Main(1, True, 1)) == [SensorAfterLockout("MAIN", 1, True)]
    assert rec.handle(Bet(1, True, 2)) == [WagerRefused(1, REFUSED_LOCKED)]
    assert rec.wagers == frozenset()
    assert rec.open_bets() == [WagerAccepted(1)]
    assert rec.handle(Button("REVEAL", 3)) == []


def test_board_commands_are_validated(table):
    sim, board, rec, decisions = table
    with pytest.raises(BoardCommandError):
        board.light(8, "ON", "x")  # the board has 7 seats
    with pytest.raises(BoardCommandError):
        board.light(1, "GREEN", "")
    with pytest.raises(BoardCommandError):
        board.sign("a|b")
    with pytest.raises(BoardCommandError):
        board.sign("x" * 200)
    assert board.light(2, "ON", "Three of a Kind").wait(2.0)
    assert board.sign("Dynamic Pays: Four of a Kind 300 for 1").wait(2.0)
    # The link ACKs a frame on receipt, before the simulator's callback has handled it (as a
    # real board does): wait until the simulator has recorded the command, then read its state.
    assert sim.wait_for_command(lambda f: f.type == "SIGN", 2.0) is not None
    assert sim.lights[2] == ("ON", "Three of a Kind")
    assert sim.sign_text == "Dynamic Pays: Four of a Kind 300 for 1"


def test_board_protocol_errors_are_not_events(table):
    sim, board, rec, decisions = table
    bad = (("BET", "9", "ON"), ("BET", "1", "MAYBE"), ("BUTTON", "PANIC"), ("MAIN", "x", "ON"))
    for frame in bad:
        assert sim.deliver(*frame)
    sim.press("CALL")
    deadline = time.monotonic() + 2
    while board.protocol_errors < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert board.protocol_errors == 4
    assert _next(decisions, 0) == []
