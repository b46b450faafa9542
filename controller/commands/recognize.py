"""``monster-match recognize``: read the cards in table-camera images."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from controller.cli import CommandError
from vision.imagefiles import IMAGE_SUFFIXES, files_in
from vision.stream import LiveStream, StreamError, is_stream, redact
from vision.video import VIDEO_SUFFIXES, VideoError, frame_count, is_video, video_frames


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "recognize",
        help="recognise the cards in camera frames",
        description="Recognise every dealt card in each image (directories are searched for "
                    f"{', '.join(IMAGE_SUFFIXES)} files; with --recursive their "
                    "subdirectories too) and in the frames of each video "
                    f"({', '.join(VIDEO_SUFFIXES)}; --every N reads every Nth frame; a line "
                    "per frame, with \"frame\", its number), and of each live camera "
                    f"({', '.join(s + '://' for s in ('rtsp', 'http', 'https', 'rtmp', 'udp'))}"
                    "... URLs, or /dev/videoN): the newest frame each time, with \"frame\" "
                    "and \"skipped\", the frames that went by unread, until --frames are read "
                    "or Ctrl-C. A file that cannot be read, or a camera that cannot be opened, "
                    "stalls or ends, gives an error line and the others go on; the exit status "
                    "is then 1.",
    )
    p.add_argument("paths", nargs="+", metavar="IMAGE_OR_DIR")
    p.add_argument("--json", action="store_true", help="one JSON object per image, one a line")
    p.add_argument("-r", "--recursive", action="store_true",
                   help="search the directories' subdirectories too (hidden ones left out); "
                        "the files in order of their path")
    p.add_argument("--model", type=Path, default=None, help="ONNX model (default: bundled)")
    p.add_argument("--threshold", type=float, default=None,
                   help="operating threshold (default: the model's, from its .json)")
    add_reader_options(p)
    p.add_argument("--table", type=Path, default=None, metavar="TOML",
                   help="table configuration whose [camera] calibration (four points or ArUco "
                        "markers) places each card in a layout area: adds \"spot\" to every "
                        "card (null off the layout), or \"calibration_error\" to a frame "
                        "that cannot be calibrated; a reader with a calibrated threshold (an "
                        "enrolled deck's) reads at the calibration's card sizes")
    p.add_argument("--every", type=int, default=1, metavar="N",
                   help="of a video, read every Nth frame (default: every frame)")
    p.add_argument("--frames", type=int, default=None, metavar="N",
                   help="of a live camera, stop after reading N frames (default: read until "
                        "it ends or Ctrl-C)")
    p.add_argument("--capture-size", type=_size, default=(1280, 720), metavar="WxH",
                   help="of a capture device (/dev/videoN), the frame size asked of it, in "
                        "Motion-JPEG (default 1280x720: many USB cameras otherwise open at "
                        "640x480, too small to read cards)")
    p.add_argument("--reconnect", type=float, default=None, metavar="SECONDS",
                   help="a live camera lost (or not opened) is reported and opened again "
                        "after SECONDS, until --frames are read or Ctrl-C; each line says "
                        "its \"connection\" (default: a lost camera ends its reading)")
    p.add_argument("--burst", action="store_true",
                   help="the images are frames of one still layout, taken one after another: "
                        "read each and report the fused reads once (\"images\" lists the "
                        "frames read; at most as many as the model's burst threshold was "
                        "chosen for)")
    p.add_argument("--annotate", type=Path, default=None, metavar="DIR",
                   help="also draw each frame's reads on a copy of it, written to DIR as a "
                        "JPEG (vision.annotate: cards read with their code and confidence, "
                        "face-down cards, cards not read; with --table the layout's areas "
                        "and each card's): an image under a directory named here keeps its "
                        "path below it, one named itself its name, a video's frames are "
                        "NAME.fNNNNNN.jpg, a camera's cameraK.fNNNNNN.jpg; each line gains "
                        "\"annotated\", the drawing's path")
    add_workers_option(p)
    p.set_defaults(func=run)


def _size(text: str) -> tuple[int, int]:
    """``WxH`` as (width, height), within ``[camera] capture_size``'s bounds.

    >>> _size("1920x1080")
    (1920, 1080)
    """
    from controller.config import MAX_CAPTURE, MIN_CAPTURE

    w, sep, h = text.lower().partition("x")
    if not (sep and w.isdigit() and h.isdigit()
            and MIN_CAPTURE[0] <= int(w) <= MAX_CAPTURE[0]
            and MIN_CAPTURE[1] <= int(h) <= MAX_CAPTURE[1]):
        raise argparse.ArgumentTypeError(
            f"{text!r}: a frame size is WIDTHxHEIGHT, {MIN_CAPTURE[0]}-{MAX_CAPTURE[0]} by "
            f"{MIN_CAPTURE[1]}-{MAX_CAPTURE[1]} pixels")
    return int(w), int(h)


def add_workers_option(p: argparse.ArgumentParser) -> None:
    """``--workers``: frames read by that many processes, results in order
    (:mod:`vision.parallel`)."""
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="read with N processes, one core each (0: one per core this process "
                        "may use); the output is the same, in the same order, sooner "
                        "(default 1)")


def workers_option(args: argparse.Namespace) -> int:
    """The number of reading processes ``--workers`` asks for."""
    from vision.parallel import usable_cores

    if args.workers < 0:
        raise CommandError("--workers must be 0 (one per core) or more")
    return args.workers or usable_cores()


def add_reader_options(p: argparse.ArgumentParser) -> None:
    """The reader's options: the ranks and colours refusals carry (:mod:`vision.rankcolour`)
    and the extra walks (:data:`vision.recognize.EXTRA_BAR`)."""
    p.add_argument("--rank-colour-threshold", type=float, default=None, metavar="T",
                   help="give a refused card its rank and colour where they are sure at T "
                        "(default: the model's rank_colour_threshold, from its .json)")
    p.add_argument("--no-rank-colour", action="store_true",
                   help="refusals carry their centre alone")
    p.add_argument("--extra-walks", action="store_true",
                   help="after the hand walks, look once more around every hand (the lone "
                        "corners' grid, three-step splits, opposite corners, none over a card "
                        "already reported); a card only they find must be read at the bar "
                        "they were measured at with the bundled reader "
                        "(vision.recognize.EXTRA_WALKS_BAR) where no card or face-down card "
                        "is reported: more cards, for about 1.3 times a frame's time. The "
                        "bundled reader's .json asks for them: this is for a model whose "
                        ".json does not")
    p.add_argument("--no-extra-walks", action="store_true",
                   help="read without the extra walks, whatever the model's .json says: "
                        "fewer cards (0.2 to 0.9 points of the bundled reader's validation "
                        "frames) in about 0.75 times a frame's time")
    p.add_argument("--extra-bar", type=float, default=None, metavar="BAR",
                   help="read with the extra walks at BAR instead (0: without them, whatever "
                        "the model's .json says)")


def reader_options(args: argparse.Namespace) -> dict:
    """:class:`vision.recognize.Recognizer` keywords from :func:`add_reader_options`'."""
    bar = args.extra_bar
    if args.no_extra_walks:
        if args.extra_walks or bar is not None:
            raise CommandError("--no-extra-walks reads without the extra walks: drop "
                               "--extra-walks and --extra-bar, or it")
        bar = 0.0
    if bar is None and args.extra_walks:
        from vision.recognize import EXTRA_WALKS_BAR

        bar = EXTRA_WALKS_BAR
    return {"rank_colour_threshold": args.rank_colour_threshold,
            "rank_colour": not args.no_rank_colour, "extra_bar": bar}


