"""Card fusion: the shoe's cards, assigned to spots by dealing order, against the camera's
reading of each area of the layout.

The camera reports card codes per area (``seat3``, ``dealer``) after calibration has mapped each
card's centre to a spot; the shoe reports what it dealt. They must agree:

- a camera card that differs from the shoe's card at the same area is a disagreement;
- a camera card the shoe never dealt in this round is a card that was never dealt (brought in);
- a foreign card, or more copies of a card than the shoe's composition allows, on the layout;

each of these holds the round. A shoe card the camera could not read (covered, glare) is not a
problem by itself: it is recorded as unread, and surveillance sees both sources.

Where the camera could not read a card's code but is sure of its rank and colour
(:class:`CameraRankColour`, :mod:`vision.rankcolour`), those are checked too: a shoe card of
that rank and colour at the area is confirmed by them (recorded as ``"Q red"``), one of
another rank or colour where the shoe dealt one is a disagreement. A rank and colour of a card
the camera also read by its code at that area is that card again; one left with no shoe card
to compare is not taken for a card never dealt (the camera cannot tell it from a second look
at a card it read), only listed in :attr:`FusionResult.unmatched_rank_colour`.

    >>> cards = [{"position": 0, "spot": "seat1:1", "code": "7H"},
    ...          {"position": 1, "spot": "dealer:up", "code": "KS"}]
    >>> cross_check(cards, [CameraCard("7H", "seat1"), CameraCard("KD", "dealer")],
    ...             ShoeComposition.spanish(6)).problems
    ['shoe/camera disagreement at dealer: shoe KS, camera KD']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controller.cards import Card, CardCodeError, ShoeComposition


@dataclass(frozen=True)
class CameraCard:
    code: str
    area: str  # "seat3", "dealer"
    confidence: float = 1.0


@dataclass(frozen=True)
class CameraRankColour:
    """A card whose code the camera could not read, but whose rank and colour it could."""

    rank: str  # "Q"
    colour: str  # "red" or "black"
    area: str
    confidence: float = 1.0

    @property
    def label(self) -> str:
        """How the camera's reading is recorded: ``"Q red"``."""
        return f"{self.rank} {self.colour}"

    def fits(self, code: str) -> bool:
        """Whether card ``code`` has this rank and colour.

        >>> queen = CameraRankColour("Q", "red", "seat1")
        >>> queen.fits("QD"), queen.fits("QS")
        (True, False)
        """
        card = Card.parse(code)
        return card.rank_char == self.rank and ("red" if card.is_red else "black") == self.colour


@dataclass
class FusionResult:
    camera_by_position: dict[int, str | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: Ranks and colours the camera read where no shoe card was left to compare them with.
    unmatched_rank_colour: list[str] = field(default_factory=list)


def area_of(spot: str) -> str | None:
    """``seat3:2`` -> ``seat3``; ``dealer:hole`` -> ``dealer``; extras and burns: unknown."""
    if spot.startswith("seat") or spot.startswith("dealer"):
        return spot.split(":", 1)[0]
    return None


def cross_check(cards: Iterable[dict[str, Any]], camera: Iterable[CameraCard],
                shoe: ShoeComposition,
                rank_colour: Iterable[CameraRankColour] = ()) -> FusionResult:
    """The shoe's ``cards`` (position, spot, code) against the camera's codes and ranks and
    colours (module docstring).

    >>> cards = [{"position": 0, "spot": "seat1:1", "code": "QS"},
    ...          {"position": 1, "spot": "seat1:2", "code": "7H"}]
    >>> r = cross_check(cards, [CameraCard("7H", "seat1")], ShoeComposition.spanish(6),
    ...                 [CameraRankColour("Q", "black", "seat1")])
    >>> r.camera_by_position, r.problems
    ({0: 'Q black', 1: '7H'}, [])
    >>> cross_check(cards, [], ShoeComposition.spanish(6),
    ...             [CameraRankColour("K", "black", "seat1")]).problems
    ['shoe/camera disagreement at seat1: shoe QS, camera K black']
    """
    result = FusionResult()
    partial_by_area: dict[str, list[CameraRankColour]] = {}
    for rc in rank_colour:
        partial_by_area.setdefault(rc.area, []).append(rc)
    cards = list(cards)
    camera = list(camera)
    by_area: dict[str, list[dict[str, Any]]] = {}
    extras: Counter[str] = Counter()
    for c in cards:
        area = area_of(c["spot"])
        if area is None:
            extras[c["code"]] += 1
        else:
            by_area.setdefault(area, []).append(c)
        result.camera_by_position[c["position"]] = None

    seen: Counter[str] = Counter()
    cam_by_area: dict[str, list[str]] = {}
    for cc in camera:
        try:
            card = Card.parse(cc.code)
        except CardCodeError:
            result.problems.append(f"camera reports an unknown card code {cc.code!r}")
            continue
        if shoe.is_foreign(card):
            result.problems.append(f"foreign card {card.code} on the layout at {cc.area}")
        seen[card.code] += 1
        cam_by_area.setdefault(cc.area, []).append(card.code)
    for code, n in seen.items():
        if n > shoe.copies(Card.parse(code)) and shoe.copies(Card.parse(code)) > 0:
            result.problems.append(f"{n} copies of {code} on the layout; a {shoe.describe()} "
                                   f"holds {shoe.copies(Card.parse(code))}")

    for area in sorted(set(by_area) | set(cam_by_area) | set(partial_by_area)):
        shoe_cards = list(by_area.get(area, []))
        cam_codes = list(cam_by_area.get(area, []))
        # Exact matches first.
        for c in list(shoe_cards):
            if c["code"] in cam_codes:
                cam_codes.remove(c["code"])
                shoe_cards.remove(c)
                result.camera_by_position[c["position"]] = c["code"]
        # Camera cards dealt as later cards (hits) to this area are expected.
        for code in list(cam_codes):
            if extras[code] > 0:
                extras[code] -= 1
                cam_codes.remove(code)
        # A rank and colour the camera also read by code here is that card again; then the
        # shoe's cards and hits they fit are confirmed by them.
        partial = [p for p in partial_by_area.get(area, [])
                   if not any(p.fits(code) for code in cam_by_area.get(area, []))]
        for c in list(shoe_cards):
            fit = next((p for p in partial if p.fits(c["code"])), None)
            if fit is not None:
                partial.remove(fit)
                shoe_cards.remove(c)
                result.camera_by_position[c["position"]] = fit.label
        for p in list(partial):
            code = next((k for k, n in extras.items() if n > 0 and p.fits(k)), None)
            if code is not None:
                extras[code] -= 1
                partial.remove(p)
        # What is left: a different card where the shoe dealt one, or one never dealt.
        for c, code in zip(shoe_cards, cam_codes, strict=False):
            result.camera_by_position[c["position"]] = code
            result.problems.append(f"shoe/camera disagreement at {area}: shoe {c['code']}, "
                                   f"camera {code}")
        for code in cam_codes[len(shoe_cards):]:
            result.problems.append(f"card {code} at {area} was never dealt from the shoe")
        for c, p in zip(shoe_cards[len(cam_codes):], partial, strict=False):
            result.camera_by_position[c["position"]] = p.label
            result.problems.append(f"shoe/camera disagreement at {area}: shoe {c['code']}, "
                                   f"camera {p.label}")
        result.unmatched_rank_colour += [
            f"{p.label} at {area}" for p in partial[max(len(shoe_cards) - len(cam_codes), 0):]]
    return result
