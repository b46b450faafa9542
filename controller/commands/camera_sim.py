"""``monster-match camera-sim``: a table camera simulator, beside ``shoe-sim`` and ``board-sim``.

It serves frames (recorded footage: a video, or a directory of frames; rendered frames) as an
IP camera does: an HTTP Motion-JPEG stream (:class:`vision.mjpeg.MjpegCamera`), at a frame
rate, in a loop, until Ctrl-C. What reads a real camera reads it: ``recognize URL``, and a
table's ``[camera] source`` (``table --live``), so a camera's configuration, calibration and
the checks' timing can be tried on footage before the camera is there. The first line on
stdout is ``connect: URL``.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from pathlib import Path

from controller.cli import CommandError
from controller.commands.recognize import expand

#: A JPEG file is sent as it is; a frame of another format, or of a video, is encoded at this
#: quality.
JPEG_QUALITY = 95
#: The most frames served (held in memory as JPEG, some 150 kB a 720p frame: about 750 MB).
MAX_FRAMES = 5000


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "camera-sim",
        help="simulate the table's IP camera: frames served as an MJPEG stream",
        description="Serve the frames (images and videos, or directories of them, in order "
                    "of name; --every N takes every Nth frame of a video) as an IP camera "
                    "does: a Motion-JPEG stream over HTTP, at --fps, in a loop, until Ctrl-C "
                    "or --duration. Prints 'connect: URL' first, for 'recognize URL' or a "
                    "table's [camera] source. Every frame is decoded first: a file that "
                    "cannot be read, or frames of more than one size (a camera sends one), "
                    f"are refused. The frames are held in memory as JPEG: {MAX_FRAMES} at "
                    "most. With --table DB, the cards a table's record says were dealt "
                    "instead.",
    )
    p.add_argument("paths", nargs="*", metavar="IMAGE_VIDEO_OR_DIR")
    p.add_argument("--table", metavar="DB", type=Path,
                   help="instead of footage, show the layout of this table's record as it "
                        "changes: the latest round's cards as dealt (the hole card face down "
                        "until revealed), drawn with the table's ArUco markers, so that a "
                        "live table run on shoe-sim and board-sim sees the cards its shoe "
                        "dealt (the database is opened read-only)")
    p.add_argument("--config", metavar="FILE",
                   help="with --table: the table's configuration TOML (frame size, markers)")
    p.add_argument("--seed", type=int, default=0,
                   help="with --table: the camera's pose and light (default 0)")
    p.add_argument("--design", default="plastic",
                   help="with --table: the cards' design (default plastic)")
    p.add_argument("--every", type=int, default=1, metavar="N",
                   help="of a video, every Nth frame (default: every frame)")
    p.add_argument("-r", "--recursive", action="store_true",
                   help="the directories' subdirectories too")
    p.add_argument("--fps", type=float, default=25.0, help="frames a second (default 25)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 for every one)")
    p.add_argument("--port", type=int, default=0, help="TCP port (default 0: any free one)")
    p.add_argument("--duration", type=float, default=None, metavar="SECONDS",
                   help="stop after this long (default: run until Ctrl-C)")
    p.set_defaults(func=run)


def load_frames(paths: list[Path], every: int = 1) -> list[bytes]:
    """Each frame as JPEG bytes (a JPEG file's own; a video's every ``every``-th frame,
    encoded), every one decoded first; refused (:class:`CommandError`) where a file cannot
    be read, the frames differ in size, or there are more than :data:`MAX_FRAMES`."""
    import cv2

    from vision.recognize import ImageError, load_image
    from vision.video import VideoError, is_video, video_frames

    jpegs: list[bytes] = []
    first: tuple[str, tuple[int, int]] | None = None

    def add(where: str, img, data: bytes | None = None) -> None:  # noqa: ANN001
        nonlocal first
        size = (img.shape[1], img.shape[0])
        if first is None:
            first = (where, size)
        elif size != first[1]:
            raise CommandError(f"{where} is {size[0]}x{size[1]}, {first[0]} "
                               f"{first[1][0]}x{first[1][1]}: a camera sends one frame size")
        if len(jpegs) == MAX_FRAMES:
            raise CommandError(f"more than {MAX_FRAMES} frames (held in memory): serve fewer, "
                               "or a video's every Nth (--every N)")
        jpegs.append(data if data is not None else cv2.imencode(
            ".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])[1].tobytes())

    for path in paths:
        if is_video(path):
            try:
                for n, frame in video_frames(path, every):
                    add(f"{path} frame {n}", frame)
            except VideoError as exc:
                raise CommandError(f"{exc}: not served") from None
            continue
        try:
            img = load_image(path)
        except ImageError as exc:
            raise CommandError(f"{exc}: not served") from None
        jpeg = path.suffix.lower() in (".jpg", ".jpeg")
        add(str(path), img, path.read_bytes() if jpeg else None)
    return jpegs


def run(args: argparse.Namespace) -> int:
    if not 0 < args.fps <= 120:
        raise CommandError(f"--fps must be above 0 and at most 120, not {args.fps:g}")
    if args.duration is not None and args.duration <= 0:
        raise CommandError("--duration must be above 0 seconds")
    if args.every < 1:
        raise CommandError("--every must be at least 1")
    if args.table is not None:
        if args.paths:
            raise CommandError("camera-sim shows footage or a table's record (--table), "
                               "not both")
        return serve_table(args)
    if not args.paths:
        raise CommandError("name the footage to serve (images, videos or directories), or "
                           "--table DB")
    files = expand(args.paths, args.recursive)
    if any(isinstance(f, str) for f in files):
        raise CommandError("camera-sim serves image and video files, not a camera")
    if not files:
        raise CommandError("no images or videos found")
    jpegs = load_frames(files, args.every)
    camera = _listen(jpegs, args)
    stop = _stop_on_sigterm()
    print(f"connect: {camera.url}", flush=True)
    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the camera's way to stop
            stop.wait(args.duration)
    finally:
        camera.close()
        print(f"camera-sim: {len(jpegs)} frames, {camera.frames_sent} sent", file=sys.stderr,
              flush=True)
    return 0


def _listen(jpegs: list[bytes], args: argparse.Namespace):  # noqa: ANN202 - MjpegCamera
    from vision.mjpeg import MjpegCamera

    try:
        return MjpegCamera(jpegs, args.fps, host=args.host, port=args.port, keep_times=False)
    except OSError as exc:
        raise CommandError(f"cannot listen on {args.host}:{args.port}: "
                           f"{exc.strerror or exc}") from None


def _stop_on_sigterm() -> threading.Event:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # a service manager's stop
    return stop


def serve_table(args: argparse.Namespace) -> int:
    """``camera-sim --table DB``: the table's layout as its record changes
    (:class:`controller.table_view.TableView`, polled every :data:`POLL_SECONDS`), each
    layout drawn (:func:`render_layout`) and served until the next change, nothing served
    while it is drawn (:meth:`vision.mjpeg.MjpegCamera.pause`). Each change is
    a line on stderr: ``round 3: seat1 QH QD | dealer 7C XX (0.35 s to draw)``."""
    import time

    from controller.config import ConfigError, load_config
    from controller.storage import StorageError
    from controller.table_view import TableView
    from vision.designs import get_design

    try:
        cfg = load_config(args.config)
        view = TableView(args.table)
    except (ConfigError, StorageError) as exc:
        raise CommandError(str(exc)) from None
    try:
        design = get_design(args.design)
    except (KeyError, ValueError, OSError) as exc:
        raise CommandError(f"--design {args.design}: {exc}") from None
    shown = view.layout()
    camera = _listen(render_layout(shown[1], cfg, args.seed, design), args)
    stop = _stop_on_sigterm()
    print(f"connect: {camera.url}", flush=True)
    end = None if args.duration is None else time.monotonic() + args.duration
    changes = 0
    try:
        with contextlib.suppress(KeyboardInterrupt):
            while not stop.wait(POLL_SECONDS):
                if end is not None and time.monotonic() >= end:
                    break
                now = view.layout()
                if now == shown:
                    continue
                t0 = time.perf_counter()
                # the old layout's frames stop while the new one is drawn (a second or so on
                # a busy machine): a check asked after the deal must not read them as new
                camera.pause()
                camera.show(render_layout(now[1], cfg, args.seed, design))
                shown, changes = now, changes + 1
                print(f"round {now[0]}: {describe(now[1])} "
                      f"({time.perf_counter() - t0:.2f} s to draw)", file=sys.stderr,
                      flush=True)
    finally:
        camera.close()
        view.close()
        print(f"camera-sim: {changes} layouts shown, {camera.frames_sent} frames sent",
              file=sys.stderr, flush=True)
    return 0


#: How often ``--table`` looks at the record (seconds).
POLL_SECONDS = 0.05
#: Frames drawn of each layout, each with fresh sensor noise, served in a loop.
NOISE_FRAMES = 3
#: The cards' width in a 720p frame (scaled with the frame's height): a camera installed
#: close enough for cards some 60 px wide, well above ``vision.quality``'s 40 px warning (the
#: reader reads fewer of the smaller cards, ``models/cards_v7.md``).
CARD_PX = (60.0, 66.0)


def render_layout(layout: dict[str, list[str]], cfg, seed: int,  # noqa: ANN001 - TableConfig
                  design) -> list[bytes]:  # noqa: ANN001 - CardDesign
    """``layout`` drawn as the table's camera would show it: the pose and light ``seed``
    gives (the same for every layout: the camera does not move), the table's frame size
    and ArUco markers, each hand within its area; :data:`NOISE_FRAMES` frames, JPEG, their
    sensor noise drawn from ``seed`` and the layout (the same layout, the same frames)."""
    import zlib

    import cv2
    import numpy as np

    from vision.synth import render_burst

    frames, _ = render_burst(layout, np.random.default_rng(seed), NOISE_FRAMES,
                             noise_rng=np.random.default_rng(
                                 [seed, zlib.crc32(describe(layout).encode())]), design=design,
                             size=cfg.camera.capture_size, tilt_max=20.0,
                             card_px=tuple(w * cfg.camera.capture_size[1] / 720 for w in CARD_PX),
                             markers=cfg.camera.aruco_markers, hands_in_area=True)
    return [cv2.imencode(".jpg", f, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])[1].tobytes()
            for f in frames]


def describe(layout: dict[str, list[str]]) -> str:
    """``seat1 QH QD | dealer 7C XX``, or ``no cards``.

    >>> describe({"seat1": ["QH", "QD"], "dealer": ["7C", "XX"]})
    'seat1 QH QD | dealer 7C XX'
    """
    return " | ".join(f"{area} {' '.join(codes)}" for area, codes in layout.items()) or "no cards"
