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
                    "most.",
    )
    p.add_argument("paths", nargs="+", metavar="IMAGE_VIDEO_OR_DIR")
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
    from vision.mjpeg import MjpegCamera

    if not 0 < args.fps <= 120:
        raise CommandError(f"--fps must be above 0 and at most 120, not {args.fps:g}")
    if args.duration is not None and args.duration <= 0:
        raise CommandError("--duration must be above 0 seconds")
    if args.every < 1:
        raise CommandError("--every must be at least 1")
    files = expand(args.paths, args.recursive)
    if any(isinstance(f, str) for f in files):
        raise CommandError("camera-sim serves image and video files, not a camera")
    if not files:
        raise CommandError("no images or videos found")
    jpegs = load_frames(files, args.every)
    try:
        camera = MjpegCamera(jpegs, args.fps, host=args.host, port=args.port,
                             keep_times=False)
    except OSError as exc:
        raise CommandError(f"cannot listen on {args.host}:{args.port}: "
                           f"{exc.strerror or exc}") from None
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # a service manager's stop
    print(f"connect: {camera.url}", flush=True)
    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the camera's way to stop
            stop.wait(args.duration)
    finally:
        camera.close()
        print(f"camera-sim: {len(jpegs)} frames, {camera.frames_sent} sent", file=sys.stderr,
              flush=True)
    return 0