def expand(paths: list[str], recursive: bool = False) -> list[Path | str]:
    """Files as given, directories expanded to their image and video files (sorted; with
    ``recursive``, those of their subdirectories too, :func:`vision.imagefiles.files_in`); a
    live camera (:func:`vision.stream.is_stream`) as its URL or device, a string."""
    out: list[Path | str] = []
    for raw in paths:
        if is_stream(raw):
            out.append(raw)
            continue
        p = Path(raw)
        if p.is_dir():
            out += files_in(p, IMAGE_SUFFIXES + VIDEO_SUFFIXES, recursive)
        else:
            out.append(p)
    return out


def _recognizer(args: argparse.Namespace):  # noqa: ANN202
    from vision.recognize import DEFAULT_MODEL, Recognizer

    try:
        return Recognizer(args.model or DEFAULT_MODEL, threshold=args.threshold,
                          **reader_options(args))
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


def _place(result: dict, img, calibrator) -> tuple[dict, object]:  # noqa: ANN001
    """``result`` with a layout area on every card, or the reason the frame has none; and
    the calibration that placed it (or ``None``)."""
    from vision.calibration import CalibrationError, assign_spots

    try:
        calibration = calibrator.for_frame(img)
    except CalibrationError as exc:
        return {**result, "calibration_error": str(exc)}, None
    return assign_spots(result, calibration), calibration


