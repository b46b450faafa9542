"""``monster-match user``: manage the people who may act on the table."""

from __future__ import annotations

import argparse
import getpass
import sys

from controller.auth import Auth, AuthError, Role
from controller.cli import CommandError
from controller.storage import StorageError, Store


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "user", help="add a dealer, floorperson, surveillance or administrator account",
        description="Add an account. The password is read from the terminal (or one line of "
                    "standard input with --password-stdin) and stored only as a scrypt hash.")
    p.add_argument("action", choices=["add"])
    p.add_argument("--db", required=True, metavar="FILE")
    p.add_argument("--name", required=True)
    p.add_argument("--role", required=True, choices=[r.value for r in Role])
    p.add_argument("--password-stdin", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass(f"password for {args.name}: ")
        if password != getpass.getpass("again: "):
            raise CommandError("passwords differ")
    try:
        store = Store(args.db)
        Auth(store).add_user(args.name, Role(args.role), password, by="cli")
    except (AuthError, StorageError) as exc:
        raise CommandError(str(exc)) from None
    print(f"added {args.role} {args.name}")
    return 0
