"""``monster-match vision-eval``: score recognition on a labelled directory."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from controller.cli import CommandError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "vision-eval",
        help="score card recognition on a labelled directory",
        description="Recognise every NAME.jpg/.png that has a NAME.json label beside it (the "
                    "format of vision.synth.render_table; see sample_images/README.md) and "
                    "print recall of readable face-up cards, misread rate, false positives "
                    "and ms/frame.",
    )
    p.add_argument("directory", type=Path, metavar="DIR")
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    p.add_argument("--model", type=Path, default=None, help="ONNX model (default: bundled)")
    p.add_argument("--threshold", type=float, default=None, help="operating threshold")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from vision.evaluate import evaluate_dir
    from vision.recognize import DEFAULT_MODEL, ImageError, Recognizer

    if not args.directory.is_dir():
        raise CommandError(f"not a directory: {args.directory}")
    try:
        rec = Recognizer(args.model or DEFAULT_MODEL, threshold=args.threshold)
        score = evaluate_dir(args.directory, rec, progress=None if args.json else
                             lambda it: tqdm(it, unit="img", file=sys.stderr,
                                             disable=len(it) < 4))
    except (FileNotFoundError, ValueError, ImageError) as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps(score.summary()))
    else:
        print(score.report())
    return 0
