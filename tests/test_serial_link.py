"""The link layer and the shoe client over real pseudo-terminals and TCP sockets."""

from __future__ import annotations

import queue
import random
import threading
import time

import pytest
from serial_support import RawPeer, drain

from controller.cards import ALL_CARDS, parse_cards
from controller.devices.board import BoardClient
from controller.devices.frames import crc16, encode_frame, next_seq
from controller.devices.link import FaultConfig, LinkStatus
from controller.devices.shoe import CardDrawn, ShoeClient, ShoeError, ShoeHello, Shuffle
from controller.devices.sim import ShoeSimulator, Silence


@pytest.fixture
def peer():
    p = RawPeer()
    yield p
    p.close()


def _client(url: str, **kw) -> ShoeClient:
    shoe = ShoeClient(url, **kw)
    shoe.start(require_open=True)
    return shoe


def _cards(events):
    return [e for e in events if isinstance(e, CardDrawn)]


def test_ten_thousand_frames_over_a_pty_with_corruption_and_noise(peer):
    rng = random.Random(2024)
    shoe = _client(peer.url)
    try:
        chunks: list[bytes] = []
        expected: list[tuple[int, str, int]] = []
        acked: list[int] = []
        seq = 9500  # wraps 9999 -> 0000 on the way
        for i in range(10_000):
            card = rng.choice(ALL_CARDS).code
            raw = encode_frame(seq, "CARD", card, str(i))
            if rng.random() < 0.05:
                b = bytearray(raw)
                j = rng.randrange(len(b))
                b[j] = (b[j] + rng.randrange(1, 256)) % 256
                chunks.append(bytes(b))
            else:
                chunks.append(raw)
                expected.append((seq, card, i))
                acked.append(seq)
                if rng.random() < 0.01:  # the same frame twice: acknowledged twice, acted on once
                    chunks.append(raw)
                    acked.append(seq)
            if rng.random() < 0.5:
                chunks.append(rng.randbytes(rng.randrange(1, 30)))
            seq = next_seq(seq)
        data = b"".join(chunks)
        t0 = time.monotonic()
        for k in range(0, len(data), 4096):
            peer.write(data[k : k + 4096])
        events = drain(shoe.events, 30.0, lambda ev: len(_cards(ev)) >= len(expected))
        elapsed = time.monotonic() - t0
        got = [(e.seq, e.card.code, e.millis) for e in _cards(events)]
        assert got == expected  # exactly the valid frames, once each, in order
        assert 9_400 < len(expected) < 9_600
        peer.wait_for(lambda fs: sum(f.type == "ACK" for f in fs) >= len(acked), timeout=10)
        assert [int(f.fields[0]) for f in peer.received("ACK")] == acked
        time.sleep(0.1)
        assert shoe.events.empty() or not _cards(drain(shoe.events, 0.2, lambda ev: False))
        st = shoe.link.stats()
        assert st.frames_accepted == len(expected)
        assert st.duplicates == len(acked) - len(expected)
        assert st.frame_errors >= 10_000 - len(expected)
        assert shoe.protocol_errors == 0
        assert elapsed < 30
    finally:
        shoe.close()


def test_fuzz_random_bytes_never_crash_never_yield_an_event(peer):
    shoe = _client(peer.url)
    try:
        rng = random.Random(77)
        for _ in range(50):
            peer.write(rng.randbytes(4096))
        time.sleep(0.5)
        assert shoe.events.empty()
        st = shoe.link.stats()
        assert st.bytes_in >= 50 * 4096 - 4096
        assert st.frames_in == 0 and st.callback_errors == 0
        assert all(t.is_alive() for t in shoe.link._threads)
        # the reader is still fine: a valid frame after the garbage gets through
        peer.send("CARD", "AS", "1", seq=321)
        events = drain(shoe.events, 3.0, lambda ev: bool(_cards(ev)))
        assert [(e.seq, e.card.code) for e in _cards(events)] == [(321, "AS")]
    finally:
        shoe.close()


def test_nak_on_bad_crc_with_readable_seq_and_silence_when_unreadable(peer):
    shoe = _client(peer.url)
    try:
        good = encode_frame(12, "CARD", "QH", "5")
        bad = good[:-6] + b"%04X" % (crc16(b"0012|CARD|QH|5") ^ 0x0101) + b"\r\n"
        peer.write(bad)
        peer.wait_for(lambda fs: any(f.type == "NAK" for f in fs), timeout=3)
        assert [f.fields for f in peer.received("NAK")] == [("0012",)]
        peer.write(b"\x02??|CARD|QH|5\x03ABCD\r\n")  # SEQ unreadable: no NAK
        peer.write(good)  # the resend is accepted
        events = drain(shoe.events, 3.0, lambda ev: bool(_cards(ev)))
        assert [(e.seq, e.card.code) for e in _cards(events)] == [(12, "QH")]
        peer.wait_for(lambda fs: any(f.type == "ACK" for f in fs), timeout=3)
        assert len(peer.received("NAK")) == 1
        assert [f.fields for f in peer.received("ACK")] == [("0012",)]
    finally:
        shoe.close()


