"""Place hands, not single cards: a long hand's end card that strays toward the next spot.

Each card first goes to the spot nearest its centre on the layout
(:meth:`vision.calibration.TableCalibration.spot_at`). A hand of five or six cards (Spanish 21
hits) is long, and its end card can lie nearer the next seat's spot than its own; the controller
then sees a card at a seat that was not dealt one, and holds the round. A dealer keeps each
hand around its own spot, so a spot's cards include one near the spot; the stray end of
another hand does not: it lies past the midpoint between the spots, and touches its own hand.

The rule, on layout millimetres:

* two cards *touch* when their centres lie within one card height (a hand's cards overlap, or
  lie side by side);
* a *piece* is a set of touching cards nearest the same spot;
* a piece is *anchored* when one of its cards lies within ``anchor_share`` of half the distance
  from its spot to the nearest other spot (0.8: 66 mm at seats 165 mm apart);
* a piece that is not anchored, and touches anchored pieces of exactly one other spot, goes to
  that spot (when all its cards lie within ``max_distance`` of it); every other card keeps its
  nearest spot. So two hands that touch stay apart (both are anchored), and a stray card that
  touches two hands, or none, stays where it lies: the controller's cross-check holds the
  round for it, as before.

    >>> spots = {"seat1": (0.0, 0.0), "seat2": (165.0, 0.0)}
    >>> centres = [(-40.0, 0.0), (-10.0, 0.0), (20.0, 0.0), (50.0, 0.0), (85.0, 0.0)]
    >>> nearest = ["seat1", "seat1", "seat1", "seat1", "seat2"]  # the end card is past 82.5
    >>> hand_spots(centres, nearest, spots, link_mm=88.9, max_distance=150.0)[-1]
    'seat1'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from vision.components import component_labels

#: A piece is anchored when a card lies within this share of half the way to the next spot.
ANCHOR_SHARE = 0.8


def _anchor_radii(spots: Mapping[str, tuple[float, float]], share: float) -> dict[str, float]:
    """Each spot's anchoring radius (millimetres); unbounded for a spot without neighbours."""
    points = {name: np.asarray(xy[:2], np.float64) for name, xy in spots.items()}
    radii = {}
    for name, p in points.items():
        gaps = [float(np.linalg.norm(p - q)) for other, q in points.items() if other != name]
        radii[name] = share * 0.5 * min(gaps) if gaps else float("inf")
    return radii


def _pieces(touch: np.ndarray, nearest: Sequence[str | None]) -> list[int]:
    """Each card's piece (a representative card's index): union of touching cards that share
    a nearest spot; cards off the layout are each a piece of their own."""
    return component_labels(len(nearest), (
        (i, j) for i, j in zip(*np.nonzero(np.triu(touch, 1)), strict=True)
        if nearest[i] is not None and nearest[i] == nearest[j]))


def hand_spots(centres: Sequence[Sequence[float]], nearest: Sequence[str | None],
               spots: Mapping[str, Sequence[float]], link_mm: float, max_distance: float,
               anchor_share: float | None = None) -> list[str | None]:
    """Every card's spot with stray hand ends moved to their hand's spot (module docstring).

    ``centres``: the cards' centres in layout millimetres; ``nearest``: each card's nearest
    spot (``None`` off the layout); ``spots``: spot name -> layout position; ``link_mm``: the
    distance within which two cards touch (a card height); ``anchor_share``:
    :data:`ANCHOR_SHARE` unless given.
    """
    n = len(nearest)
    out = list(nearest)
    if n < 2:
        return out
    c = np.asarray(centres, np.float64).reshape(n, 2)
    touch = np.linalg.norm(c[:, None] - c[None], axis=2) <= link_mm
    piece = _pieces(touch, nearest)
    where = {name: np.asarray(xy[:2], np.float64) for name, xy in spots.items()}
    radii = _anchor_radii(spots, ANCHOR_SHARE if anchor_share is None else anchor_share)
    anchored: dict[int, bool] = {}
    for i, spot in enumerate(nearest):
        if spot is not None:
            near = float(np.linalg.norm(c[i] - where[spot])) <= radii[spot]
            anchored[piece[i]] = anchored.get(piece[i], False) or near
    for p, is_anchored in anchored.items():
        if is_anchored:
            continue
        members = [i for i in range(n) if piece[i] == p]
        others = {nearest[j] for i in members for j in np.nonzero(touch[i])[0]
                  if nearest[j] not in (None, nearest[i]) and anchored[piece[j]]}
        if len(others) != 1:
            continue
        (other,) = others
        if all(float(np.linalg.norm(c[i] - where[other])) <= max_distance for i in members):
            for i in members:
                out[i] = other
    return out
