"""``monster-match enroll-deck``: fine-tune the card models on the house's own deck."""

from __future__ import annotations

import argparse

from controller.cli import CommandError


def register(subparsers: argparse._SubParsersAction) -> None:
    from vision.enroll import add_arguments

    p = subparsers.add_parser(
        "enroll-deck",
        help="fine-tune the card models on the house deck (needs the train extra)",
        description="Render scenes of the house deck (a directory of its 52 faces and its back, "
                    "named AS.png .. KD.png and back.png; or a design name), fine-tune the "
                    "bundled reader and gate on them, set the enrolled reader's threshold on "
                    "fresh frames of the deck, and report both models on those frames. Use "
                    "the result with --model OUT/cards_house.onnx or [camera] model.",
    )
    add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vision.deckdir import DeckError
    from vision.enroll import EnrollError, summary
    from vision.enroll import run as enroll

    try:
        report = enroll(args)
    except (DeckError, EnrollError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from None
    print(summary(report))
    print(f"enrolled models in {args.out}")
    return 0