def test_duplicate_seq_is_acked_again_but_acted_on_once(peer):
    shoe = _client(peer.url)
    try:
        peer.send("CARD", "7D", "100", seq=5)
        peer.send("CARD", "7D", "100", seq=5)
        peer.send("CARD", "8D", "200", seq=6)
        events = drain(shoe.events, 3.0, lambda ev: len(_cards(ev)) >= 2)
        peer.wait_for(lambda fs: sum(f.type == "ACK" for f in fs) >= 3)
        assert [(e.seq, e.card.code) for e in _cards(events)] == [(5, "7D"), (6, "8D")]
        assert [f.fields[0] for f in peer.received("ACK")] == ["0005", "0005", "0006"]
        assert shoe.link.stats().duplicates == 1
        time.sleep(0.2)
        assert not _cards(drain(shoe.events, 0.1, lambda ev: False))
    finally:
        shoe.close()


def test_malformed_card_code_is_a_protocol_error_not_an_event(peer):
    shoe = _client(peer.url)
    try:
        peer.send("CARD", "1H", "100")
        peer.send("CARD", "qh", "100")
        peer.send("CARD", "QH", "-5")
        peer.send("ERR", "FIRE", "smoke")
        peer.send("WHAT", "x")
        peer.send("ERR", "JAM", "card jam")
        events = drain(shoe.events, 3.0, lambda ev: any(isinstance(e, ShoeError) for e in ev))
        errs = [e for e in events if isinstance(e, ShoeError)]
        assert [(e.code, e.holds_round) for e in errs] == [("JAM", True)]
        assert not _cards(events)
        assert shoe.protocol_errors == 5
        assert len(peer.wait_for(lambda fs: len(fs) >= 6)) == 6  # all acknowledged
    finally:
        shoe.close()


def test_resend_after_250ms_five_times_then_link_down_then_recovery(peer):
    statuses: queue.Queue = queue.Queue()
    board = BoardClient(peer.url, on_event=statuses.put, rx_timeout=None)
    board.start(require_open=True)
    try:
        assert drain(statuses, 2.0, lambda ev: bool(ev)) == [LinkStatus(True, "port opened")]
        d = board.lock(True)
        down = drain(statuses, 4.0, lambda ev: bool(ev))
        locks = [(t, f) for t, f in peer.frames if f.type == "LOCK"][:6]
        assert len(locks) == 6  # first send + 5 resends, same SEQ
        assert len({f.seq for _, f in locks}) == 1
        gaps = [b[0] - a[0] for a, b in zip(locks, locks[1:], strict=False)]
        assert all(0.2 <= g <= 0.6 for g in gaps), gaps
        assert len(down) == 1 and not down[0].online and "no acknowledgement" in down[0].reason
        assert not d.done  # not dropped: still resent, now every second
        peer.wait_for(lambda fs: sum(f.type == "LOCK" for f in fs) >= 7, timeout=3)
        peer.send("ACK", f"{locks[0][1].seq:04d}")
        assert d.wait(2.0)
        up = drain(statuses, 2.0, lambda ev: bool(ev))
        assert up and up[0].online
    finally:
        board.close()


def test_dropped_acks_and_all_faults_cards_arrive_once_in_order():
    cards = [ALL_CARDS[i % 52] for i in range(40)]
    faults = FaultConfig(noise=0.2, corrupt=0.1, duplicate=0.1, drop_acks=0.2, seed=9)
    sim = ShoeSimulator("pty", cards=cards, faults=faults)
    sim.start()
    shoe = _client(sim.url)
    try:
        assert sim.wait(30.0)
        events = drain(shoe.events, 5.0, lambda ev: len(_cards(ev)) >= len(cards))
        assert [e.card for e in _cards(events)] == cards
        assert isinstance(events[0], (LinkStatus, ShoeHello))
        assert sum(isinstance(e, ShoeHello) for e in events) == 1
        assert sum(isinstance(e, Shuffle) for e in events) == 1
        sim_stats, st = sim.link.stats(), shoe.link.stats()
        assert sim_stats.resends > 0 and st.duplicates > 0 and st.frame_errors > 0
        assert st.naks_sent > 0
    finally:
        shoe.close()
        sim.close()


