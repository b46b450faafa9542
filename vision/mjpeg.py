"""A simulated IP camera speaking the bytes real ones do: JPEG frames as an HTTP
``multipart/x-mixed-replace`` stream (MJPEG), on a local port. What `vision.stream` reads in
the tests and in ``benchmarks/live_camera.py``, the live table's camera in its tests, and what
``monster-match camera-sim`` serves; a real camera sends the same bytes."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class MjpegCamera:
    """Serves ``jpegs`` in a loop at ``fps`` (paced on the clock) to each client of
    :attr:`url`; with ``frames``, each connection gets that many and then, after
    ``hold_seconds`` without a frame, is closed. :attr:`sent` holds when
    (``time.perf_counter``) each frame of the latest connection went out (unless not
    ``keep_times``), :attr:`frames_sent` how many went to all of them. ``credentials``
    (``"user:password"``) only go into the URL, as cameras are often addressed: they are not
    checked. It listens on ``host`` at ``port`` (0: any free port). Use as a context manager,
    or :meth:`close` it."""

    def __init__(self, jpegs: list[bytes], fps: float, frames: int | None = None,
                 hold_seconds: float = 0.0, credentials: str | None = None,
                 host: str = "127.0.0.1", port: int = 0, keep_times: bool = True) -> None:
        if not jpegs:
            raise ValueError("a camera shows at least one frame")
        self.sent: list[float] = []
        #: Frames sent to every client since the camera started.
        self.frames_sent = 0
        self.jpegs = list(jpegs)
        #: Clear while :meth:`pause` holds the frames back (set again by :meth:`show`).
        self._sending = threading.Event()
        self._sending.set()
        camera = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=frame")
                self.end_headers()
                camera.sent = []
                start = time.perf_counter()
                k = 0
                try:
                    while frames is None or k < frames:
                        if not camera._sending.is_set():  # paused: frames come late
                            camera._sending.wait()
                            start = time.perf_counter() - k / fps  # no burst of the missed
                        shown = camera.jpegs  # (one read: show() may swap the list)
                        jpeg = shown[k % len(shown)]
                        self.wfile.write(b"--frame\r\nContent-Type: image/jpeg\r\n"
                                         b"Content-Length: %d\r\n\r\n" % len(jpeg) + jpeg
                                         + b"\r\n")
                        if keep_times:  # (not for a camera left running for hours)
                            camera.sent.append(time.perf_counter())
                        camera.frames_sent += 1
                        k += 1
                        # paced on the clock, not by sleeps that add up
                        time.sleep(max(0.0, start + k / fps - time.perf_counter()))
                    time.sleep(hold_seconds)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the reader left

            def log_message(self, *args: object) -> None:
                pass  # no access log on stderr

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        login = f"{credentials}@" if credentials else ""
        self.url = f"http://{login}{host}:{self.server.server_port}/video.mjpg"

    def show(self, jpegs: list[bytes]) -> None:
        """Send ``jpegs`` (in a loop) from the next frame on: what the camera sees changed."""
        if not jpegs:
            raise ValueError("a camera shows at least one frame")
        self.jpegs = list(jpegs)
        self._sending.set()

    def pause(self) -> None:
        """Send nothing until the next :meth:`show`: a simulator that takes a while to draw
        what the camera now sees pauses first, so that the frames of that while come late,
        as a real camera's would, and not on time showing the table as it was (a check
        that waits for a frame from after the deal would read the cards of before it)."""
        self._sending.clear()

    def close(self) -> None:
        self._sending.set()  # (a paused connection's thread ends with the server)
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> MjpegCamera:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
