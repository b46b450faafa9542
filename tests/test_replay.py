import json
import subprocess
import sys

from controller.replay import replay_round


def test_replay_matches_record_and_finds_a_changed_payout(harness):
    h, t = harness, harness.table
    h.play_to_deal(wagers=(1, 3), mains=(1, 2, 3))
    # seat1 7H, seat2 2C, seat3 KD, up 7D, seat1 7S, seat2 3C, seat3 KD, hole KD, hit 5S
    h.deal("7H", "2C", "KD", "7D", "7S", "3C", "KD", "KD", "5S")
    t.reveal(h.dealer)
    for seat in (1, 3):
        t.confirm_win(seat, h.dealer)
        t.validate_win(seat, h.floor)
    rep = replay_round(h.store, h.cfg, 1)
    assert rep.problems == []
    assert rep.hands[1]["hand"] == "three_of_a_kind" and rep.hands[3]["hand"] == (
        "three_of_a_kind_same_color")
    assert [c["spot"] for c in rep.cards][-1] == "extra"
    assert any(e["kind"] == "dynamic_pays_drawn" for e in rep.timeline)
    assert rep.camera_reader is None  # no camera at this table
    h.store.db.execute("UPDATE results SET amount = '999900' WHERE seat = 1")
    rep = replay_round(h.store, h.cfg, 1)
    assert any("seat 1: record says" in p for p in rep.problems)
    h.store.close()
    res = subprocess.run([sys.executable, "-m", "controller", "replay", "--db", str(h.path),
                          "--round", "1", "--json"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and not json.loads(res.stdout)["consistent"]
