"""The live table's camera checks and lights, timed: ``monster-match table --live`` on a shoe
and a table board simulated on pseudo-terminals and an MJPEG camera over HTTP.

    python benchmarks/live_table.py [--rounds N] [--settle-ms MS]

Each round seat 1 is dealt three of a kind (a win), the camera shows the layout as dealt and
then as revealed (rendered before the round, with the table's ArUco markers). Measured per
round, from the frame written by the simulator:

* **deal check**: the hole card's CARD frame -> the camera's ``camera_read`` record of the
  deal (settle, the camera's next frames, reading, cross-check, the record's fsync);
* **reveal check**: the REVEAL button -> the ``camera_read`` record of the reveal;
* **lights**: the REVEAL button -> the board receiving seat 1's LIGHT with its hand, while
  the camera's reveal check runs on the table's other thread;

and the cards the camera read by code, of those on the layout. Medians and 90th percentiles.
With ``--camera-sim`` the camera is ``monster-match camera-sim --table``, a process of its
own that draws what the table's record says was dealt as it changes (the checks then also
wait for its drawing, about a third of a second a layout).
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from controller.auth import Role  # noqa: E402
from controller.books import camera_reads  # noqa: E402
from controller.config import load_config  # noqa: E402
from controller.devices.sim import BoardSimulator, ShoeSimulator  # noqa: E402
from controller.live import LiveOptions, LiveTable  # noqa: E402
from controller.rounds import State  # noqa: E402
from controller.storage import Store  # noqa: E402
from vision.mjpeg import MjpegCamera  # noqa: E402
from vision.synth import DEFAULT_MARKERS, render_table  # noqa: E402

RANKS = "23456789K"


def jpeg(layout: dict[str, list[str]], seed: int) -> list[bytes]:
    img, _ = render_table(layout, np.random.default_rng(seed), tilt_max=20.0,
                          card_px=(54.0, 60.0), markers=DEFAULT_MARKERS, hands_in_area=True)
    return [cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()]


def wait(cond, what: str, timeout: float = 20.0) -> float:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.002)
    return time.perf_counter()


def summary(name: str, ms: list[float]) -> str:
    p90 = statistics.quantiles(ms, n=10, method="inclusive")[8] if len(ms) > 1 else ms[0]
    return f"{name:<14} median {statistics.median(ms):7.1f} ms   p90 {p90:7.1f} ms   (n={len(ms)})"


@contextmanager
def live_rig(work: Path, first: list[bytes], settle_ms: int, poll_s: float = 0.02,
             on_board: Callable[[Any], None] | None = None, camera_frames: int | None = None,
             hold_seconds: float = 0.0, camera_sim: bool = False
             ) -> Iterator[tuple[LiveTable, ShoeSimulator, BoardSimulator, MjpegCamera | None]]:
    """A running :class:`LiveTable` (its store in ``work``) on a shoe and a board simulated on
    pseudo-terminals and an MJPEG camera showing ``first``: yields the four, then stops and
    closes them all. ``on_board``: called with each command frame the board receives;
    ``camera_frames``, ``hold_seconds``: a camera that stalls after so many frames a
    connection (:class:`vision.mjpeg.MjpegCamera`). ``camera_sim``: the camera is
    ``camera-sim --table`` on the table's database instead (yielded as ``None``)."""
    shoe = ShoeSimulator("pty", cards=[], decks=6, shuffle=True, linger=10**6)
    board = BoardSimulator("pty", seats=6, on_command=on_board)
    shoe.start()
    board.start()
    db = work / "t.db"
    closing = ExitStack()
    if camera_sim:
        camera, url = None, closing.enter_context(table_camera(db))
    else:
        camera = MjpegCamera(first, fps=25, frames=camera_frames, hold_seconds=hold_seconds)
        url = camera.url
        closing.callback(camera.close)
    toml = work / "t.toml"
    toml.write_text(f'[devices]\nshoe = "{shoe.url}"\nboard = "{board.url}"\n'
                    f'[camera]\ncalibration = "aruco"\nsource = "{url}"\n'
                    f"settle_ms = {settle_ms}\n")
    opts = LiveOptions(db=str(db), port=0, poll_s=poll_s)
    table = LiveTable(load_config(toml), opts, say=lambda line: None)
    runner = threading.Thread(target=table.run, daemon=True)
    try:
        table.start()
        runner.start()
        yield table, shoe, board, camera
    finally:
        opts.stop.set()
        if runner.is_alive():
            runner.join(5)
        table.close()
        closing.close()
        shoe.close()
        board.close()


