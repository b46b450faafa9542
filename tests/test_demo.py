"""`monster-match demo` end to end: simulated devices on ptys, controller, store, web."""

import json
import subprocess
import sys


def cli(*args, timeout=240):
    return subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_demo_plays_rounds_and_the_books_reconcile(tmp_path):
    db = str(tmp_path / "demo.db")
    res = cli("demo", "--rounds", "6", "--pace", "0", "--port", "0", "--db", db, "--seed", "7",
              "--no-camera")
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "http://127.0.0.1:" in out and "/sign" in out and "/dev/pts/" in out
    assert "6 rounds played" in out
    rep = json.loads(cli("report", "--db", db, "--json").stdout)
    assert rep["rounds_completed"] == 6 and rep["wagers_count"] >= 1
    assert cli("audit", "--db", db).returncode == 0
    # Every wager went through the table board's sensors, every card through the shoe link.
    import sqlite3
    con = sqlite3.connect(db)
    actors = {r[0] for r in con.execute("SELECT actor FROM audit WHERE kind='wager_accepted'")}
    assert actors == {"dealer@board (dealer)"}
    sources = {r[0] for r in con.execute("SELECT source FROM cards")}
    assert sources == {"shoe"}
    seqs = [r[0] for r in con.execute("SELECT shoe_seq FROM cards ORDER BY round_id, position")]
    assert all(s is not None for s in seqs) and len(set(seqs)) == len(seqs)
