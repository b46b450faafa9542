"""``monster-match table --live``: the controller on its real devices, here a shoe and a
table board simulated on pseudo-terminals (the bytes of real ones) and an IP camera serving
MJPEG over HTTP; people's actions come from the test. A whole round: bets opened on the
board, lock-out, chip count, the shoe's cards, the camera's checks once the hole card is
dealt and once it is turned, both cross-checked and recorded with their frames."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from controller.auth import Role
from controller.books import camera_reads
from controller.cli import main
from controller.config import load_config
from controller.live import LiveOptions, LiveTable, LiveTableError
from controller.rounds import State
from controller.storage import Store
from tests.test_live_camera import layout_jpegs

DEALT = {"seat1": ["7H", "2C"], "dealer": ["JD", "XX"]}
REVEALED = {"seat1": ["7H", "2C"], "dealer": ["JD", "5S"]}


def wait(cond, what: str, timeout: float = 10.0) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def seat_one_locked_out(table: LiveTable, board) -> tuple:  # noqa: ANN001
    """A dealer signs in and opens a round at the console (the table opens the board's bets),
    seat 1 wagers on the board, the dealer locks out and counts the chip: returns the
    dealer and the round's id. (Through the service's lock, as the consoles do: the device
    threads share the store.)"""
    svc, t = table.svc, table.svc.table
    svc.call(svc.auth.add_user, "d", Role.DEALER, "dealer-password")
    dealer = svc.call(lambda: svc.actor(svc.auth.login("d", "dealer-password")))
    wait(lambda: svc.call(svc.store.get_meta, "burn_pending") == "1", "the shoe's SHUFFLE")
    svc.call(t.open_round, dealer)
    board.main(1, True)
    board.bet(1, True)
    wait(lambda: 1 in svc.call(t.current).wagers, "the wager")
    board.press("LOCKOUT")
    wait(lambda: svc.call(t.current).state is State.LOCKED, "the lock-out")
    svc.call(t.chip_count, 1, dealer)
    return dealer, svc.call(t.current).id


@pytest.fixture
def rig(tmp_path: Path):  # noqa: ANN201
    """The benchmark's live table (`benchmarks/live_table.py`: `live_rig`), its camera showing
    last round's cards."""
    from tests.conftest import load_benchmark

    with load_benchmark("live_table").live_rig(
            tmp_path, layout_jpegs({"seat4": ["KC", "4D"]}, 1), settle_ms=200,
            poll_s=0.05) as parts:
        yield parts


def test_a_live_round_is_checked_by_the_camera_twice(rig, tmp_path: Path) -> None:  # noqa: ANN001
    table, shoe, board, camera = rig
    svc, t = table.svc, table.svc.table
    dealer, rid = seat_one_locked_out(table, board)
    camera.show(layout_jpegs(DEALT, 2))  # the cards as they will lie once dealt
    for code in ("9S", "7H", "JD", "2C", "5S"):  # burn, seat 1, up, seat 1, hole
        shoe.deliver("CARD", code, "1000")
    wait(lambda: len(svc.call(camera_reads, svc.store, rid)) == 1, "the check of the deal")
    camera.show(layout_jpegs(REVEALED, 3))
    board.press("REVEAL")
    wait(lambda: len(svc.call(camera_reads, svc.store, rid)) == 2, "the check of the reveal")
    (dealt, first), (_, second) = svc.call(camera_reads, svc.store, rid)
    assert (first["hole_up"], second["hole_up"]) == (False, True)
    assert first["problems"] == [] and second["problems"] == []
    assert [f["name"] for f in first["frames"] + second["frames"]] == [
        f"round{rid:06d}-dealt.png", f"round{rid:06d}-revealed.png"]
    codes = {c["position"]: (c["code"], c["camera_code"]) for c in svc.call(t.round, rid).cards}
    # every card the camera read is the shoe's; the hole card is read at the reveal only
    assert all(code == camera_code for code, camera_code in codes.values() if camera_code)
    assert "3" not in first["camera"] and second["camera"].get("3") == "5S", (first, second)
    assert first["camera"].get("1") == "JD"  # the up card, at the deal
    assert svc.call(t.round, rid).effective_state is not State.HELD
    # the books, the chains and the kept frames check out
    assert main(["audit", "--db", table.opts.db, "--frames", str(table.frames_dir)]) == 0


def test_a_live_table_needs_its_devices_and_camera(tmp_path: Path) -> None:
    with pytest.raises(LiveTableError, match=r'\[devices\] shoe is "sim"'):
        LiveTable(load_config(), LiveOptions(db=str(tmp_path / "t.db")))
    (tmp_path / "t.toml").write_text(
        '[devices]\nshoe = "socket://127.0.0.1:9"\nboard = "socket://127.0.0.1:9"\n')
    table = LiveTable(load_config(tmp_path / "t.toml"), LiveOptions(db=str(tmp_path / "t.db")))
    try:
        with pytest.raises(LiveTableError, match="a device could not be opened"):
            table.start()
    finally:
        table.close()


