"""What lies on the layout: a round's dealt cards by area, as a camera over the table sees them.

The demo's simulated camera draws it for each check, and ``camera-sim --table`` draws it for a
live table run on simulators, so the camera shows what the shoe dealt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: The code a face-down card is drawn with (:func:`vision.synth.render_table`).
FACE_DOWN = "XX"


def layout_of(cards: Iterable[Mapping[str, Any]], hole_up: bool,
              hit_seats: Mapping[int, int] | None = None) -> dict[str, list[str]]:
    """Each area's cards in dealing order, from a round's cards (``spot``, ``code``,
    ``position``): the hole card face down until ``hole_up``; no burn card; a card dealt
    after the first ones (``"extra"``) in the seat ``hit_seats`` gives for its position,
    left out where it gives none (the record does not say where a hit went).

    >>> cards = [{"position": i, "spot": s, "code": c} for i, (s, c) in enumerate([
    ...     ("burn", "9S"), ("seat1:1", "QH"), ("dealer:up", "7C"), ("seat1:2", "QD"),
    ...     ("dealer:hole", "2S"), ("extra", "5H")])]
    >>> layout_of(cards, hole_up=False)
    {'seat1': ['QH', 'QD'], 'dealer': ['7C', 'XX']}
    >>> layout_of(cards, hole_up=True, hit_seats={5: 1})
    {'seat1': ['QH', 'QD', '5H'], 'dealer': ['7C', '2S']}
    """
    out: dict[str, list[str]] = {}
    for c in cards:
        spot = c["spot"]
        if spot == "burn":
            continue
        if spot == "extra":
            seat = (hit_seats or {}).get(c["position"])
            if seat is None:
                continue
            area = f"seat{seat}"
        else:
            area = spot.split(":")[0]
        code = c["code"] if (spot != "dealer:hole" or hole_up) else FACE_DOWN
        out.setdefault(area, []).append(code)
    return out