def test_silent_device_offline_within_3s_and_back_when_it_speaks():
    sim = ShoeSimulator("pty", cards=[], silence=Silence(after=1.2, duration=3.3), linger=30)
    sim.start()
    seen: list[tuple[float, object]] = []
    cond = threading.Condition()

    def on_event(e):
        with cond:
            seen.append((time.monotonic(), e))
            cond.notify_all()

    shoe = _client(sim.url, on_event=on_event)
    try:
        silent_from = sim._t0 + 1.2

        def statuses():
            return [(t, e) for t, e in seen if isinstance(e, LinkStatus)]

        with cond:
            assert cond.wait_for(lambda: len(statuses()) >= 3, timeout=8)
        (t_up, up), (t_down, down), (t_back, back) = statuses()[:3]
        assert up.online and not down.online and back.online
        assert "nothing heard" in down.reason
        assert 0.9 <= t_down - silent_from <= 3.0, t_down - silent_from
        assert t_back >= silent_from + 3.2
        assert t_back - (silent_from + 3.3) < 1.0
    finally:
        shoe.close()
        sim.close()


def test_pty_device_disappears_reported_at_once():
    sim = ShoeSimulator("pty", cards=[], linger=30)
    sim.start()
    shoe = _client(sim.url, reconnect_interval=0.1)
    try:
        first = drain(shoe.events, 3.0, lambda ev: any(isinstance(e, ShoeHello) for e in ev))
        assert any(isinstance(e, ShoeHello) for e in first)
        assert shoe.online
        t0 = time.monotonic()
        sim.close()  # master closed: the unplugged adapter
        ev = drain(shoe.events, 3.0, lambda ev: any(isinstance(e, LinkStatus) for e in ev))
        assert [e.online for e in ev if isinstance(e, LinkStatus)] == [False]
        assert time.monotonic() - t0 < 1.0
        assert not shoe.link.port_open
    finally:
        shoe.close()


def test_reconnect_after_the_device_disappears_and_comes_back():
    sim = ShoeSimulator("tcp", cards=[], shuffle=False, linger=30, hello=("S", "1", "SN-A"))
    sim.start()
    port = sim.endpoint._tcp.port
    shoe = _client(sim.url, reconnect_interval=0.1)
    sim2 = None
    try:
        ev = drain(shoe.events, 3.0, lambda ev: any(isinstance(e, ShoeHello) for e in ev))
        assert [e.serial for e in ev if isinstance(e, ShoeHello)] == ["SN-A"]
        sim.close()
        ev = drain(shoe.events, 3.0, lambda ev: any(isinstance(e, LinkStatus) for e in ev))
        assert [e.online for e in ev if isinstance(e, LinkStatus)] == [False]
        time.sleep(0.5)  # gone for a while: reopen attempts fail meanwhile
        assert not shoe.online
        sim2 = ShoeSimulator(
            "tcp", cards=parse_cards(["9S"]), tcp_port=port, linger=30, hello=("S", "1", "SN-B")
        )
        sim2.start()
        ev = drain(shoe.events, 5.0, lambda ev: bool(_cards(ev)))
        hellos = [e.serial for e in ev if isinstance(e, ShoeHello)]
        assert hellos == ["SN-B"]  # HELLO SEQ 0001 again: a new session, not a duplicate
        assert [e.card.code for e in _cards(ev)] == ["9S"]
        assert shoe.online
        assert shoe.link.stats().port_opens >= 2
    finally:
        shoe.close()
        sim.close()
        if sim2 is not None:
            sim2.close()


def test_open_failure_is_a_clear_error():
    from controller.devices.link import LinkError

    shoe = ShoeClient("/dev/does-not-exist-42")
    with pytest.raises(LinkError, match="cannot open /dev/does-not-exist-42"):
        shoe.start(require_open=True)
    shoe.close()


def test_loop_url_is_accepted():
    got: queue.Queue = queue.Queue()
    shoe = ShoeClient("loop://", on_event=got.put)
    shoe.start(require_open=True)
    try:
        # loop:// echoes what the controller writes: the LOCK frame the board would get comes
        # back as a frame of an unknown type (a protocol error), never an event.
        shoe.link.send("LOCK", "ON")
        time.sleep(0.5)
        assert shoe.protocol_errors >= 1
        events = drain(got, 0.2, lambda ev: False)
        assert all(isinstance(e, LinkStatus) for e in events)
    finally:
        shoe.close()


def test_lock_goes_ahead_of_queued_commands(peer):
    board = BoardClient(peer.url, rx_timeout=None)
    board.start(require_open=True)
    try:
        for seat in (1, 2, 3):
            board.light(seat, "ON", "WAGER")
        peer.wait_for(lambda fs: any(f.type == "LIGHT" for f in fs), timeout=3)
        lock = board.lock(True)
        first = peer.received("LIGHT")[0]
        assert first.fields[0] == "1"
        peer.send("ACK", f"{first.seq:04d}")
        peer.wait_for(lambda fs: any(f.type == "LOCK" for f in fs), timeout=3)
        order = [f.type + (f.fields[0] if f.type == "LIGHT" else "") for f in peer.received()]
        assert order[: order.index("LOCK") + 1] == ["LIGHT1"] * order.count("LIGHT1") + ["LOCK"]
        peer.send("ACK", f"{peer.received('LOCK')[0].seq:04d}")
        assert lock.wait(2.0)
    finally:
        board.close()
