"""A deck as a directory of card images: how a casino hands its own design to the system.

    house_deck/
        AS.png  2S.png ... TS.png ... KD.png   # the 52 faces, named by card code
        back.png                                # one back or more: back.png, back-2.png, ...

File names are card codes as everywhere else (``QH``, ``TS``; ``10S`` is taken for ``TS``,
case does not matter), images PNG, JPEG, WebP, BMP or TIFF, 8 or 16 bits
(:data:`vision.imagefiles.IMAGE_SUFFIXES`). Each image is one whole card, upright (an
index corner top left), cropped to its edge, scanned or photographed square-on. An image with
an alpha channel keeps it (rounded corners drawn transparent); any other gets rounded corners
of 6 % of its width. Hearts and diamonds must be in colour (:mod:`vision.frames`: the reader
takes part of a suit from its ink); a black-suit face or a back may be scanned grey. Every
card is resized to :data:`vision.designs.CARD_WIDTH` pixels wide at the faces' median height,
as the aisleriot designs are. Design name ``deck:<directory>``
(:func:`vision.designs.get_design`) renders it in scenes like any other design.

    >>> import tempfile
    >>> from vision.designs import get_design
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_deck_dir(get_design("proc:1:3"), folder)
    53
    >>> deck = load_deck_dir(folder)
    >>> len(deck.faces), len(deck.backs), deck.size[0]
    (52, 1, 160)
    >>> (folder / "QH.png").unlink()
    >>> load_deck_dir(folder)
    Traceback (most recent call last):
    ...
    vision.deckdir.DeckError: ...: 1 face missing: QH
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision.codes import CARD_CODES
from vision.designs import CARD_WIDTH, CardDesign
from vision.frames import has_colour
from vision.imagefiles import IMAGE_SUFFIXES

#: Corner radius given to images without an alpha channel, a share of the card width (real
#: decks: 3-4 mm on 63 mm).
CORNER_RADIUS = 0.06
#: Faces whose height/width differs from the median by more than this share are refused: an
#: image not cropped to the card's edge, or turned sideways.
ASPECT_TOLERANCE = 0.05


class DeckError(ValueError):
    """A deck directory that cannot make a design; the message says what to fix."""


def _code(stem: str) -> str | None:
    """The card code a file stem names, or None (``10s`` -> ``TS``)."""
    s = stem.strip().upper()
    if s.startswith("10"):
        s = "T" + s[2:]
    return s if s in CARD_CODES else None


def _read(path: Path) -> np.ndarray:
    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if img is None or img.ndim not in (2, 3) or min(img.shape[:2]) < 16:
        raise DeckError(f"{path}: not a readable card image")
    if img.dtype == np.uint16:  # 16-bit scans, before an alpha channel is made for them
        img = (img / 257.0).round().astype(np.uint8)
    elif img.dtype != np.uint8:
        raise DeckError(f"{path}: {img.dtype} pixels; expected 8 or 16 bits")
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.shape[2] == 3:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
        h, w = img.shape[:2]
        mask = np.zeros((h, w), np.uint8)
        r = max(1, int(round(CORNER_RADIUS * w)))
        cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
        cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
        for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
            cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
        img[..., 3] = mask
    elif img.shape[2] != 4:
        raise DeckError(f"{path}: {img.shape[2]} channels; expected grey, BGR or BGRA")
    return img


def load_deck_dir(directory: Path) -> CardDesign:
    """The design in ``directory`` (module docstring); :class:`DeckError` names what is wrong."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DeckError(f"{directory}: not a directory")
    faces: dict[str, Path] = {}
    backs: list[Path] = []
    for path in sorted(directory.iterdir()):
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        if path.stem.lower().startswith("back"):
            backs.append(path)
            continue
        code = _code(path.stem)
        if code is None:
            raise DeckError(f"{path}: the name is not a card code (AS, TD, QH, ...) or back*")
        if code in faces:
            raise DeckError(f"{directory}: {code} twice ({faces[code].name}, {path.name})")
        faces[code] = path
    missing = [c for c in CARD_CODES if c not in faces]
    if missing:
        raise DeckError(f"{directory}: {len(missing)} face{'s' * (len(missing) > 1)} missing: "
                        f"{', '.join(missing)}")
    if not backs:
        raise DeckError(f"{directory}: no back image (back.png): face-down cards need one")
    images = {code: _read(faces[code]) for code in CARD_CODES}
    aspects = {code: img.shape[0] / img.shape[1] for code, img in images.items()}
    median = float(np.median(list(aspects.values())))
    odd = [c for c, a in aspects.items() if abs(a / median - 1) > ASPECT_TOLERANCE]
    if odd:
        raise DeckError(f"{directory}: {', '.join(odd)} not the shape of the other faces "
                        f"(height/width {median:.3f}): crop each image to the card's edge")
    grey = [c for c in CARD_CODES if c[1] in "HD" and not has_colour(images[c][..., :3])]
    if grey:
        raise DeckError(f"{directory}: {', '.join(grey)} show no colour (scanned in greyscale?): "
                        "scan hearts and diamonds in colour, the reader tells them from spades "
                        "and clubs partly by their red ink")
    size = (CARD_WIDTH, int(round(CARD_WIDTH * median)))
    back_images = []
    for path in backs:
        img = _read(path)
        if abs(img.shape[0] / img.shape[1] / median - 1) > ASPECT_TOLERANCE:
            raise DeckError(f"{path}: not the shape of the faces (height/width {median:.3f})")
        back_images.append(cv2.resize(img, size, interpolation=cv2.INTER_AREA))
    return CardDesign(
        name=f"deck:{directory}",
        faces={c: cv2.resize(img, size, interpolation=cv2.INTER_AREA)
               for c, img in images.items()},
        backs=back_images)


def write_deck_dir(design: CardDesign, directory: Path) -> int:
    """Write ``design`` as a deck directory (PNG with alpha); returns the number of images."""
    directory.mkdir(parents=True, exist_ok=True)
    for code, img in design.faces.items():
        cv2.imwrite(str(directory / f"{code}.png"), img)
    for k, img in enumerate(design.backs):
        cv2.imwrite(str(directory / ("back.png" if k == 0 else f"back-{k + 1}.png")), img)
    return len(design.faces) + len(design.backs)
