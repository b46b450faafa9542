"""``monster-match camera-sim``: a table camera simulator, beside ``shoe-sim`` and ``board-sim``.

It serves frames (a directory of recorded or rendered frames, or images named one by one) as
an IP camera does: an HTTP Motion-JPEG stream (:class:`vision.mjpeg.MjpegCamera`), at a frame
rate, in a loop, until Ctrl-C. What reads a real camera reads it: ``recognize URL``, and a
table's ``[camera] source`` (``table --live``), so a camera's configuration, calibration and
the checks' timing can be tried on footage before the camera is there. The first line on
stdout is ``connect: URL``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from controller.cli import CommandError
from controller.commands.recognize import expand

#: A JPEG file is sent as it is; a frame of another format is encoded at this quality.
JPEG_QUALITY = 95


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "camera-sim",
        help="simulate the table's IP camera: frames served as an MJPEG stream",
        description="Serve the frames (images, or directories of them, in order of name) as "
                    "an IP camera does: a Motion-JPEG stream over HTTP, at --fps, in a loop, "
                    "until Ctrl-C or --duration. Prints 'connect: URL' first, for "
                    "'recognize URL' or a table's [camera] source. Every frame is checked "
                    "first: one that cannot be read, or frames of more than one size (a "
                    "camera sends one), are refused. The frames are held in memory as JPEG "
                    "(some 150 kB a 720p frame): a few thousand at most.",
    )
    p.add_argument("paths", nargs="+", metavar="IMAGE_OR_DIR")
    p.add_argument("-r", "--recursive", action="store_true",
                   help="the directories' subdirectories too")
    p.add_argument("--fps", type=float, default=25.0, help="frames a second (default 25)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 for every one)")
    p.add_argument("--port", type=int, default=0, help="TCP port (default 0: any free one)")
    p.add_argument("--duration", type=float, default=None, metavar="SECONDS",
                   help="stop after this long (default: run until Ctrl-C)")
    p.set_defaults(func=run)


def load_frames(paths: list[Path]) -> list[bytes]:
    """Each frame as JPEG bytes (a JPEG file's own), every one decoded first; refused
    (:class:`CommandError`) where one cannot be read or the frames differ in size."""
    import cv2

    from vision.recognize import ImageError, load_image

    jpegs, first = [], None
    for path in paths:
        try:
            img = load_image(path)
        except ImageError as exc:
            raise CommandError(f"{exc}: not served") from None
        size = (img.shape[1], img.shape[0])
        if first is None:
            first = (path, size)
        elif size != first[1]:
            raise CommandError(f"{path} is {size[0]}x{size[1]}, {first[0]} "
                               f"{first[1][0]}x{first[1][1]}: a camera sends one frame size")
        if path.suffix.lower() in (".jpg", ".jpeg"):
            jpegs.append(path.read_bytes())
        else:
            jpegs.append(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])[1]
                         .tobytes())
    return jpegs


def run(args: argparse.Namespace) -> int:
    from vision.mjpeg import MjpegCamera

    if not 0 < args.fps <= 120:
        raise CommandError(f"--fps must be above 0 and at most 120, not {args.fps:g}")
    if args.duration is not None and args.duration <= 0:
        raise CommandError("--duration must be above 0 seconds")
    files = expand(args.paths, args.recursive)
    if any(isinstance(f, str) for f in files):
        raise CommandError("camera-sim serves image files, not a camera")
    from vision.video import is_video

    videos = [f for f in files if is_video(f)]
    if videos:
        raise CommandError(f"{videos[0]}: a video; camera-sim serves image files (extract "
                           "its frames first)")
    if not files:
        raise CommandError("no images found")
    jpegs = load_frames(files)
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
        stop.wait(args.duration)
    except KeyboardInterrupt:
        pass
    finally:
        camera.close()
        print(f"camera-sim: {len(jpegs)} frames, {camera.frames_sent} sent", file=sys.stderr,
              flush=True)
    return 0
