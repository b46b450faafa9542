"""No resend timeouts on a clean line when both directions are busy at once.

The board simulator presses REVEAL and the controller's BoardClient answers with a LIGHT from
inside its on_event callback (the reader thread), so the LIGHT goes out right after the ACK of
the REVEAL while the simulator is still waiting for its own ACK and sending heartbeats. On a
noise-free pty every frame must be acknowledged first time: an ACK that arrives before the
sender recorded the frame's SEQ must still be matched (it used to be ignored, costing a 250 ms
resend). Asserts on counters only, never on timings.
"""

from __future__ import annotations

import threading

from controller.devices.board import BoardClient, Button
from controller.devices.sim import BoardSimulator

EXCHANGES = 400


def test_request_reply_from_callback_never_needs_a_resend():
    # Frequent heartbeats both ways, so frames and ACKs cross on the wire as often as possible.
    sim = BoardSimulator("pty", seats=7, heartbeat_interval=0.01)
    replies: list[int] = []
    lock = threading.Lock()
    holder: dict[str, BoardClient] = {}

    def on_event(event) -> None:  # noqa: ANN001 - reader thread of the controller's link
        if isinstance(event, Button) and event.name == "REVEAL":
            with lock:
                replies.append(event.seq)
                n = len(replies)
            holder["board"].light(1, "ON", f"N{n}")

    board = BoardClient(sim.url, on_event=on_event, heartbeat_interval=0.01, rx_timeout=None)
    holder["board"] = board
    try:
        # The controller opens the port first: pyserial flushes its input on open, which would
        # swallow a HELLO written earlier and force one (legitimate) resend.
        board.start(require_open=True)
        sim.start()
        assert sim.wait_hello(5.0)
        for i in range(EXCHANGES):
            assert sim.press("REVEAL"), f"REVEAL {i} not acknowledged"
            label = f"N{i + 1}"
            got = sim.wait_for_command(
                lambda f, label=label: f.type == "LIGHT" and f.fields[2] == label, timeout=10.0
            )
            assert got is not None, f"LIGHT {i} never arrived"
        assert board.link.wait_idle(10.0)
        assert sim.link.wait_idle(10.0)

        cs, ss = board.link.stats(), sim.link.stats()
        assert len(replies) == EXCHANGES
        lights = [f.fields[2] for f in sim.commands if f.type == "LIGHT"]
        assert lights == [f"N{i + 1}" for i in range(EXCHANGES)]  # each once, in order
        # Every frame acknowledged the first time, in both directions.
        assert cs.resends == 0, cs
        assert ss.resends == 0, ss
        assert cs.duplicates == 0 and ss.duplicates == 0, (cs, ss)
        assert cs.send_failures == 0 and ss.send_failures == 0
        assert cs.frame_errors == 0 and ss.frame_errors == 0
        assert cs.frames_sent >= EXCHANGES and ss.frames_sent >= EXCHANGES + 1
        # Heartbeats go on every 10 ms, so one frame may be on the wire when the counters are
        # read; never more, and never an ACK counted before its frame (counted before it is
        # written).
        assert cs.frames_sent - 1 <= cs.acks_received <= cs.frames_sent, cs
        assert ss.frames_sent - 1 <= ss.acks_received <= ss.frames_sent, ss
        assert board.protocol_errors == 0
    finally:
        board.close()
        sim.close()

