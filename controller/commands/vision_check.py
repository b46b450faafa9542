"""``monster-match vision-check``: does this install read frames as the measured one?"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from controller.cli import CommandError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "vision-check",
        help="check that this install reads the sample frames as the reference install did",
        description="Read the frames of sample_images/ with the bundled models and compare "
                    "every card, face-down card and refusal with sample_images/reference.jsonl "
                    "(written where the model card's figures were measured). Prints the "
                    "libraries, the CPU's int8 flags, the models' sha256, each model's kernel "
                    "check and every difference; exit status 0 when there is none, 1 when "
                    "there are (the figures of the model card do not hold here).",
    )
    p.add_argument("--json", action="store_true", help="the report as one JSON object")
    p.add_argument("--reference", type=Path, default=None,
                   help="reference file (default: sample_images/reference.jsonl)")
    p.add_argument("--write-reference", action="store_true",
                   help="write the reference from this install instead of checking it")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vision.recognize import Recognizer
    from vision.selfcheck import REFERENCE, SAMPLES, check, describe, write_reference

    reference = args.reference or REFERENCE
    if not SAMPLES.is_dir():
        raise CommandError(f"{SAMPLES}: the sample frames are not installed here")
    try:
        rec = Recognizer()
        if args.write_reference:
            n = write_reference(rec, reference)
            print(f"wrote {reference}: {n} frames")
            return 0
        report = check(rec, reference)
    except (OSError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps(report))
    else:
        print(describe(report["environment"]))
        print(f"reader {report['model']} {report['model_sha256'][:16]}…, gate {report['gate']} "
              f"{(report['gate_sha256'] or '')[:16]}…, threshold {report['threshold']}")
        print("kernel check: " + ", ".join(f"{k} {v:.1f} steps from its graph"
                                           for k, v in report["kernel_steps"].items())
              + ("; the reader's deeper convolutions on QGEMM (AMX)"
                 if report.get("model_on_qgemm") else ""))
        if report["same"]:
            print(f"the same reads as {report['reference']} on all {report['frames']} frames")
        else:
            n = len(report["differences"])
            print(f"{n} difference{'' if n == 1 else 's'} from {report['reference']}:")
            for line in report["differences"]:
                print(f"  {line}")
    return 0 if report["same"] else 1
