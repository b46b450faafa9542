"""Frames of a recorded video (a surveillance clip, a lab's footage of a table), read with
OpenCV's FFmpeg backend (in the ``opencv-python-headless`` wheel; nothing else to install).

:func:`video_frames` yields every ``every``-th frame with its number, in order. A file that is
not a video it can open, or one that ends before the frame count its container states (a
truncated or damaged recording), raises :class:`VideoError` with the reason (after the frames
it could read), so a caller reports the frames it has and then the error.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # OpenCV and numpy load when a video is read, not when a command starts
    import numpy as np

#: File name endings read as videos (any other file is an image).
VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".mov", ".m4v", ".webm", ".mpg", ".mpeg", ".ts")


class VideoError(ValueError):
    """A video that cannot be opened, or that ends early."""


def is_video(path: str | Path) -> bool:
    """Whether ``path`` names a video by its ending.

    >>> is_video("shift3/table2.MP4"), is_video("frame.jpg")
    (True, False)
    """
    return Path(path).suffix.lower() in VIDEO_SUFFIXES


def frame_count(path: str | Path) -> int:
    """The frame count the container states (0 if it states none or cannot be opened)."""
    import cv2

    cap = cv2.VideoCapture(str(path))
    try:
        return max(int(cap.get(cv2.CAP_PROP_FRAME_COUNT)), 0) if cap.isOpened() else 0
    finally:
        cap.release()


def video_frames(path: str | Path, every: int = 1) -> Iterator[tuple[int, np.ndarray]]:
    """``(frame number, BGR frame)`` for every ``every``-th frame of the video at ``path``
    (frames between are grabbed, not decoded). Raises :class:`VideoError` for a file it cannot
    open or decode, or when the video ends more than one frame short of its stated count."""
    import cv2

    if every < 1:
        raise ValueError("every must be at least 1")
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        raise VideoError(f"{path}: not a video that can be read")
    stated = max(int(cap.get(cv2.CAP_PROP_FRAME_COUNT)), 0)
    n = 0
    try:
        while cap.grab():
            if n % every == 0:
                ok, frame = cap.retrieve()
                if not ok or frame is None:
                    raise VideoError(f"{path}: frame {n} could not be decoded")
                yield n, frame
            n += 1
    finally:
        cap.release()
    if n == 0:
        raise VideoError(f"{path}: no frame could be read")
    # a container's count may be an estimate off by one; a shorter video is damaged
    if stated and n < stated - 1:
        raise VideoError(f"{path}: ends after {n} of its {stated} frames (truncated or damaged)")
