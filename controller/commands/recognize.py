"""``monster-match recognize``: read the cards in table-camera images."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from controller.cli import CommandError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "recognize",
        help="recognise the cards in camera frames",
        description="Recognise every dealt card in each image (directories are searched for "
                    f"{', '.join(IMAGE_SUFFIXES)} files). A file that cannot be read gives an "
                    "error line and the others go on; the exit status is then 1.",
    )
    p.add_argument("paths", nargs="+", metavar="IMAGE_OR_DIR")
    p.add_argument("--json", action="store_true", help="one JSON object per image, one a line")
    p.add_argument("--model", type=Path, default=None, help="ONNX model (default: bundled)")
    p.add_argument("--threshold", type=float, default=None,
                   help="operating threshold (default: the model's, from its .json)")
    p.add_argument("--table", type=Path, default=None, metavar="TOML",
                   help="table configuration whose [camera] calibration (four points or ArUco "
                        "markers) places each card in a layout area: adds \"spot\" to every "
                        "card (null off the layout), or \"calibration_error\" to a frame "
                        "that cannot be calibrated")
    p.set_defaults(func=run)


def expand(paths: list[str]) -> list[Path]:
    """Files as given, directories expanded to their image files (sorted)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out += sorted(f for f in p.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES)
        else:
            out.append(p)
    return out


def _recognizer(args: argparse.Namespace):  # noqa: ANN202
    from vision.recognize import DEFAULT_MODEL, Recognizer

    try:
        return Recognizer(args.model or DEFAULT_MODEL, threshold=args.threshold)
    except (FileNotFoundError, ValueError) as exc:
        raise CommandError(str(exc)) from None


def _calibrator(args: argparse.Namespace):  # noqa: ANN202
    if args.table is None:
        return None
    from controller.camera import LayoutCalibrator
    from controller.config import ConfigError, load_config

    try:
        cal = LayoutCalibrator(load_config(args.table).camera)
    except (ConfigError, OSError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if not cal.enabled:
        raise CommandError(f"{args.table}: [camera] calibration is \"none\"")
    return cal


def _place(result: dict, img, calibrator) -> dict:  # noqa: ANN001
    """``result`` with a layout area on every card, or the reason the frame has none."""
    from vision.calibration import CalibrationError, assign_spots

    try:
        return assign_spots(result, calibrator.for_frame(img))
    except CalibrationError as exc:
        return {**result, "calibration_error": str(exc)}


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from vision.recognize import ImageError, load_image

    files = expand(args.paths)
    if not files:
        raise CommandError("no images found")
    calibrator = _calibrator(args)
    rec = _recognizer(args)
    failed = 0
    bar = tqdm(files, unit="img", disable=args.json or len(files) < 4, file=sys.stderr)
    for path in bar:
        try:
            img = load_image(path)
            result = rec.recognize(img)
        except ImageError as exc:
            failed += 1
            if args.json:
                print(json.dumps({"image": str(path), "error": str(exc)}), flush=True)
            else:
                tqdm.write(f"{path}: error: {exc}", file=sys.stderr)
            continue
        if calibrator is not None:
            result = _place(result, img, calibrator)
        if args.json:
            print(json.dumps({"image": str(path), **result}), flush=True)
        else:
            cards = " ".join(f"{c['code']}({c['confidence']:.3f})"
                             + (f"@{c['spot'] or 'off-layout'}" if "spot" in c else "")
                             for c in result["cards"]) or "-"
            if "calibration_error" in result:
                cards += f" | not placed: {result['calibration_error']}"
            if "warning" in result:
                cards += f" | warning: {result['warning']}"
            tqdm.write(f"{path}: {cards} | face down {len(result['face_down'])}"
                       f" | unreadable {len(result['unreadable'])}"
                       f" | {result['elapsed_ms']:.1f} ms")
    return 1 if failed else 0