def _read_placed(rec, img, calibrator) -> tuple[dict, object]:  # noqa: ANN001
    """One frame read and, with ``--table``, placed on the layout: read at the calibration's
    card sizes where the reader has a threshold for such reads (an enrolled deck's:
    :meth:`vision.recognize.Recognizer.table_for`), else at the frame's own; and the
    calibration that placed it (``None`` without one)."""
    if calibrator is None:
        return rec.recognize(img), None
    from vision.calibration import CalibrationError, assign_spots

    try:
        calibration = calibrator.for_frame(img)
    except CalibrationError as exc:
        return {**rec.recognize(img), "calibration_error": str(exc)}, None
    return assign_spots(rec.recognize(img, rec.table_for(calibration)), calibration), calibration


def _drawn(head: dict, result: dict, img, calibration) -> tuple[dict, dict]:  # noqa: ANN001
    """With ``--annotate`` (``head["annotated"]``: where), the frame drawn with its reads
    (:func:`vision.annotate.annotate`) and written; a drawing that cannot be written leaves
    the head without its path and the result with ``"annotate_error"``."""
    if "annotated" not in head:
        return head, result
    from vision.annotate import annotate, save

    try:
        save(Path(head["annotated"]), annotate(img, result, calibration=calibration))
    except OSError as exc:
        return ({k: v for k, v in head.items() if k != "annotated"},
                {**result, "annotate_error": str(exc)})
    return head, result


def _error(head: dict, exc: Exception, as_json: bool) -> None:
    """The error line of a job (its ``head``: the image, and a camera's connection)."""
    from tqdm import tqdm

    if as_json:
        print(json.dumps({**head, "error": str(exc)}), flush=True)
    else:
        tqdm.write(f"{head['image']}: error: {exc}", file=sys.stderr)


def _live_jobs(source: str, frames: int | None,  # noqa: ANN202 - a generator
               reconnect: float | None = None, capture_size: tuple[int, int] | None = None):
    """The newest frames of a live camera, ``frames`` of them (else until it ends), then the
    error that ended it (:class:`vision.stream.StreamError`), if one did; a capture device
    asked for ``capture_size`` (:func:`vision.stream.ask_capture_size`). With ``reconnect``
    (seconds), each error is reported and the camera opened again after that pause, until
    ``frames`` are read (or Ctrl-C); each line then says which ``"connection"`` it came
    from (1 first), as the camera's frame numbers start again with each."""
    shown = redact(source)
    read, connection = 0, 0
    while True:
        connection += 1
        extra = {"connection": connection} if reconnect is not None else {}
        try:
            with LiveStream(source, capture_size=capture_size) as live:
                for number, skipped, frame in live:
                    read += 1
                    yield {"image": shown, "frame": number, "skipped": skipped, **extra}, frame
                    if frames is not None and read >= frames:
                        return
        except StreamError as exc:
            yield {"image": shown, **extra}, exc
        if reconnect is None:
            return
        time.sleep(reconnect)


def _jobs(files: list[Path | str], every: int,  # noqa: ANN202 - a generator of three kinds
          frames: int | None = None, reconnect: float | None = None,
          capture_size: tuple[int, int] | None = None):
    """``(head, what to read)`` in order: an image file's path (decoded where it is read),
    each read frame of each video or live camera (decoded here: a video is read from its
    start, a camera from now), or the error of one that cannot be read (or of the rest of
    one)."""
    for path in files:
        if isinstance(path, str):
            yield from _live_jobs(path, frames, reconnect, capture_size)
            continue
        if is_video(path):
            try:
                for n, frame in video_frames(path, every):
                    yield {"image": str(path), "frame": n}, frame
            except VideoError as exc:
                yield {"image": str(path)}, exc
            continue
        yield {"image": str(path)}, path