def test_table_live_from_the_command_line_says_what_is_missing(tmp_path: Path,
                                                              capsys) -> None:  # noqa: ANN001
    assert main(["table", "--live", "--db", str(tmp_path / "t.db")]) == 2
    assert '[devices] shoe is "sim"' in capsys.readouterr().err
    assert main(["table", "--live", "--rounds", "3"]) == 2
    assert "--rounds is for --simulate" in capsys.readouterr().err
    assert main(["table", "--simulate", "--db", str(tmp_path / "t.db")]) == 2
    assert "--simulate needs --db FILE and --rounds N" in capsys.readouterr().err


def test_a_restarted_live_table_does_not_check_a_round_twice(tmp_path: Path,
                                                            dealt_service) -> None:  # noqa: ANN001
    """The checks a round's record already holds frames of are not made again after a
    restart (the round being dealt, its deal checked): the next check due is the reveal's."""
    svc, rid = dealt_service
    for code in ("JD", "2C", "5S"):  # up, seat 1, hole
        svc.call(svc.table.deal, code)
    svc.camera_check(rid, [], hole_up=False, frame_names=[f"round{rid:06d}-dealt.png"])
    (tmp_path / "t.toml").write_text(
        '[devices]\nshoe = "socket://127.0.0.1:9"\nboard = "socket://127.0.0.1:9"\n')
    table = LiveTable(load_config(tmp_path / "t.toml"), LiveOptions(db="unused"))
    table.svc = svc  # the restarted table's service on the same store
    table._resume()
    assert table._checked == {(rid, False)} and table._dealing == rid


def test_the_live_table_benchmark_times_a_round(capsys) -> None:  # noqa: ANN001
    from tests.conftest import load_benchmark

    assert load_benchmark("live_table").main(["--rounds", "1", "--settle-ms", "100"]) == 0
    out = capsys.readouterr().out
    for name in ("deal check", "reveal check", "lights"):
        assert f"{name}" in out and "(n=1)" in out
    assert "of 4 on the layout" in out


def test_a_live_table_on_simulators_alone(capsys) -> None:  # noqa: ANN001
    """The benchmark's rounds with ``--camera-sim``: the shoe and board on pseudo-terminals,
    the camera ``camera-sim --table`` on the table's own record, each a process or thread of
    its own. Two rounds are dealt, checked twice each by the camera and closed; every card
    the camera records by code is the card the shoe dealt (a wrong one would be a hold)."""
    import re

    from tests.conftest import load_benchmark

    assert load_benchmark("live_table").main(["--rounds", "2", "--camera-sim"]) == 0
    out = capsys.readouterr().out
    assert "camera-sim --table" in out and "(n=2)" in out
    read = re.search(r"cards read by code: (\d+) of 8 on the layout", out)
    assert read and int(read.group(1)) >= 4, out
    assert "holds: 0" in out, out


def test_a_stalled_camera_holds_up_no_round(tmp_path: Path) -> None:
    """The camera's connection stalls after its first frames: the deal's check waits for a
    frame (up to 10 s), on its own thread, while the round is revealed and the next one's
    bets are opened on the board at once; stopping the table ends the waiting check without
    recording it, and the reveal's check queued behind it is not made (a restart makes what
    is still due: the round's record has no frame of either)."""
    from tests.conftest import load_benchmark

    with load_benchmark("live_table").live_rig(
            tmp_path, layout_jpegs(DEALT, 2), settle_ms=0, poll_s=0.05, camera_frames=5,
            hold_seconds=30) as (table, shoe, board, camera):
        svc, t = table.svc, table.svc.table
        dealer, rid = seat_one_locked_out(table, board)
        time.sleep(0.5)  # the camera's five frames are gone by: it has stalled
        for code in ("9S", "7H", "JD", "2C", "5S"):  # no win: the round closes at the reveal
            shoe.deliver("CARD", code, "1000")
        wait(lambda: (rid, False) in table._checked, "the deal's check to fall due")
        board.press("REVEAL")
        wait(lambda: svc.call(t.current) is None, "the round to close", timeout=3)
        svc.call(t.open_round, dealer)
        board.bet(1, False)
        board.bet(1, True)
        wait(lambda: 1 in svc.call(t.current).wagers, "the next round's wager", timeout=3)
        assert svc.call(camera_reads, svc.store, rid) == []  # the deal's check still waits
    store = Store(tmp_path / "t.db")  # the table stopped: its record, read again
    assert camera_reads(store, rid) == []  # the waiting check ended unrecorded
    store.close()
