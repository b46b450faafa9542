"""``monster-match shoe-listen``: connect to a card-reading shoe and print its events."""

from __future__ import annotations

import argparse
import json
import logging
import queue
import sys
import time

from controller.cli import CommandError
from controller.devices.link import LinkError, LinkStatus
from controller.devices.shoe import CardDrawn, ShoeClient, ShoeError, ShoeEvent, ShoeHello, Shuffle


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "shoe-listen",
        help="connect to a card-reading shoe and print each event it reports",
        description=(
            "Connect to a card-reading shoe as the controller would (acknowledging every frame"
            " per the table serial protocol) and print one line per accepted event: HELLO,"
            " SHUFFLE, CARD, ERR (heartbeats are not printed). Ends when the device has been"
            " gone (port closed, stream ended) for --give-up seconds. Link changes go to stderr."
        ),
    )
    p.add_argument(
        "--port",
        required=True,
        metavar="URL",
        help="pyserial URL: /dev/ttyUSB0, /dev/pts/N, socket://host:port, loop://",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument(
        "--give-up",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="exit once the port has been lost and not reopened for this long (0: never;"
        " default 5)",
    )
    p.add_argument(
        "--duration",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="stop listening after this long (0: no limit)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log link details to stderr")
    p.set_defaults(func=run)


def event_record(event: ShoeEvent) -> dict[str, object]:
    """The JSON object printed for one shoe event."""
    if isinstance(event, CardDrawn):
        return {"seq": event.seq, "type": "CARD", "card": event.card.code, "millis": event.millis}
    if isinstance(event, Shuffle):
        return {"seq": event.seq, "type": "SHUFFLE", "decks": event.decks}
    if isinstance(event, ShoeHello):
        return {
            "seq": event.seq,
            "type": "HELLO",
            "model": event.model,
            "firmware": event.firmware,
            "serial": event.serial,
        }
    return {"seq": event.seq, "type": "ERR", "code": event.code, "text": event.text}


def event_line(event: ShoeEvent) -> str:
    r = event_record(event)
    rest = " ".join(str(v) for k, v in r.items() if k not in ("seq", "type"))
    note = ""
    if isinstance(event, ShoeError) and event.holds_round:
        note = " (round held)"
    elif isinstance(event, CardDrawn) and event.burn:
        note = " (burn card)"
    return f"{event.seq:04d} {r['type']} {rest}{note}"


def run(args: argparse.Namespace) -> int:
    if args.give_up < 0 or args.duration < 0:
        raise CommandError("--give-up and --duration must not be negative")
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        format="shoe-listen: %(name)s: %(message)s",
    )
    shoe = ShoeClient(args.port, reconnect_interval=0.2)
    try:
        shoe.start(require_open=True)
    except LinkError as exc:
        raise CommandError(str(exc)) from None
    start = time.monotonic()
    gone_since: float | None = None
    try:
        while True:
            try:
                event = shoe.events.get(timeout=0.05)
            except queue.Empty:
                event = None
            now = time.monotonic()
            if isinstance(event, LinkStatus):
                state = "online" if event.online else "offline"
                print(f"shoe {state}: {event.reason}", file=sys.stderr, flush=True)
            elif event is not None:
                text = json.dumps(event_record(event)) if args.json else event_line(event)
                print(text, flush=True)
                continue  # drain the queue before deciding to stop
            if shoe.link.port_open:
                gone_since = None
            elif gone_since is None:
                gone_since = now
            if args.give_up and gone_since is not None and now - gone_since >= args.give_up:
                break
            if args.duration and now - start >= args.duration:
                break
    finally:
        shoe.close()
        st = shoe.link.stats()
        print(
            f"shoe-listen: {st.frames_accepted} frames accepted, {st.duplicates} duplicates,"
            f" {st.frame_errors} bad frames, {st.noise_bytes} noise bytes,"
            f" {shoe.protocol_errors} protocol errors",
            file=sys.stderr,
            flush=True,
        )
    return 0
