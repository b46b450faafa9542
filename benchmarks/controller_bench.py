"""Controller throughput with durable storage, and reveal-to-lights latency.

    python benchmarks/controller_bench.py [--rounds N] [--dir DIR]

Rounds per second: simulated rounds (every step an fsync'd SQLite transaction, WAL,
synchronous=FULL) on a database file in DIR (default: a temporary directory).
Latency: time from ``Table.reveal`` being called to the seat lights callback, over rounds with a
winning hand, p50 and p99.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from controller.auth import Auth, Role
from controller.config import load_config
from controller.rounds import Table
from controller.simulate import run_simulation
from controller.storage import Store


def rounds_per_second(path: Path, rounds: int) -> float:
    store = Store(path)
    table = Table(store, load_config())
    t0 = time.perf_counter()
    run_simulation(table, rounds, seed=1)
    elapsed = time.perf_counter() - t0
    store.close()
    return rounds / elapsed


def reveal_latency(path: Path, samples: int) -> list[float]:
    store = Store(path)
    marks: list[float] = []
    table = Table(store, load_config(), rng=random.Random(3),
                  on_lights=lambda lights: marks.append(time.perf_counter()))
    auth = Auth(store)
    auth.add_user("bench-dealer", Role.DEALER, "bench-password-1")
    dealer = auth.actor(auth.login("bench-dealer", "bench-password-1"))
    out = []
    for _ in range(samples):
        table.open_round()
        for s in (1, 2, 3):
            table.set_main(s, True)
            table.place_wager(s)
        table.lockout()
        table.chip_count(3, dealer)
        for code in ("7H", "7S", "2C", "7D", "9S", "3C", "4D", "7C"):
            table.deal(code)
        start = time.perf_counter()
        table.reveal(dealer)
        out.append((marks[-1] - start) * 1e3)
        # Close the round: nobody is validating in this benchmark, so void by hand.
        store.db.execute("UPDATE rounds SET state = 'closed' WHERE state != 'closed'")
    store.close()
    return out


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        runs = [rounds_per_second(Path(d) / f"r{i}.db", args.rounds) for i in range(3)]
        print(f"durable rounds/s: median {statistics.median(runs):.1f} "
              f"(3 runs of {args.rounds} rounds: {', '.join(f'{r:.1f}' for r in runs)})")
        lat = reveal_latency(Path(d) / "lat.db", 300)
        print(f"reveal -> seat lights: p50 {pct(lat, 50):.2f} ms, p99 {pct(lat, 99):.2f} ms "
              f"({len(lat)} winning rounds)")
    print(f"database directory: {args.dir or tempfile.gettempdir()}")


if __name__ == "__main__":
    main()
