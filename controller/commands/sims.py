"""``monster-match shoe-sim`` and ``monster-match board-sim``: device simulators.

Both speak the table serial protocol on a pseudo-terminal (default; prints the ``/dev/pts/N``
path to connect to) or on a TCP port (``--tcp PORT``; prints ``socket://HOST:PORT``). The first
line on stdout is ``connect: URL``.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time

from controller.cards import CardCodeError, parse_cards
from controller.cli import CommandError
from controller.devices.frames import Frame
from controller.devices.link import FaultConfig
from controller.devices.shoe import ERROR_CODES
from controller.devices.sim import BoardSimulator, Endpoint, ShoeSimulator, Silence


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: a rate is between 0 and 1")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds must not be negative")
    return value


def _add_common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("where to listen")
    g.add_argument(
        "--tcp",
        type=int,
        metavar="PORT",
        help="listen on this TCP port (0: any free port) instead of a pseudo-terminal",
    )
    g.add_argument("--host", default="127.0.0.1", help="TCP address to listen on")
    f = p.add_argument_group("fault injection")
    f.add_argument("--noise", type=_rate, default=0.0, metavar="RATE",
                   help="probability of random bytes before a frame")
    f.add_argument("--corrupt", type=_rate, default=0.0, metavar="RATE",
                   help="probability that one byte of a frame is changed (bad CRC)")
    f.add_argument("--duplicate", type=_rate, default=0.0, metavar="RATE",
                   help="probability that a frame is written twice")
    f.add_argument("--drop-acks", type=_rate, default=0.0, metavar="RATE",
                   help="probability that a received ACK is ignored (forces resends)")
    f.add_argument("--fault-seed", type=int, default=None, metavar="S",
                   help="seed for the fault injection")
    f.add_argument("--silent-after", type=_seconds, default=None, metavar="SECONDS",
                   help="go silent (send nothing, answer nothing) this long after start")
    f.add_argument("--silent-for", type=_seconds, default=None, metavar="SECONDS",
                   help="speak again after this long (default: stay silent)")


def _faults(args: argparse.Namespace) -> tuple[FaultConfig, Silence | None]:
    faults = FaultConfig(args.noise, args.corrupt, args.duplicate, args.drop_acks, args.fault_seed)
    if args.silent_for is not None and args.silent_after is None:
        raise CommandError("--silent-for needs --silent-after")
    silence = Silence(args.silent_after, args.silent_for) if args.silent_after is not None else None
    return faults, silence


def _endpoint(args: argparse.Namespace) -> Endpoint:
    try:
        if args.tcp is not None:
            return Endpoint("tcp", args.host, args.tcp)
        return Endpoint("pty")
    except OSError as exc:
        raise CommandError(f"cannot listen: {exc}") from None


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "shoe-sim",
        help="simulate a card-reading shoe on a pseudo-terminal or TCP port",
        description=(
            "Simulate a card-reading shoe: HELLO (repeated until a controller acknowledges it),"
            " SHUFFLE, then the cards, heartbeats every second; exits once every card is"
            " acknowledged (after --linger). Prints 'connect: URL' first."
        ),
    )
    _add_common(p)
    d = p.add_argument_group("what to deal")
    d.add_argument("--cards", metavar="CODES", help="scripted cards, e.g. 7D,KH,AS")
    d.add_argument("--decks", type=int, default=6, help="decks in the shoe (SHUFFLE; default 6)")
    d.add_argument("--seed", type=int, default=None, help="seed of the random shoe")
    d.add_argument("--count", type=int, default=None, help="deal at most this many cards")
    d.add_argument("--interval", type=_seconds, default=0.0, metavar="SECONDS",
                   help="pause between cards")
    d.add_argument("--error", action="append", default=[], metavar="INDEX:CODE[:TEXT]",
                   help="send ERR CODE (JAM, MISREAD, DOOR, LOW) before card INDEX (0-based)")
    d.add_argument("--no-shuffle", action="store_true", help="do not send SHUFFLE")
    d.add_argument("--linger", type=_seconds, default=0.2, metavar="SECONDS",
                   help="keep the device up this long after the last card (default 0.2)")
    d.add_argument("--serial", default="SN0001", help="serial number in HELLO")
    p.set_defaults(func=run_shoe)

    b = subparsers.add_parser(
        "board-sim",
        help="simulate the table I/O board on a pseudo-terminal or TCP port",
        description=(
            "Simulate the table I/O board: HELLO, then sensor and button events from --script"
            " and from stdin (one step a line: 'BET 3 ON', 'MAIN 3 OFF', 'BUTTON LOCKOUT',"
            " 'WAIT 0.5'). Prints 'connect: URL' first, then each LOCK/LIGHT/SIGN command"
            " received as a JSON line. Runs until stdin ends and --duration passed, or Ctrl-C."
        ),
    )
    _add_common(b)
    b.add_argument("--seats", type=int, default=7, help="betting positions (default 7)")
    b.add_argument("--script", default="", metavar="STEPS",
                   help="steps separated by ';', e.g. 'MAIN 1 ON; BET 1 ON; BUTTON LOCKOUT'")
    b.add_argument("--stdin", action="store_true", help="read more steps from stdin")
    b.add_argument("--duration", type=_seconds, default=None, metavar="SECONDS",
                   help="exit this long after start (default: after the script/stdin, or never"
                   " when neither is given)")
    b.set_defaults(func=run_board)


def _parse_errors(specs: list[str]) -> dict[int, tuple[str, str]]:
    out: dict[int, tuple[str, str]] = {}
    for spec in specs:
        parts = spec.split(":", 2)
        if len(parts) < 2 or not parts[0].isdigit() or parts[1] not in ERROR_CODES:
            raise CommandError(
                f"bad --error {spec!r}: expected INDEX:CODE[:TEXT] with CODE one of"
                f" {', '.join(sorted(ERROR_CODES))}"
            )
        text = parts[2] if len(parts) == 3 else parts[1].lower()
        if "|" in text or not text.isascii() or not text.isprintable():
            raise CommandError(f"bad --error text {text!r}: printable ASCII without '|'")
        out[int(parts[0])] = (parts[1], text)
    return out


def run_shoe(args: argparse.Namespace) -> int:
    faults, silence = _faults(args)
    try:
        cards = parse_cards([args.cards]) if args.cards else None
    except CardCodeError as exc:
        raise CommandError(str(exc)) from None
    if not 1 <= args.decks <= 16:
        raise CommandError(f"--decks must be 1..16, not {args.decks}")
    if args.count is not None and args.count < 0:
        raise CommandError("--count must not be negative")
    errors = _parse_errors(args.error)
    sim = ShoeSimulator(
        _endpoint(args),
        cards=cards,
        decks=args.decks,
        seed=args.seed,
        count=args.count,
        card_interval=args.interval,
        errors=errors,
        shuffle=not args.no_shuffle,
        hello=("SIM-SHOE", "1.0", args.serial),
        faults=faults,
        silence=silence,
        linger=args.linger,
    )
    print(f"connect: {sim.url}", flush=True)
    sim.start()
    try:
        while not sim.wait(0.2):
            pass
    finally:
        sim.close()
        st = sim.link.stats()
        print(
            f"shoe-sim: {len(sim.dealt)} cards dealt, {st.frames_sent} frames sent,"
            f" {st.resends} resends, {st.naks_received} NAKs received",
            file=sys.stderr,
            flush=True,
        )
    return 0


_SENSORS = ("BET", "MAIN")


def parse_step(text: str, seats: int) -> tuple[str, tuple[str, ...]]:
    """One board-sim step: ('BET'|'MAIN', (seat, state)), ('BUTTON', (name,)), ('WAIT', (s,))."""
    words = text.split()
    if not words:
        raise ValueError("empty step")
    kind = words[0].upper()
    rest = [w.upper() for w in words[1:]]
    if kind in _SENSORS and len(rest) == 2 and rest[0].isdigit() and rest[1] in ("ON", "OFF"):
        if not 1 <= int(rest[0]) <= seats:
            raise ValueError(f"seat {rest[0]} is not 1..{seats}")
        return kind, (str(int(rest[0])), rest[1])
    if kind == "BUTTON" and len(rest) == 1 and rest[0] in ("LOCKOUT", "REVEAL", "CALL"):
        return kind, (rest[0],)
    if kind == "WAIT" and len(rest) == 1:
        try:
            seconds = float(rest[0])
        except ValueError:
            seconds = -1.0
        if seconds >= 0:
            return kind, (rest[0],)
    raise ValueError(
        f"bad step {text.strip()!r}: expected 'BET SEAT ON|OFF', 'MAIN SEAT ON|OFF',"
        " 'BUTTON LOCKOUT|REVEAL|CALL' or 'WAIT SECONDS'"
    )


def _do_step(sim: BoardSimulator, step: tuple[str, tuple[str, ...]]) -> None:
    kind, args = step
    if kind == "WAIT":
        time.sleep(float(args[0]))
    else:
        sim.deliver(kind, *args)


def run_board(args: argparse.Namespace) -> int:
    faults, silence = _faults(args)
    if not 1 <= args.seats <= 99:
        raise CommandError(f"--seats must be 1..99, not {args.seats}")
    try:
        steps = [parse_step(s, args.seats) for s in args.script.split(";") if s.strip()]
    except ValueError as exc:
        raise CommandError(str(exc)) from None

    lock = threading.Lock()

    def show(frame: Frame) -> None:
        if frame.type == "HB":
            return
        with lock:
            print(
                json.dumps({"seq": frame.seq, "type": frame.type, "fields": list(frame.fields)}),
                flush=True,
            )

    sim = BoardSimulator(
        _endpoint(args), seats=args.seats, faults=faults, silence=silence, on_command=show
    )
    print(f"connect: {sim.url}", flush=True)
    sim.start()
    start = time.monotonic()
    try:
        for step in steps:
            _do_step(sim, step)
        if args.stdin:
            for line in sys.stdin:
                if not line.strip():
                    continue
                try:
                    step = parse_step(line, args.seats)
                except ValueError as exc:
                    print(f"board-sim: {exc}", file=sys.stderr, flush=True)
                    continue
                _do_step(sim, step)
        scripted = bool(steps) or args.stdin
        while True:
            elapsed = time.monotonic() - start
            if args.duration is not None and elapsed >= args.duration:
                break
            if args.duration is None and scripted:
                sim.link.wait_idle(5.0)
                break
            time.sleep(0.05)
    finally:
        sim.close()
    return 0
