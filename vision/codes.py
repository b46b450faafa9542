"""The classifier's label set: the 52 card codes, then ``face_down`` and ``reject``."""

from __future__ import annotations

RANKS = "A23456789TJQK"
SUITS = "SHDC"
CARD_CODES: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)
FACE_DOWN = "face_down"
REJECT = "reject"
CLASSES: tuple[str, ...] = (*CARD_CODES, FACE_DOWN, REJECT)
CLASS_INDEX: dict[str, int] = {name: i for i, name in enumerate(CLASSES)}
FACE_DOWN_INDEX = CLASS_INDEX[FACE_DOWN]
REJECT_INDEX = CLASS_INDEX[REJECT]


def is_card_code(code: str) -> bool:
    """True for one of the 52 codes such as ``"QH"`` or ``"TS"``."""
    return code in CLASS_INDEX and CLASS_INDEX[code] < 52
