"""Frames of a live camera: a network stream (RTSP, HTTP MJPEG, RTMP, UDP, TCP, SRT) or a
local capture device, read with OpenCV (its FFmpeg backend for streams, in the
``opencv-python-headless`` wheel).

A live camera does not wait for the reader: at some 60 ms a 720p frame on one core the
reader keeps up with a camera of 15 frames a second at most. :class:`LiveStream` therefore
decodes every frame on a thread of its own and hands out the newest one each time one is
asked for, with how many frames went by unread, so what is read is what the table shows now,
never a backlog. A camera that cannot be opened, that stops sending
(:data:`STALL_SECONDS`) or whose stream ends raises :class:`StreamError` with the reason: a
table camera has no end, so an end is a lost camera.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from vision.video import VideoError

if TYPE_CHECKING:
    import numpy as np

#: URL schemes read as live streams by FFmpeg
STREAM_SCHEMES = ("rtsp", "rtsps", "rtmp", "http", "https", "udp", "tcp", "srt")
#: Seconds to wait for a camera to open, and for its next frame, before giving it up.
OPEN_SECONDS = 10.0
STALL_SECONDS = 10.0

_DEVICE = re.compile(r"/dev/video(\d+)\Z")


class StreamError(VideoError):
    """A live camera that cannot be opened, stalls, or ends."""


def is_stream(source: str) -> bool:
    """Whether ``source`` names a live camera: a URL of :data:`STREAM_SCHEMES` or a video
    capture device.

    >>> is_stream("rtsp://cam7.floor2/stream1"), is_stream("http://10.0.0.5:8080/video.mjpg")
    (True, True)
    >>> is_stream("/dev/video0"), is_stream("shift3/table2.mp4"), is_stream("file:///x.mp4")
    (True, False, False)
    """
    scheme, sep, _ = source.partition("://")
    return (bool(sep) and scheme.lower() in STREAM_SCHEMES) or bool(_DEVICE.match(source))


def redact(source: str) -> str:
    """``source`` without the password of its URL, for output and logs.

    >>> redact("rtsp://admin:s3cret@10.0.0.7:554/stream1")
    'rtsp://admin:***@10.0.0.7:554/stream1'
    >>> redact("/dev/video0")
    '/dev/video0'
    """
    return re.sub(r"(://[^/:@]+):[^/@]*@", r"\1:***@", source)


def _frames(n: int) -> str:
    """``n`` frames, in words.

    >>> _frames(1), _frames(20)
    ('1 frame', '20 frames')
    """
    return f"{n} frame{'s' * (n != 1)}"


def ask_capture_size(cap, size: tuple[int, int]) -> tuple[int, int]:  # noqa: ANN001
    """Ask an opened capture device (``cv2.VideoCapture``) for frames of ``size`` (width,
    height) in Motion-JPEG, and return the size it then says it gives. A USB camera opens
    at its driver's default, often 640x480, where a table's cards are some 25 px wide and
    cannot be read; at 720p or more its uncompressed formats are limited to a few frames a
    second over USB 2, so Motion-JPEG is asked for first (the size after it: some drivers
    reset the size when the format changes). A device that cannot give ``size`` gives the
    nearest it can, which the frames then show.

    >>> import cv2, numpy as np, tempfile
    >>> path = tempfile.mkdtemp() + "/clip.avi"
    >>> out = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), 5, (320, 240))
    >>> _ = out.write(np.zeros((240, 320, 3), np.uint8))
    >>> out.release()
    >>> ask_capture_size(cv2.VideoCapture(path), (1280, 720))   # a file keeps its own size
    (320, 240)
    """
    import cv2

    cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*"MJPG"))
    cap.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
    cap.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
    return int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))


class LiveStream:
    """The frames of a live camera, the newest each time (see the module's description).

    Iterate for ``(frame number, frames skipped since the last one read, BGR frame)``, the
    frame number counting every frame the camera sent since it was opened. :meth:`close`
    (or leaving a ``with`` block) stops the decoding thread and releases the camera.
    """

    def __init__(self, source: str, open_seconds: float = OPEN_SECONDS,
                 stall_seconds: float = STALL_SECONDS,
                 capture_size: tuple[int, int] | None = None) -> None:
        """``capture_size`` (width, height): asked of a capture device
        (:func:`ask_capture_size`); a network camera sends the size it is set to."""
        import cv2

        self.source = source
        self.stall_seconds = stall_seconds
        device = _DEVICE.match(source)
        # OpenCV's own warning on a camera it cannot open says less than the error below
        # (FFmpeg's reason, "Connection refused", still shows on stderr)
        level = cv2.utils.logging.getLogLevel()
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
        try:
            if device:
                cap = cv2.VideoCapture(int(device.group(1)))
            else:
                # FFmpeg gives up a read later than the stall check here, which says why
                cap = cv2.VideoCapture(source, cv2.CAP_FFMPEG, [
                    cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, int(open_seconds * 1000),
                    cv2.CAP_PROP_READ_TIMEOUT_MSEC, int((stall_seconds + 5) * 1000)])
        finally:
            cv2.utils.logging.setLogLevel(level)
        if not cap.isOpened():
            cap.release()
            raise StreamError(f"{redact(source)}: the camera could not be opened")
        if device and capture_size is not None:
            ask_capture_size(cap, capture_size)
        self._cap = cap
        self._cond = threading.Condition()
        #: the newest frame: its number, when it was decoded (``time.monotonic``), the frame
        self._latest: tuple[int, float, np.ndarray] | None = None
        self._sent = 0  # frames the camera sent (decoded here)
        self._ended = False
        self._stop = False
        self._closed = False
        self._thread = threading.Thread(target=self._decode, name="live-stream", daemon=True)
        self._thread.start()

    def _decode(self) -> None:
        # cv2 releases the GIL while it reads and decodes, so this thread costs decoding only
        try:
            while not self._stop:
                ok, frame = self._cap.read()
                with self._cond:
                    if not ok or frame is None:
                        self._ended = True
                        self._cond.notify_all()
                        return
                    self._latest = (self._sent, time.monotonic(), frame)
                    self._sent += 1
                    self._cond.notify_all()
        finally:
            self._cap.release()

    def __iter__(self) -> Iterator[tuple[int, int, np.ndarray]]:
        last = -1
        while True:
            number, _, frame = self.next_frame(last)
            yield number, number - last - 1, frame
            last = number

    def next_frame(self, after: int = -1, since: float | None = None
                   ) -> tuple[int, float, np.ndarray]:
        """The newest frame numbered above ``after`` and decoded at ``since``
        (``time.monotonic``) or later, waiting for it: ``(frame number, when it was decoded,
        BGR frame)``. :class:`StreamError` when none comes for :attr:`stall_seconds` or the
        stream ends first. A table's camera check asks for a frame taken after the cards
        were placed, not the one decoded while the dealer's hand was still over them."""
        with self._cond:
            deadline = time.monotonic() + self.stall_seconds

            def fresh() -> bool:
                return self._latest is not None and self._latest[0] > after and (
                    since is None or self._latest[1] >= since)

            while not self._ended and not self._closed and not fresh():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StreamError(f"{redact(self.source)}: no frame for "
                                      f"{self.stall_seconds:g} s after {_frames(self._sent)}")
                self._cond.wait(left)
            if self._closed:
                raise StreamError(f"{redact(self.source)}: closed")
            if not fresh():  # ended, nothing new
                raise StreamError(f"{redact(self.source)}: the stream ended after "
                                  f"{_frames(self._sent)}")
            assert self._latest is not None
            return self._latest

    def close(self) -> None:
        """Stop decoding and release the camera: at once, or (a stalled camera) when its
        read times out, on the decoding thread, which is not waited for longer than a
        second. A reader waiting for a frame gets :class:`StreamError` at once."""
        with self._cond:
            self._stop = self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=1.0)

    def __enter__(self) -> LiveStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
