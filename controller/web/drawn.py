"""Kept camera frames drawn with what the camera read on them, for the surveillance console
(``/frames/NAME/drawn``).

A surveillance officer questioning a reading wants to see it, not a list of codes: the kept
frame is read again by the table's reader (the very model that read it, or the drawing is
refused) and drawn with the cards read (:mod:`vision.annotate`), and under the headline what the
record holds, naming any recorded code the frame does not bear out. A frame altered or missing
since it was read is not drawn: a drawing of another picture would vouch for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.books import camera_reader, card_spots, reading_of_frame
from controller.reread import Rereader, RereadRefused
from controller.service import TableService

__all__ = ["DrawnFrame", "DrawnFrames", "RereadRefused"]


@dataclass(frozen=True)
class DrawnFrame:
    """One reading drawn: the JPEG, its frame's name and what the record holds of it."""

    jpeg: bytes
    frame: str  # the reading's first frame, the one drawn
    round_id: int
    recorded: list[str]
    unread: list[str]
    areas: list[str]  # the layout area of each recorded card (``seat1``, ``dealer``, ``hit``)


class DrawnFrames:
    """Readings drawn on their kept frames in ``frames_dir``, by the table's reader (loaded on
    the first drawing)."""

    def __init__(self, service: TableService, frames_dir: Path) -> None:
        self.service = service
        self.rereader = Rereader(service.cfg, frames_dir)

    def draw(self, name: str) -> DrawnFrame:
        """The last reading that read the kept frame ``name`` (any frame of a burst) drawn on
        its first frame: :class:`LookupError` where no reading names it,
        :class:`RereadRefused` where it is not read again (a frame altered or missing, another
        reader)."""
        from vision.annotate import encode

        with self.service.lock:  # the record is read under the table's lock, then let go
            found = reading_of_frame(self.service.store, name)
            if found is None:
                raise LookupError(f"no camera reading in the record names the frame {name}")
            round_id, reading = found
            reader = camera_reader(self.service.store, round_id)
            spots = card_spots(self.service.store, round_id)
        again = self.rereader.reread(round_id, reading, reader, spots)
        return DrawnFrame(encode(again.drawing()), again.frames[0], round_id, again.recorded,
                          again.unread, again.areas)
