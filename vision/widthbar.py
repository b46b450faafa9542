"""An operating threshold that depends on the card's size in the frame.

A reader's confidence does not mean the same on every card: a misread is far likelier on a
small card, whose index glyphs span a few pixels, than on a large one at the same
confidence. On the saved reads of 19 held-out sweeps (``models/cards_v7.md``, sixty-second
session) 24 % of the 104 misreads at 0.997 lay on cards under 45 px wide against 10.5 % of
the right reads, and 8 % on cards 80 px or wider against 20 %. One flat threshold is then too
strict for large cards and too lax for small ones: holding each size to the threshold at
which its misreads cost the same right reads reads more cards for the same misreads.

A reader's ``.json`` names the steps as ``"threshold_by_width"``: ``[[0, 0.999], [45,
0.997], ...]``, each a width in pixels (the shorter side of the reported card) from which
a threshold holds, the first from 0, widths increasing and thresholds not (a larger card
is never held higher). :meth:`vision.recognize.Recognizer.merge` then keeps a card only at
the threshold of its width (:func:`vision.merge.merge_own`).

>>> steps = WidthSteps.parse([[0, 0.999], [45, 0.997], [80, 0.993]])
>>> steps.at(30.0), steps.at(45.0), steps.at(79.9), steps.at(200.0)
(0.999, 0.997, 0.997, 0.993)
>>> steps.lowest, steps.at_least(0.998).at(100.0)
(0.993, 0.998)
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class WidthSteps:
    """Thresholds by card width: ``widths[i]`` (pixels, the first 0) is where
    ``thresholds[i]`` starts to hold."""

    widths: tuple[float, ...]
    thresholds: tuple[float, ...]

    @classmethod
    def parse(cls, steps: object, where: str = "threshold_by_width") -> WidthSteps:
        """Steps from a ``.json``'s list of ``[width, threshold]`` pairs; ``ValueError``
        naming ``where`` for anything else.

        >>> WidthSteps.parse([[0, 0.99], [50, 0.995]])
        Traceback (most recent call last):
        ...
        ValueError: threshold_by_width: thresholds must not rise with width, not [0.99, 0.995]
        """
        if (not isinstance(steps, list) or not steps
                or not all(isinstance(s, list) and len(s) == 2 for s in steps)
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                           for s in steps for v in s)):
            raise ValueError(f"{where}: must be a list of [width, threshold] pairs, not "
                             f"{steps!r}")
        widths = [float(w) for w, _ in steps]
        thresholds = [float(t) for _, t in steps]
        if widths[0] != 0 or any(b <= a for a, b in zip(widths, widths[1:], strict=False)):
            raise ValueError(f"{where}: widths must start at 0 and increase, not {widths}")
        if not all(0.5 <= t <= 1.0 for t in thresholds):
            raise ValueError(f"{where}: thresholds must be probabilities from 0.5 to 1, "
                             f"not {thresholds}")
        if any(b > a for a, b in zip(thresholds, thresholds[1:], strict=False)):
            raise ValueError(f"{where}: thresholds must not rise with width, not {thresholds}")
        return cls(tuple(widths), tuple(thresholds))

    def at(self, width: float) -> float:
        """The threshold of a card ``width`` pixels wide."""
        return self.thresholds[bisect.bisect_right(self.widths, width) - 1]

    def for_card(self, quad: np.ndarray) -> float:
        """The threshold of a card whose corners are ``quad`` (4 x 2): by the shorter of its
        two sides (:func:`card_width`).

        >>> quad = np.array([[0, 0], [60, 0], [60, 87], [0, 87]], float)
        >>> WidthSteps.parse([[0, 0.999], [55, 0.995]]).for_card(quad)
        0.995
        """
        return self.at(card_width(quad))

    @property
    def lowest(self) -> float:
        """The lowest threshold of any width (what the reads' floor must allow)."""
        return self.thresholds[-1]

    def at_least(self, bar: float) -> WidthSteps:
        """These steps, none below ``bar`` (the extra walks' cards: their bar or the
        threshold of their width, whichever is higher)."""
        return WidthSteps(self.widths, tuple(max(t, bar) for t in self.thresholds))

    def to_json(self) -> list[list[float]]:
        return [[w, t] for w, t in zip(self.widths, self.thresholds, strict=True)]


#: A threshold of :func:`vision.merge.merge_own`: one for every card, or by its width.
Threshold = float | WidthSteps


def lowest(thr: Threshold) -> float:
    """The lowest threshold any card is held to."""
    return thr.lowest if isinstance(thr, WidthSteps) else float(thr)


def at_least(thr: Threshold, bar: float) -> Threshold:
    """``thr`` raised to ``bar`` wherever it is lower."""
    return thr.at_least(bar) if isinstance(thr, WidthSteps) else max(float(thr), bar)


def card_width(quad: np.ndarray) -> float:
    """A card's width in pixels: the shorter of two adjacent sides of its corners."""
    q = np.asarray(quad, np.float64)
    return float(min(np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[1])))