def _load(job: tuple[dict, object]) -> tuple[dict, object]:
    """A job's image decoded, or the error that it cannot be (:func:`_jobs`)."""
    from vision.recognize import ImageError, load_image

    head, item = job
    if isinstance(item, Path):
        try:
            return head, load_image(item)
        except ImageError as exc:
            return head, exc
    return head, item


def _read_job(state: tuple, job: tuple[dict, object]) -> tuple[dict, dict | Exception]:
    """A job read (in this process or a worker's, :mod:`vision.parallel`): its head and its
    result, or the error that its image or video cannot be read."""
    rec, calibrator = state
    head, item = _load(job)
    if isinstance(item, Exception):
        return head, item
    result, calibration = _read_placed(rec, item, calibrator)
    return _drawn(head, result, item, calibration)


def _print(head: dict, result: dict, as_json: bool) -> None:
    from tqdm import tqdm

    from vision.quality import describe_quality

    if as_json:
        print(json.dumps({**head, **result}), flush=True)
        return
    cards = " ".join(f"{c['code']}({c['confidence']:.3f})"
                     + (f"@{c['spot'] or 'off-layout'}" if "spot" in c else "")
                     for c in result["cards"]) or "-"
    if "calibration_error" in result:
        cards += f" | not placed: {result['calibration_error']}"
    if "warning" in result:
        cards += f" | warning: {result['warning']}"
    # the camera's condition (vision.quality): "image: blurred (card edges spread 1.40 px on
    # cards 52 px wide, ...)"
    quality = result.get("quality") or {}
    if quality.get("warnings"):
        cards += f" | image: {', '.join(quality['warnings'])} ({describe_quality(quality)})"
    if quality.get("small_spots"):  # from the calibration: cards there would be too small
        cards += " | small cards at " + ", ".join(
            f"{s} ({quality['spot_card_px'][s]:.0f} px)" for s in quality["small_spots"])
    if "images" in head:
        n = len(head["images"])
        label = f"burst of {n} frame{'s' * (n != 1)}"
    else:
        label = head["image"] + (f"#{head['frame']}" if "frame" in head else "")
        if head.get("skipped"):  # a live camera's frames that went by unread
            label += f" ({head['skipped']} skipped)"
    # the refusals whose rank and colour are sure (vision.rankcolour): "Q-red(0.998)"
    partial = " ".join(f"{u['rank']}-{u['color']}({u['confidence']:.3f})"
                       for u in result["unreadable"] if "rank" in u)
    tqdm.write(f"{label}: {cards} | face down {len(result['face_down'])}"
               f" | unreadable {len(result['unreadable'])}"
               + (f" (rank and colour: {partial})" if partial else "")
               + f" | {result['elapsed_ms']:.1f} ms")


def _run_burst(args: argparse.Namespace, files: list[Path | str], rec,  # noqa: ANN001
               calibrator, names: dict[str, str]) -> int:  # noqa: ANN001
    if any(isinstance(p, str) or is_video(p) for p in files):
        raise CommandError("--burst reads image files, the frames of one burst; not videos "
                           "or cameras")
    frames, read, failed = [], [], False
    for head, item in map(_load, _jobs(files, 1)):
        if isinstance(item, Exception):  # the other frames still make the burst
            _error(head, item, args.json)
            failed = True
            continue
        frames.append(item)
        read.append(head["image"])
    if frames:
        try:
            result = rec.recognize_burst(frames)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        calibration = None
        if calibrator is not None:
            result, calibration = _place(result, frames[0], calibrator)
        head: dict = {"images": read}
        if args.annotate is not None:  # (the fused reads, drawn on the burst's first frame)
            from controller.commands.annotations import target

            head["annotated"] = str(target(args.annotate, names[read[0]], {}))
        head, result = _drawn(head, result, frames[0], calibration)
        _print(head, result, args.json)
        failed = _annotate_failed(head, result, args.json) or failed
    return 1 if failed else 0


