"""The ``monster-match`` command: one entry point, one module per subcommand.

Each module named in :data:`COMMAND_MODULES` defines ``register(subparsers)``, which adds its
parser and sets ``func`` (taking the parsed arguments, returning an exit status).
"""

from __future__ import annotations

import argparse
import importlib
import os
import select
import signal
import sys
from collections.abc import Sequence

from controller import __version__

COMMAND_MODULES: tuple[str, ...] = (
    "controller.commands.evaluate",
    "controller.commands.odds",
    "controller.commands.table",
    "controller.commands.books",
    "controller.commands.users",
    "controller.commands.shoe_listen",
    "controller.commands.sims",
    "controller.commands.camera_sim",
    "controller.commands.demo",
    "controller.commands.recognize",
    "controller.commands.vision_eval",
    "controller.commands.vision_check",
    "controller.commands.enroll_deck",
)


class CommandError(Exception):
    """An error to report to the user in one line, with a non-zero exit status."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="monster-match",
        description="Monster Match Dynamic progressive table game system.",
    )
    parser.add_argument("--version", action="version", version=f"monster-match {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CommandError as exc:
        print(f"monster-match {args.command}: {exc}", file=sys.stderr)
        return exc.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader of our output left (``| head``): stop quietly, as a shell tool does; a
        # broken pipe anywhere else (a device's socket) is a real error
        if not _stdout_gone():
            raise
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 128 + signal.SIGPIPE


def _stdout_gone() -> bool:
    """Whether standard output is a pipe whose reading end has been closed."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & select.POLLERR for _, ev in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no such fd, or no poll on this system
        return False


if __name__ == "__main__":
    sys.exit(main())
