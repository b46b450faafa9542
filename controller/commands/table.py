"""``monster-match table``: run the table controller: ``--live`` on the table's real devices
and camera, ``--simulate`` with simulated everything."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys

from controller.cli import CommandError
from controller.config import ConfigError, load_config
from controller.rounds import IllegalEvent, Table
from controller.simulate import run_simulation
from controller.storage import StorageError, Store


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "table", help="run the table controller (live, or simulated)",
        description="Run the table controller. With --live, on the table's real devices: the "
                    "shoe and table board at the configuration's [devices] ports, the camera at "
                    "[camera] source (read once the hole card is dealt and once it is turned, "
                    "and cross-checked against the shoe), the web sign and consoles at [web], "
                    "until Ctrl-C; people play (dealer and floorperson accounts: monster-match "
                    "user add). With --simulate, simulated players, dealer, floorperson and "
                    "shoe play rounds until the store holds N completed rounds. Either way, "
                    "run again on the same file it resumes where it stopped.")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--live", action="store_true",
                      help="the table's real shoe, board and camera, played by people")
    mode.add_argument("--simulate", action="store_true",
                      help="simulated players, wagers and shoe")
    p.add_argument("--db", metavar="FILE",
                   help="SQLite database file (--live: default the configuration's)")
    p.add_argument("--rounds", type=int, metavar="N",
                   help="--simulate: stop once N rounds are completed in the store")
    p.add_argument("--port", type=int, default=None,
                   help="--live: web port (default: the configuration's)")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="seed of the simulated players and shoe (the Dynamic Pays draw always "
                        "uses the OS's cryptographic generator)")
    p.add_argument("--config", metavar="FILE", help="table configuration TOML")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.live:
        return run_live(args)
    if args.db is None or args.rounds is None:
        raise CommandError("--simulate needs --db FILE and --rounds N")
    if args.rounds < 0:
        raise CommandError("--rounds must be >= 0")
    try:
        cfg = load_config(args.config)
        store = Store(args.db)
        table = Table(store, cfg)
    except (ConfigError, StorageError, IllegalEvent) as exc:
        raise CommandError(str(exc)) from None
    bar = None
    if not args.quiet and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=args.rounds, unit="round", initial=table.rounds_completed())

    def progress(done: int) -> None:
        if bar is not None:
            bar.n = done
            bar.refresh()

    try:
        done = run_simulation(table, args.rounds, args.seed, progress)
    finally:
        if bar is not None:
            bar.close()
        store.close()
    print(f"{done} rounds completed in {args.db}")
    return 0


def run_live(args: argparse.Namespace) -> int:
    from controller.live import LiveOptions, LiveTable, LiveTableError

    if args.rounds is not None:
        raise CommandError("--rounds is for --simulate: a live table runs until Ctrl-C")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    opts = LiveOptions(db=args.db or cfg.db_path, port=args.port)
    signal.signal(signal.SIGTERM, lambda *_: opts.stop.set())
    try:
        table = LiveTable(cfg, opts)
    except (LiveTableError, ValueError) as exc:  # ValueError: the camera's model or burst
        raise CommandError(str(exc)) from None
    try:
        try:
            where = table.start()
        except (LiveTableError, StorageError, IllegalEvent, OSError, RuntimeError) as exc:
            raise CommandError(f"could not start: {exc}") from None
        print("Monster Match live table")
        for key in ("sign", "dealer", "floor", "surveillance"):
            print(f"  {key:<13} {where[key]}")
        print(f"  shoe          {cfg.devices.shoe}")
        print(f"  board         {cfg.devices.board}")
        print(f"  camera        {table.camera.name if table.camera else 'none ([camera] source)'}")
        print(f"  database      {where['db']}")
        print("Running until Ctrl-C...")
        sys.stdout.flush()
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: stop, closing everything
            table.run()
    finally:
        table.close()
    print(f"stopped; books: monster-match report --db {opts.db}")
    return 0
