"""``monster-match demo``: the whole table on embedded defaults and simulated devices."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from pathlib import Path

from controller.cli import CommandError
from controller.config import ConfigError, load_config
from controller.rounds import IllegalEvent
from controller.storage import StorageError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo", help="run the whole table on simulated devices (the quick start)",
        description="Start the controller, a simulated shoe and table board on pseudo-terminals, "
                    "a simulated camera read by the vision model, SQLite and the web sign and "
                    "consoles; print their addresses and play rounds until stopped.")
    p.add_argument("--rounds", type=int, default=None, metavar="N",
                   help="stop after N completed rounds (default: until Ctrl-C)")
    p.add_argument("--db", default=None, metavar="FILE",
                   help="SQLite database (default: the configuration's, monster-match.db)")
    p.add_argument("--config", metavar="FILE", help="table configuration TOML")
    p.add_argument("--port", type=int, default=None, help="web port (default: configuration)")
    p.add_argument("--pace", type=float, default=0.3,
                   help="seconds between the dealer's steps (default 0.3; 0 = as fast as possible)")
    p.add_argument("--seed", type=int, default=None, help="seed of the simulated players/cards")
    p.add_argument("--no-camera", action="store_true", help="run without the simulated camera")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.demo import Demo, DemoOptions, TimeoutWaiting

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    db = args.db or cfg.db_path
    opts = DemoOptions(db=db, rounds=args.rounds, pace=max(0.0, args.pace), seed=args.seed,
                       host=cfg.web.host, port=cfg.web.port if args.port is None else args.port,
                       camera=not args.no_camera, frames_dir=Path(db).with_suffix(".frames"))
    signal.signal(signal.SIGTERM, lambda *_: opts.stop.set())
    try:
        demo = Demo(cfg, opts)
    except (StorageError, IllegalEvent, ValueError) as exc:  # ValueError: the camera's model
        raise CommandError(str(exc)) from None
    try:
        try:
            where = demo.start()
        except (OSError, RuntimeError) as exc:
            raise CommandError(f"could not start: {exc}") from None
        print("Monster Match demo table")
        for key in ("sign", "dealer", "floor", "surveillance"):
            print(f"  {key:<13} {where[key]}")
        print(f"  shoe          {where['shoe']}  (simulated, pseudo-terminal)")
        print(f"  board         {where['board']}  (simulated, pseudo-terminal)")
        print(f"  database      {where['db']}")
        for role, (name, password) in demo.credentials.items():
            print(f"  sign in as {role:<12} user {name}  password {password}")
        print("Playing" + (f" {args.rounds} rounds" if args.rounds else " until Ctrl-C") + "...")
        sys.stdout.flush()
        try:
            played = demo.run()
        except KeyboardInterrupt:
            played = None
        except TimeoutWaiting as exc:
            raise CommandError(f"stopped: {exc}") from None
    finally:
        demo.close()
    if played is not None:
        print(f"{played} rounds played; books: monster-match report --db {db}")
        if (line := demo.camera_summary()) is not None:
            print(line)
    return 0
