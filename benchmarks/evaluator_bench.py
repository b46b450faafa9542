"""Evaluator throughput and exact-odds time. Prints medians of repeated runs.

    python benchmarks/evaluator_bench.py

Targets (issue 2): vectorised >= 20 million hands/s on one core; exact odds for a full or
partial 8-deck shoe in under 10 ms.
"""

from __future__ import annotations

import os
import statistics
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from controller.cards import ALL_CARDS, parse_cards  # noqa: E402
from controller.config import load_config  # noqa: E402
from controller.hands import evaluate, evaluate_indices  # noqa: E402
from controller.odds import compute_odds  # noqa: E402


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    rng = np.random.default_rng(1)
    n_scalar = 100_000
    idx = rng.integers(0, 52, size=(n_scalar, 4))
    hands = [tuple(ALL_CARDS[i] for i in row) for row in idx]

    def scalar() -> None:
        for h in hands:
            evaluate(h)

    t = median_time(scalar, 5)
    print(f"scalar evaluate():            {n_scalar / t / 1e6:8.3f} M hands/s"
          f"  (median of 5 x {n_scalar:,})")

    n_vec = 10_000_000
    big = rng.integers(0, 52, size=(n_vec, 4), dtype=np.uint8)
    evaluate_indices(big[:1000])
    t = median_time(lambda: evaluate_indices(big), 7)
    print(f"vectorised evaluate_indices: {n_vec / t / 1e6:8.1f} M hands/s"
          f"  (median of 7 x {n_vec:,})")
    print(f"vectorised / scalar ratio: {(n_vec / t) / (n_scalar / median_time(scalar, 3)):8.0f}x")

    cfg = load_config(decks=8)
    full = cfg.shoe.counts()
    seen = parse_cards(["AS", "AS", "KD", "7C", "7C", "7H", "QS", "2D"] * 3)
    partial = cfg.shoe.remaining(seen)
    for name, shoe in (("full 8-deck", full), ("partial 8-deck (24 seen)", partial)):
        t = median_time(lambda s=shoe: compute_odds(s, 8, cfg.paytable, cfg.dynamic), 51)
        print(f"exact odds, {name:<26} {t * 1e3:8.3f} ms  (median of 51)")
    t = median_time(lambda: cfg.shoe.remaining(seen) and compute_odds(
        cfg.shoe.remaining(seen), 8, cfg.paytable, cfg.dynamic), 51)
    print(f"exact odds incl. building the partial shoe {t * 1e3:8.3f} ms  (median of 51)")


if __name__ == "__main__":
    main()
