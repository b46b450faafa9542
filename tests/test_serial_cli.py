"""shoe-listen, shoe-sim and board-sim as subprocesses, talking over real ptys and sockets."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
from pathlib import Path

import pytest
from serial_support import drain

from controller.devices.board import BoardClient
from controller.devices.wagering import LockedOut, WagerAccepted, WagerRecognizer

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _mm(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "controller", *args],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _connect_line(proc: subprocess.Popen) -> str:
    line = proc.stdout.readline()
    assert line.startswith("connect: "), (line, proc.stderr.read() if proc.poll() else "")
    return line.split(" ", 1)[1].strip()


@pytest.mark.parametrize(
    "sim_args",
    [
        [],
        ["--tcp", "0"],
        ["--noise", "0.2", "--corrupt", "0.1", "--duplicate", "0.1", "--drop-acks", "0.2",
         "--fault-seed", "3"],
    ],
    ids=["pty", "tcp", "faults"],
)
def test_shoe_listen_against_shoe_sim(sim_args):
    cards = ["7D", "KH", "AS", "2C", "QH", "9S"]
    sim = _mm("shoe-sim", "--cards", ",".join(cards), "--decks", "8", "--error", "6:LOW",
              *sim_args)
    try:
        url = _connect_line(sim)
        listen = _mm("shoe-listen", "--port", url, "--json", "--give-up", "0.5")
        out, err = listen.communicate(timeout=30)
        assert listen.returncode == 0, err
        sim.wait(timeout=10)
        assert sim.returncode == 0
    finally:
        sim.kill()
        sim.wait()
        for f in (sim.stdout, sim.stderr):
            f.close()
    lines = [json.loads(x) for x in out.splitlines()]
    kinds = [x["type"] for x in lines]
    assert kinds == ["HELLO", "SHUFFLE"] + ["CARD"] * len(cards) + ["ERR"], out
    assert lines[0] == {"seq": 1, "type": "HELLO", "model": "SIM-SHOE", "firmware": "1.0",
                        "serial": "SN0001"}
    # a heartbeat (every second, not printed) takes a sequence number too: on a loaded machine
    # one falls between HELLO and SHUFFLE
    assert lines[1] == {"seq": lines[1]["seq"], "type": "SHUFFLE", "decks": 8}
    card_lines = lines[2:-1]
    assert [x["card"] for x in card_lines] == cards
    assert all(set(x) == {"seq", "type", "card", "millis"} for x in card_lines)
    seqs = [x["seq"] for x in lines]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert lines[-1] == {"seq": lines[-1]["seq"], "type": "ERR", "code": "LOW", "text": "low"}
    assert "shoe online" in err and "shoe offline" in err


def test_shoe_listen_bad_port_is_one_line_error():
    p = _mm("shoe-listen", "--port", "/dev/no-such-shoe")
    out, err = p.communicate(timeout=20)
    assert p.returncode == 2
    assert err.strip().count("\n") == 0
    assert "cannot open /dev/no-such-shoe" in err


@pytest.mark.parametrize(
    "args,message",
    [
        (["shoe-sim", "--cards", "7D,XX"], "bad card code"),
        (["shoe-sim", "--error", "3:FIRE"], "bad --error"),
        (["board-sim", "--script", "BET 9 ON"], "seat 9"),
        (["board-sim", "--silent-for", "2"], "--silent-for needs --silent-after"),
    ],
)
def test_sim_bad_arguments(args, message):
    p = _mm(*args)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 2 and message in err


@pytest.mark.parametrize("cmd", ["shoe-listen", "shoe-sim", "board-sim"])
def test_help(cmd):
    p = _mm(cmd, "--help")
    out, _ = p.communicate(timeout=20)
    assert p.returncode == 0 and cmd in out


def test_board_sim_script_against_board_client():
    sim = _mm(
        "board-sim", "--seats", "6",
        # The wager's LIGHT is acknowledged before the lock-out press: LOCK jumps the queue
        # (by design), so without the pause a loaded machine may send LOCK ON first.
        "--script", "WAIT 0.3; MAIN 2 ON; BET 2 ON; WAIT 0.3; BUTTON LOCKOUT; WAIT 0.3",
    )
    decisions: queue.Queue = queue.Queue()
    board = None
    try:
        url = _connect_line(sim)
        holder: dict = {}
        board = BoardClient(url, on_event=lambda e: holder["rec"].handle(e))
        holder["rec"] = rec = WagerRecognizer(board, on_decision=decisions.put)
        rec.open_bets()  # queued; goes out once the port is open
        board.start(require_open=True)
        got = drain(decisions, 10.0, lambda d: len(d) >= 2)
        assert got == [WagerAccepted(2), LockedOut((2,), (2,))]
        out, err = sim.communicate(timeout=20)
        assert sim.returncode == 0, err
    finally:
        if board is not None:
            board.close()
        if sim.poll() is None:
            sim.kill()
            sim.communicate()
    commands = [json.loads(x) for x in out.splitlines()]
    assert [(c["type"], c["fields"]) for c in commands] == [
        ("LOCK", ["OFF"]),
        ("LIGHT", ["2", "ON", "WAGER"]),
        ("LOCK", ["ON"]),
    ]
