"""``monster-match table``: run the table controller (``--simulate``: simulated everything)."""

from __future__ import annotations

import argparse
import sys

from controller.cli import CommandError
from controller.config import ConfigError, load_config
from controller.rounds import IllegalEvent, Table
from controller.simulate import run_simulation
from controller.storage import StorageError, Store


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "table", help="run the table controller",
        description="Run the table controller. With --simulate, simulated players, dealer, "
                    "floorperson and shoe play rounds until the store holds N completed rounds; "
                    "run again on the same file it resumes where it stopped.")
    p.add_argument("--simulate", action="store_true", required=True,
                   help="simulated players, wagers and shoe (the live table runs under `demo`)")
    p.add_argument("--db", required=True, metavar="FILE", help="SQLite database file")
    p.add_argument("--rounds", type=int, required=True, metavar="N",
                   help="stop once N rounds are completed in the store")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="seed of the simulated players and shoe (the Dynamic Pays draw always "
                        "uses the OS's cryptographic generator)")
    p.add_argument("--config", metavar="FILE", help="table configuration TOML")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