@contextmanager
def table_camera(db: Path) -> Iterator[str]:
    """``monster-match camera-sim --table DB`` running (the database made first, as the
    camera watches it from the start): yields its URL, then stops it."""
    Store(db).close()
    proc = subprocess.Popen([sys.executable, "-m", "controller", "camera-sim", "--table",
                             str(db), "--fps", "25"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        yield proc.stdout.readline().split(": ", 1)[1].strip()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def run(rounds: int, settle_ms: int, camera_sim: bool = False) -> dict[str, list[float]]:
    lights: dict[int, float] = {}
    current = [0]

    def on_board(frame) -> None:  # noqa: ANN001
        if frame.type == "LIGHT" and frame.fields[0] == "1" and frame.fields[1] == "ON" \
                and frame.fields[2] != "WAGER":
            lights.setdefault(current[0], time.perf_counter())

    layouts = []
    for r in range(rounds):
        rank = RANKS[r % len(RANKS)]
        seat, up, hole = [f"{rank}H", f"{rank}C"], f"{rank}D", "Q" + "SHDC"[r % 4]
        layouts.append((seat, up, hole) + ((None, None) if camera_sim else (
            jpeg({"seat1": seat, "dealer": [up, "XX"]}, 2 * r),
            jpeg({"seat1": seat, "dealer": [up, hole]}, 2 * r + 1))))
    out: dict[str, list[float]] = {"deal check": [], "reveal check": [], "lights": [],
                                   "read": [], "on layout": [], "held": []}
    with tempfile.TemporaryDirectory() as d, live_rig(
            Path(d), jpeg({"seat4": ["KC", "4D"]}, 999), settle_ms, on_board=on_board,
            camera_sim=camera_sim) as (
                table, shoe, board, camera):
        svc, t = table.svc, table.svc.table
        svc.call(svc.auth.add_user, "d", Role.DEALER, "dealer-password")
        svc.call(svc.auth.add_user, "f", Role.FLOORPERSON, "floor-password")
        dealer = svc.call(lambda: svc.actor(svc.auth.login("d", "dealer-password")))
        floor = svc.call(lambda: svc.actor(svc.auth.login("f", "floor-password")))
        wait(lambda: svc.call(svc.store.get_meta, "burn_pending") == "1", "the SHUFFLE")
        board.main(1, True)
        for r, (seat, up, hole, dealt_jpeg, revealed_jpeg) in enumerate(layouts):
            current[0] = r
            svc.call(t.open_round, dealer)
            board.bet(1, False)
            board.bet(1, True)
            wait(lambda: (c := svc.call(t.current)) is not None and 1 in c.wagers,
                 "the wager")
            board.press("LOCKOUT")
            wait(lambda: svc.call(t.current).state is State.LOCKED, "the lock-out")
            svc.call(t.chip_count, 1, dealer)
            rid = svc.call(t.current).id
            if camera is not None:
                camera.show(dealt_jpeg)
            codes = ([] if r else ["9S"]) + [seat[0], up, seat[1]]  # (burn) seat, up, seat
            for code in codes:
                shoe.deliver("CARD", code, "1")
            wait(lambda: sum(1 for c in svc.call(t.current).cards if c["spot"] != "burn")
                 == 3, "the cards")
            time.sleep(0.3)  # the dealer reaches for the hole card
            shoe.deliver("CARD", hole, "1")
            hole_at = time.perf_counter()
            checked = wait(lambda rid=rid: len(svc.call(camera_reads, svc.store, rid)) == 1,
                           "the deal's check")
            if camera is not None:
                camera.show(revealed_jpeg)
            time.sleep(0.3)
            board.press("REVEAL")
            reveal_at = time.perf_counter()
            rechecked = wait(lambda rid=rid: len(svc.call(camera_reads, svc.store, rid)) == 2,
                             "the reveal's check")
            wait(lambda r=r: r in lights, "seat 1's light")
            out["deal check"].append(1000 * (checked - hole_at))
            out["reveal check"].append(1000 * (rechecked - reveal_at))
            out["lights"].append(1000 * (lights[r] - reveal_at))
            cards = svc.call(t.round, rid).cards
            out["read"].append(sum(1 for c in cards if c["camera_code"] == c["code"]))
            out["on layout"].append(sum(1 for c in cards if c["spot"] != "burn"))
            out["held"] += [h for (h,) in svc.call(lambda rid=rid: svc.store.db.execute(
                "SELECT payload FROM audit WHERE round_id = ? AND kind = 'held'", (rid,)
            ).fetchall())]
            for step in ("confirm_win", "validate_win"):
                who = dealer if step == "confirm_win" else floor
                if svc.call(t.round, rid).state is State.HELD:
                    svc.call(t.resolve, floor, "continue", "benchmark: checked")
                svc.call(getattr(t, step), 1, who)
            wait(lambda: svc.call(t.current) is None, "the round to close")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--settle-ms", type=int, default=400)
    ap.add_argument("--camera-sim", action="store_true",
                    help="the camera: camera-sim --table on the table's record")
    args = ap.parse_args(argv)
    out = run(args.rounds, args.settle_ms, args.camera_sim)
    camera = "camera-sim --table" if args.camera_sim else "camera"
    print(f"live table, {args.rounds} rounds, settle {args.settle_ms} ms, {camera} at 25 fps")
    for key in ("deal check", "reveal check", "lights"):
        print(summary(key, out[key]))
    print(f"cards read by code: {sum(out['read'])} of {sum(out['on layout'])} on the layout")
    print(f"holds: {len(out['held'])}" + "".join(f"\n  {h}" for h in out["held"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
