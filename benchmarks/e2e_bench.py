"""End-to-end latency from the hole card's reveal to the seat light and the sign update.

    python benchmarks/e2e_bench.py [--rounds N]

The whole demo stack runs: controller, SQLite (fsync'd), the table board simulator on a
pseudo-terminal, the web server. Each round seat 1 makes three of a kind (a win). Measured
from the REVEAL button frame being written by the board simulator to
(a) the LIGHT command for seat 1 arriving back at the board simulator, and
(b) a server-sent event carrying the win arriving at an HTTP client of ``/events``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx

from controller.cards import parse_cards
from controller.config import load_config
from controller.demo import Demo, DemoOptions


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=100)
    args = ap.parse_args()
    light_at: dict[int, float] = {}
    sign_at: dict[int, float] = {}

    def on_board(frame) -> None:  # noqa: ANN001
        if frame.type == "LIGHT" and frame.fields[0] == "1" and frame.fields[2] != "WAGER" \
                and frame.fields[1] != "OFF":
            light_at.setdefault(current[0], time.perf_counter())

    current = [0]
    with tempfile.TemporaryDirectory() as d:
        opts = DemoOptions(db=str(Path(d) / "bench.db"), pace=0, camera=False, seed=1,
                           on_board_command=on_board)
        demo = Demo(load_config(), opts, say=lambda s: None)
        urls = demo.start()
        base = urls["sign"].rsplit("/", 1)[0]

        def listen() -> None:
            try:
                with httpx.stream("GET", f"{base}/events", timeout=None) as resp:
                    for line in resp.iter_lines():
                        if line.startswith("data: "):
                            view = json.loads(line[6:])
                            rnd = view.get("round") or {}
                            if rnd.get("wins") and rnd["id"] == current[0]:
                                sign_at.setdefault(current[0], time.perf_counter())
            except httpx.HTTPError:
                return  # the server stopped at the end of the run

        threading.Thread(target=listen, daemon=True).start()
        table, svc = demo.svc.table, demo.svc
        revealed: dict[int, float] = {}
        for i in range(args.rounds):
            if i % 5 == 0:  # a fresh shoe: six copies of each seven again
                demo.shoe_sim.deliver("SHUFFLE", "6")
                demo._wait(lambda: demo._meta("burn_pending") == "1", "shuffle")
                demo._shoe_cards = list(parse_cards(["2S"]))
                demo._deal_one()
            rid = svc.call(table.open_round, demo.dealer)
            current[0] = rid
            demo.devices.open_bets()
            demo.board_sim.main(1, True)
            demo.board_sim.bet(1, True)
            demo._wait(lambda: 1 in demo._current().wagers, "wager")
            demo.board_sim.press("LOCKOUT")
            demo._wait(lambda: demo._current().state.value == "locked", "lockout")
            svc.call(table.chip_count, 1, demo.dealer)
            demo._shoe_cards = list(parse_cards(["7S", "7H", "2C", "7D"]))
            for _ in range(4):
                demo._deal_one()
            revealed[rid] = time.perf_counter()
            demo.board_sim.press("REVEAL")
            demo._wait(lambda rid=rid: rid in light_at and rid in sign_at, "light and sign", 10)
            svc.call(table.confirm_win, 1, demo.dealer)
            svc.call(table.validate_win, 1, demo.floor)
            demo.board_sim.bet(1, False)
        demo.close()
    light = [(light_at[r] - t) * 1e3 for r, t in revealed.items()]
    sign = [(sign_at[r] - t) * 1e3 for r, t in revealed.items()]
    print(f"reveal -> seat light at the board: p50 {pct(light, 50):.2f} ms, "
          f"p99 {pct(light, 99):.2f} ms ({len(light)} rounds)")
    print(f"reveal -> sign update (SSE):       p50 {pct(sign, 50):.2f} ms, "
          f"p99 {pct(sign, 99):.2f} ms ({len(sign)} rounds)")
    print(f"slowest five lights: {', '.join(f'{v:.1f}' for v in sorted(light)[-5:])} ms")


if __name__ == "__main__":
    main()