def _annotate_failed(head: dict, result: dict, as_json: bool) -> bool:
    """Whether a frame's drawing could not be written (said on standard error without
    ``--json``; its line carries ``"annotate_error"`` with it)."""
    if "annotate_error" not in result:
        return False
    if not as_json:
        from tqdm import tqdm

        tqdm.write(f"annotate: error: {result['annotate_error']}", file=sys.stderr)
    return True


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    files = expand(args.paths, args.recursive)
    if not files:
        below = not args.recursive and expand(args.paths, recursive=True)
        raise CommandError("no images found" + (
            f" (their subdirectories hold {len(below)}: --recursive reads them)"
            if below else ""))
    if args.every < 1:
        raise CommandError("--every must be at least 1")
    if args.frames is not None and args.frames < 1:
        raise CommandError("--frames must be at least 1")
    if args.reconnect is not None and args.reconnect < 0:
        raise CommandError("--reconnect must be 0 seconds or more")
    workers = workers_option(args)
    if workers > 1 and any(isinstance(p, str) for p in files):
        # frames taken ahead for the workers would wait in their queue: read late, not newest
        raise CommandError("a live camera is read by one process (--workers 1): frames queued "
                           "for workers would be read late")
    calibrator = _calibrator(args)
    names: dict[str, str] = {}  # (each source's drawing, with --annotate)
    if args.annotate is not None:
        from controller.commands.annotations import open_folder, stems

        names = stems(args.paths, files)  # (two sources drawn to one file: refused here)
        open_folder(args.annotate)
    rec = _recognizer(args)
    if args.burst:  # (one result: its frames are read here, one after another)
        return _run_burst(args, files, rec, calibrator, names)
    from vision.parallel import WorkerError, read_in_order

    # one step of the bar per image, and per frame to read of a video (as its file states);
    # with --json there is no bar, and no video is opened an extra time to count its frames
    total = 0 if args.json else sum(
        (args.frames or 0) if isinstance(p, str)
        else -(-frame_count(p) // args.every) if is_video(p) else 1 for p in files)
    failed = drawn = 0
    conditions: Counter[str] = Counter()  # frames read, and those of each camera warning
    jobs = _jobs(files, args.every, args.frames, args.reconnect, args.capture_size)
    if args.annotate is not None:
        jobs = _to_draw(jobs, args.annotate, names)
    reads = read_in_order(_read_job, jobs, (rec, calibrator), workers)
    with tqdm(total=total, unit="img", disable=args.json or total < 4, file=sys.stderr) as bar:
        try:
            for head, result in reads:
                bar.update()
                if isinstance(result, Exception):
                    failed += 1
                    _error(head, result, args.json)
                    continue
                _print(head, result, args.json)
                failed += _annotate_failed(head, result, args.json)
                drawn += "annotated" in head
                conditions.update(["frames", *(result.get("quality") or {}).get("warnings", ())])
        except WorkerError as exc:
            raise CommandError(str(exc)) from None
        finally:
            reads.close()  # (a reader that left: the workers stop before we do)
    if not args.json and conditions["frames"] > 1:
        print(_conditions_line(conditions))
    if not args.json and args.annotate is not None:
        print(f"annotated: {drawn} frame{'s' * (drawn != 1)} drawn in {args.annotate}")
    return 1 if failed else 0


def _to_draw(jobs, out: Path, names: dict[str, str]):  # noqa: ANN001, ANN202 - generators
    """``jobs`` (:func:`_jobs`) with where each frame read is to be drawn
    (:mod:`controller.commands.annotations`) in its head's ``"annotated"``."""
    from controller.commands.annotations import target

    for head, item in jobs:
        if not isinstance(item, Exception):
            head = {**head, "annotated": str(target(out, names[head["image"]], head))}
        yield head, item


def _conditions_line(conditions: Counter[str]) -> str:
    """The camera's condition over the frames read (without ``--json``, after them): how
    many frames each :mod:`vision.quality` warning was raised in.

    >>> from collections import Counter
    >>> _conditions_line(Counter(frames=80, blurred=12, motion_blur=5))[33:]
    'blurred 12 (15 %), motion_blur 5 (6 %), small_cards 0, underexposed 0, colour_cast 0'
    >>> _conditions_line(Counter(frames=3))
    'camera condition over 3 frames: no warning'
    """
    from vision.quality import WARNINGS as warned

    n = conditions["frames"]
    if not any(conditions[w] for w in warned):
        return f"camera condition over {n} frames: no warning"
    return f"camera condition over {n} frames: " + ", ".join(
        f"{w} {conditions[w]}" + (f" ({100 * conditions[w] / n:.0f} %)" if conditions[w] else "")
        for w in warned)
