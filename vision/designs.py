"""Card designs for the synthetic scenes: aisleriot sheets and procedurally drawn decks.

A :class:`CardDesign` holds one RGBA image per card code plus one or more card backs, all the
same size. Aisleriot designs come from Debian's ``gnome-cards-data`` (``*.svgz`` sheets of 13
columns by 5 rows: clubs, diamonds, hearts, spades, then jokers and backs), rasterised once with
``rsvg-convert`` into a cache directory (``$MONSTER_MATCH_CACHE`` or ``~/.cache/monster-match``).
Procedural designs are drawn with OpenCV from a family number and a seed (see
:mod:`vision.procedural`).

Which designs train the model and which are kept out for validation is fixed here, so that
the training script, the benchmark and the model card agree.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.codes import CARD_CODES

AISLERIOT_DIR = Path("/usr/share/aisleriot/cards")

#: Aisleriot designs with English indices (A, K, Q, J, 10) in two colours, used for training.
TRAIN_AISLERIOT: tuple[str, ...] = (
    "anglo", "anglo_bitmap", "anglo_modern", "anglo_poker", "bellot", "dondorf", "gnomangelo",
    "gnomangelo_bitmap", "orell", "ornamental", "paris", "simplistic", "tango",
)
#: Training designs of the data made before 2026-11-30 (fourth session), with ``tango_nuevo``:
#: kept so that the commands in the model cards of ``cards_v1``..``cards_v3`` still draw the
#: same scenes (:func:`vision.train.training_designs` with ``legacy_designs``).
LEGACY_TRAIN_AISLERIOT: tuple[str, ...] = (*TRAIN_AISLERIOT, "tango_nuevo")
#: Aisleriot designs never seen in training: the validation set.
VAL_AISLERIOT: tuple[str, ...] = ("plastic", "tigullio", "neoclassical")
#: Left out entirely: foreign indices (R/D/V, B/D/K, Cyrillic), Swiss suits, four-colour packs,
#: court cards without an index, or no full index in the corners (``tango_nuevo``: the rank
#: alone in one corner, the suit only as a large pip beside it, nothing in the other corner;
#: no index-corner reader can name its cards, and in training its corners taught the reader
#: to guess the suit: on 380 calibration frames cards_v3 found 1.4 % of its cards).
EXCLUDED_AISLERIOT: tuple[str, ...] = (
    "ancient_french", "tango_nuevo", "anglo_modern_4_color", "atlasnye", "atlasnye_skat", "berlin",
    "guyenne-classic", "lattmann", "neoclassical_4_color", "rheinland", "slavic_costumes",
    "swiss-xvii", "tarocco", "Атласные",
)

#: Back cells (row 4) per design; everything else uses column 2.
_BACK_COLUMNS: dict[str, tuple[int, ...]] = {"ornamental": (2, 3), "tango": (2, 3)}
_SUIT_ROWS = "CDHS"  # sheet row order: clubs, diamonds, hearts, spades
_RANK_COLUMNS = "A23456789TJQK"

#: Card width in pixels at which designs are held in memory.
CARD_WIDTH = 160


@dataclass
class CardDesign:
    """One deck: ``faces[code]`` and ``backs`` are RGBA ``uint8`` images of identical size."""

    name: str
    faces: dict[str, np.ndarray]
    backs: list[np.ndarray] = field(default_factory=list)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of every card image in pixels."""
        h, w = next(iter(self.faces.values())).shape[:2]
        return w, h


def cache_dir() -> Path:
    """Directory for rasterised sheets (created on demand)."""
    root = os.environ.get("MONSTER_MATCH_CACHE") or Path.home() / ".cache" / "monster-match"
    path = Path(root) / "aisleriot"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _rasterise_sheet(name: str, width: int) -> Path:
    """Render ``name``'s sheet to PNG once, ``width`` pixels wide; return the PNG path."""
    out = cache_dir() / f"{name}-{width}.png"
    if out.exists():
        return out
    src = AISLERIOT_DIR / f"{name}.svgz"
    if not src.exists():
        raise FileNotFoundError(f"aisleriot design {name!r} not found at {src}")
    if shutil.which("rsvg-convert") is None:
        raise RuntimeError("rsvg-convert is needed to rasterise aisleriot designs "
                           "(apt-get install librsvg2-bin)")
    svg = out.with_suffix(".svg")
    svg.write_bytes(gzip.decompress(src.read_bytes()))
    tmp = out.with_suffix(".tmp.png")
    subprocess.run(["rsvg-convert", "-w", str(width), str(svg), "-o", str(tmp)], check=True)
    svg.unlink()
    tmp.rename(out)
    return out


def _cell(sheet: np.ndarray, row: int, col: int) -> np.ndarray:
    h, w = sheet.shape[:2]
    ch, cw = h / 5.0, w / 13.0
    cell = sheet[int(round(row * ch)):int(round((row + 1) * ch)),
                 int(round(col * cw)):int(round((col + 1) * cw))]
    alpha = cell[..., 3]
    ys, xs = np.nonzero(alpha > 40)
    if len(xs) == 0:
        return cell
    return cell[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def load_aisleriot(name: str, card_width: int = CARD_WIDTH) -> CardDesign:
    """Load one aisleriot design, every card resized to ``card_width`` pixels wide."""
    sheet_path = _rasterise_sheet(name, card_width * 13 + 13)
    sheet = cv2.imread(str(sheet_path), cv2.IMREAD_UNCHANGED)
    if sheet is None or sheet.ndim != 3 or sheet.shape[2] != 4:
        raise RuntimeError(f"could not read rasterised sheet {sheet_path}")
    cells: dict[str, np.ndarray] = {}
    for row, suit in enumerate(_SUIT_ROWS):
        for col, rank in enumerate(_RANK_COLUMNS):
            cells[rank + suit] = _cell(sheet, row, col)
    backs_raw = [_cell(sheet, 4, c) for c in _BACK_COLUMNS.get(name, (2,))]
    heights = sorted(c.shape[0] * card_width / c.shape[1] for c in cells.values())
    card_h = int(round(heights[len(heights) // 2]))
    size = (card_width, card_h)
    faces = {code: cv2.resize(cells[code], size, interpolation=cv2.INTER_AREA)
             for code in CARD_CODES}
    backs = [cv2.resize(b, size, interpolation=cv2.INTER_AREA) for b in backs_raw]
    return CardDesign(name=name, faces=faces, backs=backs)


_DESIGN_CACHE: dict[str, CardDesign] = {}


def get_design(name: str) -> CardDesign:
    """A design by name: an aisleriot name, ``proc:<family>:<seed>`` for a procedural deck
    (``proc:<family>:<seed>:suits`` with suit symbols of its own proportions), or
    ``deck:<directory>`` for a deck directory (:mod:`vision.deckdir`, a house deck)."""
    if name not in _DESIGN_CACHE:
        if name.startswith("deck:"):
            from vision.deckdir import load_deck_dir

            _DESIGN_CACHE[name] = load_deck_dir(Path(name[len("deck:"):]))
        elif name.startswith("proc:"):
            from vision.procedural import procedural_design

            _, family, seed, *rest = name.split(":")
            if rest not in ([], ["suits"]):
                raise ValueError(f"unknown procedural design {name!r}")
            _DESIGN_CACHE[name] = procedural_design(int(family), int(seed),
                                                    varied_suits=rest == ["suits"])
        else:
            _DESIGN_CACHE[name] = load_aisleriot(name)
    return _DESIGN_CACHE[name]
