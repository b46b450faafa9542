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
              hit_areas: Mapping[int, str] | None = None) -> dict[str, list[str]]:
    """Each area's cards in dealing order, from a round's cards (``spot``, ``code``,
    ``position``): the hole card face down until ``hole_up``; no burn card; a card dealt
    after the first ones (``"extra"``) in the area ``hit_areas`` gives for its position,
    left out where it gives none (the record does not say where a hit went).

    >>> cards = [{"position": i, "spot": s, "code": c} for i, (s, c) in enumerate([
    ...     ("burn", "9S"), ("seat1:1", "QH"), ("dealer:up", "7C"), ("seat1:2", "QD"),
    ...     ("dealer:hole", "2S"), ("extra", "5H")])]
    >>> layout_of(cards, hole_up=False)
    {'seat1': ['QH', 'QD'], 'dealer': ['7C', 'XX']}
    >>> layout_of(cards, hole_up=True, hit_areas={5: "seat1"})
    {'seat1': ['QH', 'QD', '5H'], 'dealer': ['7C', '2S']}
    """
    out: dict[str, list[str]] = {}
    for c in cards:
        spot = c["spot"]
        if spot == "burn":
            continue
        if spot == "extra":
            area = (hit_areas or {}).get(c["position"])
            if area is None:
                continue
        else:
            area = spot.split(":")[0]
        code = c["code"] if (spot != "dealer:hole" or hole_up) else FACE_DOWN
        out.setdefault(area, []).append(code)
    return out


def hits_in_turn(cards: Iterable[Mapping[str, Any]], dealt_in: Iterable[int],
                 dealt_before_reveal: int | None) -> dict[int, str]:
    """Where a camera drawn from the record alone (``camera-sim --table``) puts the hits,
    which the record keeps without a place (a shoe does not know where a card goes): each
    card dealt after the first ones (``"extra"``) while the hole card was down goes to the
    seats dealt in, in seat order and round again, as a dealer serves hits; one dealt when
    the hole card was up (its position ``dealt_before_reveal`` or later, the cards dealt
    before the reveal; ``None`` before it) to the dealer, who draws last.

    >>> cards = [{"position": i, "spot": s} for i, s in enumerate([
    ...     "seat1:1", "seat4:1", "dealer:up", "seat1:2", "seat4:2", "dealer:hole",
    ...     "extra", "extra", "extra", "extra"])]
    >>> hits_in_turn(cards, [4, 1], dealt_before_reveal=9)
    {6: 'seat1', 7: 'seat4', 8: 'seat1', 9: 'dealer'}
    >>> hits_in_turn(cards, [], dealt_before_reveal=None)
    {}
    """
    seats = sorted(dealt_in)
    areas: dict[int, str] = {}
    served = 0
    for c in cards:
        if c["spot"] != "extra":
            continue
        position = int(c["position"])
        if dealt_before_reveal is not None and position >= dealt_before_reveal:
            areas[position] = "dealer"
        elif seats:
            areas[position] = f"seat{seats[served % len(seats)]}"
            served += 1
    return areas
