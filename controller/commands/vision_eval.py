"""``monster-match vision-eval``: score recognition on a labelled directory."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from controller.cli import CommandError
from controller.commands.recognize import (
    add_reader_options,
    add_workers_option,
    reader_options,
    workers_option,
)

if TYPE_CHECKING:
    from vision.evaluate import Score


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "vision-eval",
        help="score card recognition on a labelled directory",
        description="Recognise every NAME.jpg (or .png, .tif, ...) that has a NAME.json label "
                    "beside it (the format of vision.synth.render_table; see "
                    "sample_images/README.md) and print recall of readable face-up cards, "
                    "misread rate, false positives and ms/frame, in all and per card design "
                    "(the labels' \"design\"). Every label is checked before a frame is "
                    "read. A frame whose image cannot be read is listed and not scored, the "
                    "rest are, and the exit status is then 1.",
    )
    p.add_argument("directory", type=Path, metavar="DIR")
    p.add_argument("-r", "--recursive", action="store_true",
                   help="the labelled frames of DIR's subdirectories too (hidden ones left "
                        "out), scored per folder as well")
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    p.add_argument("--model", type=Path, default=None, help="ONNX model (default: bundled)")
    p.add_argument("--threshold", type=float, default=None, help="operating threshold")
    add_reader_options(p)
    p.add_argument("--burst", action="store_true",
                   help="read each NAME.jpg with its burst (NAME.b1.jpg, NAME.b2.jpg, ...: "
                        "later frames of a still camera) and score the fused reads")
    p.add_argument("--calibrated", action="store_true",
                   help="read each frame with its table's card sizes, from its labels' "
                        "homography (\"table_to_image\") and card corners (vision.tablesize), "
                        "scored at the model's calibrated threshold where its .json has one "
                        "(the table's camera then reads so), else at its operating threshold")
    p.add_argument("--frames-out", type=Path, default=None, metavar="FILE",
                   help="also write one JSON line per frame to FILE: its image, design, "
                        "counts and time, and card by card what it missed, misread and "
                        "reported on no card (vision.evaluate.frame_report)")
    p.add_argument("--annotate", type=Path, default=None, metavar="DIR",
                   help="also draw, on a copy of each frame with a misread, a readable card "
                        "missed or a report on no card, what was read and what was wrong "
                        "(vision.annotate), written to DIR as NAME.jpg at the frame's path "
                        "below the suite's directory")
    p.add_argument("--annotate-all", action="store_true",
                   help="with --annotate, draw every frame read")
    add_workers_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from vision.evaluate import Score, frame_report, score_by_design, total
    from vision.parallel import WorkerError
    from vision.quality import WARNING_ORDER, image_warnings
    from vision.recognize import DEFAULT_MODEL, Recognizer

    if not args.directory.is_dir():
        raise CommandError(f"not a directory: {args.directory}")
    workers = workers_option(args)
    drawn: list[Path] = []  # (the frames drawn, with --annotate)
    if args.annotate_all and args.annotate is None:
        raise CommandError("--annotate-all needs --annotate DIR")
    if args.annotate is not None:
        from controller.commands.annotations import open_folder

        open_folder(args.annotate)
    try:
        # a line at a time: each frame's line is on disk once it is scored, so a run that is
        # killed keeps every frame it finished
        frames_out = args.frames_out.open("w", buffering=1) if args.frames_out else None
    except OSError as exc:
        raise CommandError(f"{args.frames_out}: {exc.strerror or exc}") from None

    def write_frame(image: Path, labels: dict, score: Score, result: dict) -> None:
        if "error" in result:
            frames_out.write(json.dumps({"image": str(image), "design": labels.get("design", ""),
                                         "error": result["error"]}) + "\n")
            return
        frames_out.write(json.dumps({
            "image": str(image), "design": labels.get("design", ""),
            "readable_cards": score.readable, "correct": score.correct,
            "reported": score.reported, "misread": score.misread,
            "false_positives": score.false_positive,
            "face_down": score.face_down, "face_down_found": score.face_down_found,
            "unreadable_reports": score.unreadable_reports,
            "elapsed_ms": result.get("elapsed_ms"), "quality": result.get("quality"),
            **frame_report(result, labels)}) + "\n")

    # the frames' scores by the camera's condition as measured in each (vision.quality),
    # and by the folder they lie in (a suite kept in subdirectories)
    by_warning: dict[str, Score] = {}
    by_folder: dict[str, Score] = {}

    def on_frame(image: Path, labels: dict, score: Score, result: dict) -> None:
        for key in image_warnings(result) if "error" not in result else ():
            by_warning.setdefault(key, Score()).add(score)
        folder = image.parent.relative_to(args.directory).as_posix()
        by_folder.setdefault(folder, Score()).add(score)
        if frames_out is not None:
            write_frame(image, labels, score, result)
        if args.annotate is not None and "error" not in result and (
                args.annotate_all or score.misread or score.false_positive
                or score.correct < score.readable):
            drawn.append(_draw(image, labels, result, args))

    try:
        rec = Recognizer(args.model or DEFAULT_MODEL, threshold=args.threshold,
                         **reader_options(args))
        by_design = score_by_design(args.directory, rec, progress=None if args.json else
                                    lambda it, n: tqdm(it, total=n, unit="img",
                                                       file=sys.stderr, disable=n < 4),
                                    burst=args.burst, calibrated=args.calibrated,
                                    workers=workers, on_frame=on_frame,
                                    recursive=args.recursive)
    except (FileNotFoundError, ValueError, WorkerError) as exc:
        raise CommandError(str(exc)) from None
    finally:
        if frames_out is not None:
            frames_out.close()
    score = total(by_design.values())
    status = 1 if score.unread else 0
    folders = dict(sorted(by_folder.items())) if args.recursive else {}
    if args.json:
        print(json.dumps({**score.summary(), "calibrated": args.calibrated,
                          "extra_walks": rec.extra_walk_bar(),
                          "by_design": {k: v.summary() for k, v in by_design.items()},
                          "by_image_warning": {k: by_warning[k].summary()
                                               for k in WARNING_ORDER if k in by_warning},
                          **({"by_folder": {k: v.summary() for k, v in folders.items()}}
                             if args.recursive else {}),
                          "misreads": misread_counts(score), "unread": score.unread,
                          **({"annotated": len(drawn)} if args.annotate else {})}))
        return status
    print(score.report())
    if score.confusions:
        print("misreads (labelled -> read): " + ", ".join(
            f"{pair}" + (f" x{n}" if n > 1 else "") for pair, n in misread_counts(score).items()))
    if args.burst:
        print("(a frame here is a burst: its reads fused, its time the whole burst's)")
    if rec.extra_walk_bar() is not None:
        print(f"(read with the extra walks: the cards only they found at "
              f"{rec.extra_walk_bar()} or more)")
    _table("by design:", {(k or "(none)"): v for k, v in by_design.items()},
           len(by_design) > 1 or "" not in by_design)
    _table("by folder:", {(k if k != "." else "(top)"): v for k, v in folders.items()},
           len(folders) > 1)
    _table("by the camera's condition measured in each frame (vision.quality):",
           {k: by_warning[k] for k in WARNING_ORDER if k in by_warning}, len(by_warning) > 1)
    for error in score.unread:
        print(f"not read: {error}")
    if args.annotate is not None:
        print(f"annotated: {len(drawn)} frame{'s' * (len(drawn) != 1)} drawn in "
              f"{args.annotate}" + ("" if args.annotate_all else
                                    " (those with a misread, a miss or a report on no card)"))
    return status


def _draw(image: Path, labels: dict, result: dict, args: argparse.Namespace) -> Path:
    """``image`` drawn with its reads and what they got wrong (:func:`vision.annotate.
    annotate`) at its path below the suite's directory in ``--annotate``'s."""
    from vision.annotate import annotate, save
    from vision.recognize import ImageError, load_image

    path = args.annotate / image.relative_to(args.directory).with_suffix(".jpg")
    try:
        save(path, annotate(load_image(image), result, labels))
    except (OSError, ImageError) as exc:
        raise CommandError(f"--annotate: {exc}") from None
    return path


def misread_counts(score: Score) -> dict[str, int]:
    """How often each card was misread as which, most often first (then by name): what a lab
    looks at first in a suite's misreads.

    >>> from vision.evaluate import Score
    >>> misread_counts(Score(confusions=["6S->9S", "QH->QD", "6S->9S"]))
    {'6S->9S': 2, 'QH->QD': 1}
    """
    return dict(sorted(Counter(score.confusions).items(), key=lambda kv: (-kv[1], kv[0])))


def _table(title: str, rows: dict, shown: bool) -> None:
    """A breakdown's rows, one :meth:`Score.line` each, under ``title`` (where ``shown``)."""
    if not shown:
        return
    print(title)
    width = max(len(k) for k in rows)
    for name, s in rows.items():
        print(f"  {name:<{width}}  {s.line()}")
