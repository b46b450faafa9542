"""Kill -9 a running simulation at random moments; resume; the books must reconcile."""

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

from controller.books import audit
from controller.storage import Store


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_kill_minus_9_twenty_times_then_resume(tmp_path):
    db = str(tmp_path / "sim.db")
    # 17 rounds a second on the twenty-third session's machine (every step a synchronous
    # write; 2500 rounds took 144 s there): the kills below let it run about 8 s in all.
    rounds = 1200
    rng = random.Random(4242)
    kills = 0
    started = time.monotonic()
    while kills < 22:
        proc = subprocess.Popen([sys.executable, "-m", "controller", "table", "--simulate",
                                 "--db", db, "--rounds", str(rounds), "--seed", "9", "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # Python start-up takes ~0.3 s; kill somewhere inside the run.
        time.sleep(rng.uniform(0.3, 1.0))
        if proc.poll() is not None:
            assert proc.returncode == 0, proc.stderr.read()
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        assert time.monotonic() - started < 300
    res = cli("table", "--simulate", "--db", db, "--rounds", str(rounds), "--seed", "9",
              "--quiet", timeout=600)
    assert res.returncode == 0, res.stderr
    assert kills >= 20, f"the run finished after only {kills} kills: raise --rounds"
    rep = json.loads(cli("report", "--db", db, "--json").stdout)
    assert rep["rounds_completed"] == rounds
    res = cli("audit", "--db", db)
    assert res.returncode == 0, res.stdout + res.stderr
    # The identity, recomputed here from the report's own figures.
    from fractions import Fraction

    def d(key):
        return Fraction(rep[key])
    assert d("meter") == d("seed") + d("increments_total") - d("jackpots_paid") + d(
        "reseeds_total")
    assert d("increments_total") == d("wagers_total") * Fraction(14, 100)
    # Nothing doubled: each round's wagers are entered in the ledger at most once.
    store = Store(db)
    dup = store.db.execute("SELECT round_id, seat, COUNT(*) n FROM ledger WHERE kind='wager' "
                           "GROUP BY round_id, seat HAVING n > 1").fetchall()
    assert dup == []
    draws = store.db.execute("SELECT round_id, COUNT(*) n FROM audit WHERE "
                             "kind='dynamic_pays_drawn' GROUP BY round_id HAVING n > 1").fetchall()
    assert draws == []
    assert audit(store) == []
    store.close()


def test_report_json_keys(tmp_path):
    db = str(tmp_path / "r.db")
    assert cli("table", "--simulate", "--db", db, "--rounds", "30", "--quiet").returncode == 0
    rep = json.loads(cli("report", "--db", db, "--json").stdout)
    assert rep["rounds_completed"] == 30 and isinstance(rep["wagers_count"], int)
    for key in ("wagers_total", "increments_total", "reserve_total", "seed", "meter", "reserve",
                "jackpots_paid", "reseeds_total", "house_contributions", "fixed_pays_total"):
        assert isinstance(rep[key], str) and "." in rep[key], key
    assert rep["seed"] == "10000.00"
    # Running again with a larger N resumes to it; with the same N does nothing more.
    assert cli("table", "--simulate", "--db", db, "--rounds", "40", "--quiet").returncode == 0
    assert json.loads(cli("report", "--db", db, "--json").stdout)["rounds_completed"] == 40


def test_audit_cli_names_discrepancy(tmp_path):
    db = str(tmp_path / "a.db")
    assert cli("table", "--simulate", "--db", db, "--rounds", "20", "--quiet").returncode == 0
    assert cli("audit", "--db", db).returncode == 0
    con = sqlite3.connect(db)
    con.execute("UPDATE ledger SET amount = '1' WHERE id = (SELECT MAX(id) FROM ledger "
                "WHERE kind = 'wager')")
    con.commit()
    con.close()
    res = cli("audit", "--db", db, "--json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    assert not doc["ok"] and any("content does not match its hash" in p for p in doc["problems"])
    res = cli("audit", "--db", str(tmp_path / "missing.db"))
    assert res.returncode != 0 and "no such database" in res.stderr


def test_corrupt_database_file_is_refused(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    res = cli("report", "--db", str(bad))
    assert res.returncode != 0 and "not a usable monster-match database" in res.stderr
