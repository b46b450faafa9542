"""Which files in a directory are images: one list for every command that searches one.

``recognize DIR``, ``vision-eval DIR`` and ``enroll-deck DECK_DIR`` once kept three lists, and
``vision-eval`` skipped the BMP, WebP and TIFF frames ``recognize`` read (a lab's suite is
often TIFF, a scanned deck too). They are the formats OpenCV decodes with its own codecs
(:func:`vision.recognize.load_image`), 16-bit ones made 8-bit.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

IMAGE_SUFFIXES: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


def files_in(directory: Path, suffixes: Iterable[str] = IMAGE_SUFFIXES,
             recursive: bool = False) -> list[Path]:
    """The files in ``directory`` whose suffix (any case) is one of ``suffixes``, sorted by
    their path below it; with ``recursive``, in its subdirectories too (hidden ones, such as
    ``.git``, left out, as are hidden files; a link to a directory is not followed, so a
    link back up cannot loop).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for name in ("b.JPG", "a.tif", "notes.txt", "glare/c.png", ".cache/d.png", "e/.f.png"):
    ...     (root / name).parent.mkdir(exist_ok=True)
    ...     (root / name).touch()
    >>> [p.relative_to(root).as_posix() for p in files_in(root)]
    ['a.tif', 'b.JPG']
    >>> (root / "glare" / "up").symlink_to(root)          # a loop, were it followed
    >>> [p.relative_to(root).as_posix() for p in files_in(root, recursive=True)]
    ['a.tif', 'b.JPG', 'glare/c.png']
    """
    wanted = {s.lower() for s in suffixes}
    found = directory.rglob("*") if recursive else directory.iterdir()
    return sorted((p for p in found
                   if p.suffix.lower() in wanted and p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(directory).parts)),
                  key=lambda p: p.relative_to(directory).parts)
