"""Serial benchmark: frames parsed per second, and CARD-write -> event latency over a pty.

Run from the repository root::

    python benchmarks/serial_bench.py [--frames 50000] [--runs 7] [--latency-frames 2000]

1. Parser: ``FrameParser.feed`` over N CARD frames in 4 KiB chunks (clean stream, and one with
   5% of frames corrupted plus random noise between frames); median frames/s over the runs.
2. Link over a pty: N frames written raw to the device end of a pseudo-terminal, read by a
   :class:`~controller.devices.shoe.ShoeClient` (parse, ACK each frame, decode, queue the event);
   frames/s until the last event arrives (median over the runs).
3. Latency: one CARD frame written every 2 ms to the pty; time from just before ``os.write`` to
   the ShoeClient's event callback; p50 / p99 / max.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.cards import ALL_CARDS  # noqa: E402
from controller.devices.frames import Frame, FrameParser, encode_frame, next_seq  # noqa: E402
from controller.devices.ports import PtyPort  # noqa: E402
from controller.devices.shoe import CardDrawn, ShoeClient  # noqa: E402


def make_stream(n: int, faults: bool, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    out = []
    seq = 1
    for i in range(n):
        raw = encode_frame(seq, "CARD", rng.choice(ALL_CARDS).code, str(i))
        if faults and rng.random() < 0.05:
            b = bytearray(raw)
            j = rng.randrange(len(b))
            b[j] = (b[j] + 1) % 256
            raw = bytes(b)
        out.append(raw)
        if faults and rng.random() < 0.3:
            out.append(rng.randbytes(rng.randrange(1, 30)))
        seq = next_seq(seq)
    return b"".join(out)


def bench_parser(n: int, runs: int, faults: bool) -> tuple[float, int]:
    data = make_stream(n, faults)
    chunks = [data[i : i + 4096] for i in range(0, len(data), 4096)]
    rates = []
    frames = 0
    for _ in range(runs):
        p = FrameParser()
        t0 = time.perf_counter()
        frames = 0
        for c in chunks:
            for item in p.feed(c):
                if isinstance(item, Frame):
                    frames += 1
        rates.append(frames / (time.perf_counter() - t0))
    return statistics.median(rates), frames


class _Drain(threading.Thread):
    """Reads (and discards) what the controller writes back, so the pty never fills."""

    def __init__(self, pty: PtyPort) -> None:
        super().__init__(daemon=True)
        self.pty = pty
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.pty.read_some()
            except OSError:
                return


def bench_link(n: int, runs: int) -> float:
    data = make_stream(n, faults=False, seed=2)
    rates = []
    for _ in range(runs):
        pty = PtyPort(write_timeout=30)
        drain = _Drain(pty)
        drain.start()
        done = threading.Event()
        count = [0]

        def on_event(e, count=count, done=done):
            if isinstance(e, CardDrawn):
                count[0] += 1
                if count[0] == n:
                    done.set()

        shoe = ShoeClient(pty.slave_path, on_event=on_event)
        shoe.start(require_open=True)
        t0 = time.perf_counter()
        for i in range(0, len(data), 4096):
            pty.write(data[i : i + 4096])
        ok = done.wait(120)
        elapsed = time.perf_counter() - t0
        shoe.close()
        drain.stop.set()
        pty.close()
        if not ok:
            raise RuntimeError(f"only {count[0]} of {n} events arrived")
        rates.append(n / elapsed)
    return statistics.median(rates)


def bench_latency(n: int, interval: float) -> list[float]:
    pty = PtyPort(write_timeout=5)
    drain = _Drain(pty)
    drain.start()
    sent: dict[int, float] = {}
    lat: list[float] = []
    done = threading.Event()

    def on_event(e):
        if isinstance(e, CardDrawn):
            lat.append(time.perf_counter() - sent[e.millis])
            if len(lat) == n:
                done.set()

    shoe = ShoeClient(pty.slave_path, on_event=on_event)
    shoe.start(require_open=True)
    time.sleep(0.1)
    seq = 1
    for i in range(n):
        raw = encode_frame(seq, "CARD", ALL_CARDS[i % 52].code, str(i))
        sent[i] = time.perf_counter()
        pty.write(raw)
        seq = next_seq(seq)
        time.sleep(interval)
    done.wait(30)
    shoe.close()
    drain.stop.set()
    pty.close()
    if len(lat) != n:
        raise RuntimeError(f"only {len(lat)} of {n} events arrived")
    return lat


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--link-frames", type=int, default=10_000)
    ap.add_argument("--link-runs", type=int, default=3)
    ap.add_argument("--latency-frames", type=int, default=2_000)
    ap.add_argument("--interval", type=float, default=0.002)
    a = ap.parse_args()

    rate, frames = bench_parser(a.frames, a.runs, faults=False)
    print(f"parser, clean stream:        {rate:12,.0f} frames/s  (median of {a.runs},"
          f" {frames} frames)")
    rate, frames = bench_parser(a.frames, a.runs, faults=True)
    print(f"parser, 5% corrupt + noise:  {rate:12,.0f} frames/s  (median of {a.runs},"
          f" {frames} valid of {a.frames})")
    rate = bench_link(a.link_frames, a.link_runs)
    print(f"link over pty (ACK + event): {rate:12,.0f} frames/s  (median of {a.link_runs},"
          f" {a.link_frames} frames)")
    lat = sorted(bench_latency(a.latency_frames, a.interval))
    q = statistics.quantiles(lat, n=100)
    print(
        f"CARD write -> event latency over pty ({len(lat)} frames, one every"
        f" {a.interval * 1000:.0f} ms): p50 {q[49] * 1e6:,.0f} us, p99 {q[98] * 1e6:,.0f} us,"
        f" max {lat[-1] * 1e6:,.0f} us"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
