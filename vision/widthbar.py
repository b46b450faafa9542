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

A card's size is known from its reads, and may be misjudged: read at a hand-sized
hypothesis, a 46 px card can be reported 91 px wide and held to a large card's lax threshold
(sixty-second session: 9 of the 11 false positives the steps added). Such frames are
misjudged as a whole (their few cards alike), so a cap by the frame's median card width does
not catch them (sixty-third session). Steps may name a :class:`LaxGuard`
(``{"steps": [...], "guard": {...}}``): a card scored under the guard's ``below`` (the flat
threshold the steps depart from) is kept only in a frame that reports enough sure cards to
have its scale right, and where no other card of its code lies close by (a second report of
one card, misjudged in size).

>>> steps = WidthSteps.parse([[0, 0.999], [45, 0.997], [80, 0.993]])
>>> steps.at(30.0), steps.at(45.0), steps.at(79.9), steps.at(200.0)
(0.999, 0.997, 0.997, 0.993)
>>> steps.lowest, steps.at_least(0.998).at(100.0)
(0.993, 0.998)
"""

from __future__ import annotations

import bisect
from dataclasses import asdict, dataclass, replace

import numpy as np

#: The keys under which a guarded merge keeps each card's unrounded score and the number of
#: reads that made it until :meth:`LaxGuard.kept` has judged it (never in a reported card).
RAW_SCORE, RAW_READS = "_score", "_reads"


@dataclass(frozen=True)
class LaxGuard:
    """Where a card may stand under ``below``: in a frame that reports at least
    ``sure_cards`` cards at ``sure`` or more, with no other reported card of its code whose
    centre lies within ``same_code_reach`` of its widths.

    A card is judged by its score as the merge held it to its threshold (:data:`RAW_SCORE`,
    which :func:`vision.merge.merge_own` gives each card of a guarded merge), not by its
    confidence as reported: rounded to four decimals, a card scored 0.99696 is reported at
    0.997, under a flat 0.997 that refuses it (until 2026-12-08 such cards passed the guard
    unvouched: on the 26 held-out sweeps of its pooled test, one of the 25 wrong cards the
    guarded steps added, a false positive in a frame of two sure cards)."""

    below: float
    sure: float
    sure_cards: int
    same_code_reach: float
    #: ... and that many reads of its code or more made it (:data:`RAW_READS`); 1: any card.
    #: On the 26 sweeps of the sixty-fourth session's test (development since), most of the
    #: wrong cards the guarded steps add were made by a single read; with 2 the steps read
    #: 62.29 % (flat 61.87 %, guarded alone 62.84 %) with 110 misreads and 96 false positives
    #: (flat 117 and 97): fewer wrong cards than flat, but under half a point more.
    min_reads: int = 1

    @classmethod
    def parse(cls, guard: object, where: str) -> LaxGuard:
        """A guard from a ``.json``'s ``{"below": ..., "sure": ..., "sure_cards": ...,
        "same_code_reach": ...}`` and, if more than 1, ``"min_reads"``; ``ValueError`` naming
        ``where`` for anything else.

        >>> LaxGuard.parse({"below": 0.997, "sure": 0.999, "sure_cards": 3,
        ...                 "same_code_reach": 1.5}, "g")
        LaxGuard(below=0.997, sure=0.999, sure_cards=3, same_code_reach=1.5, min_reads=1)
        >>> LaxGuard.parse({"below": 0.997, "sure": 0.999, "sure_cards": 3,
        ...                 "same_code_reach": 1.5, "min_reads": 2}, "g").min_reads
        2
        >>> LaxGuard.parse({"below": 0.997, "sure": 0.99, "sure_cards": 3,
        ...                 "same_code_reach": 1.5}, "g")
        Traceback (most recent call last):
        ...
        ValueError: g: sure must not be under below, not 0.99 < 0.997
        """
        keys = ("below", "sure", "sure_cards", "same_code_reach")
        if isinstance(guard, dict) and "min_reads" in guard:
            keys += ("min_reads",)
        if not isinstance(guard, dict) or sorted(guard) != sorted(keys) or any(
                isinstance(guard[k], bool) or not isinstance(guard[k], (int, float))
                for k in keys):
            raise ValueError(f"{where}: must give the numbers {', '.join(keys)} and nothing "
                             f"else, not {guard!r}")
        below, sure = float(guard["below"]), float(guard["sure"])
        cards, reach = guard["sure_cards"], float(guard["same_code_reach"])
        if not (0.5 <= below <= 1.0 and 0.5 <= sure <= 1.0):
            raise ValueError(f"{where}: below and sure must be probabilities from 0.5 to 1")
        if sure < below:
            raise ValueError(f"{where}: sure must not be under below, not {sure} < {below}")
        if not isinstance(cards, int) or cards < 0 or reach < 0:
            raise ValueError(f"{where}: sure_cards must be a whole number and "
                             "same_code_reach a width, neither negative")
        reads = guard.get("min_reads", 1)
        if not isinstance(reads, int) or reads < 1:
            raise ValueError(f"{where}: min_reads must be a whole number from 1, not {reads!r}")
        return cls(below, sure, cards, reach, reads)

    def kept(self, result: dict) -> dict:
        """A merge's ``result`` with each card under :attr:`below` that its frame does not
        vouch for made a refusal where it lay, and no card's :data:`RAW_SCORE` or
        :data:`RAW_READS` left.

        >>> def card(code, conf, x, w=60.0):
        ...     quad = [[x, 0.0], [x + w, 0.0], [x + w, 1.45 * w], [x, 1.45 * w]]
        ...     return {"code": code, "confidence": conf, "center": [x + w / 2, 0.725 * w],
        ...             "corners": quad}
        >>> guard = LaxGuard(0.997, 0.999, 2, 1.5)
        >>> sure = [card("2C", 0.9995, 500.0), card("3C", 0.9999, 700.0)]
        >>> lax = card("QH", 0.995, 100.0)
        >>> [c["code"] for c in guard.kept({"cards": [lax, *sure], "unreadable": []})["cards"]]
        ['QH', '2C', '3C']
        >>> out = guard.kept({"cards": [lax, sure[0]], "unreadable": []})  # one sure card
        >>> [c["code"] for c in out["cards"]], out["unreadable"]
        (['2C'], [{'center': [130.0, 43.5]}])
        >>> twice = card("QH", 0.9999, 150.0)                   # its code 50 px off: twice
        >>> [c["code"] for c in guard.kept({"cards": [lax, twice, *sure],
        ...                                 "unreadable": []})["cards"]]
        ['QH', '2C', '3C']
        >>> edge = {**card("QH", 0.997, 100.0), RAW_SCORE: 0.99696}  # reported 0.997, under it
        >>> out = guard.kept({"cards": [edge, sure[0]], "unreadable": []})
        >>> [c["code"] for c in out["cards"]], [sorted(c) for c in out["cards"]][0]
        (['2C'], ['center', 'code', 'confidence', 'corners'])
        """
        cards = result["cards"]
        scores = [c.get(RAW_SCORE, c["confidence"]) for c in cards]
        sure = sum(1 for s in scores if s >= self.sure)
        kept, refused = [], []
        for c, score in zip(cards, scores, strict=True):
            if score < self.below and (sure < self.sure_cards or self._twice(c, cards)
                                       or c.get(RAW_READS, self.min_reads) < self.min_reads):
                refused.append({"center": c["center"]})
            else:
                kept.append({k: v for k, v in c.items() if k not in (RAW_SCORE, RAW_READS)})
        unreadable = [*result["unreadable"], *refused]
        return {**result, "cards": kept, "unreadable": unreadable}

    def _twice(self, card: dict, cards: list[dict]) -> bool:
        """Whether another of ``cards`` bears ``card``'s code within reach of its centre."""
        reach = self.same_code_reach * card_width(np.array(card["corners"], np.float64))
        centre = np.array(card["center"], np.float64)
        return any(o is not card and o["code"] == card["code"]
                   and float(np.linalg.norm(np.array(o["center"], np.float64) - centre)) < reach
                   for o in cards)

    def to_json(self) -> dict:
        """As :meth:`parse` reads it (``min_reads`` only where more than 1)."""
        out = asdict(self)
        if self.min_reads == 1:
            del out["min_reads"]
        return out


@dataclass(frozen=True)
class WidthSteps:
    """Thresholds by card width: ``widths[i]`` (pixels, the first 0) is where
    ``thresholds[i]`` starts to hold; ``guard``: where a card may stand under the flat
    threshold (``None``: wherever its width's threshold lets it)."""

    widths: tuple[float, ...]
    thresholds: tuple[float, ...]
    guard: LaxGuard | None = None

    @classmethod
    def parse(cls, steps: object, where: str = "threshold_by_width") -> WidthSteps:
        """Steps from a ``.json``'s list of ``[width, threshold]`` pairs, or
        ``{"steps": [...], "guard": {...}}`` (:class:`LaxGuard`); ``ValueError`` naming
        ``where`` for anything else.

        >>> WidthSteps.parse([[0, 0.99], [50, 0.995]])
        Traceback (most recent call last):
        ...
        ValueError: threshold_by_width: thresholds must not rise with width, not [0.99, 0.995]
        >>> WidthSteps.parse({"steps": [[0, 0.99]]})
        Traceback (most recent call last):
        ...
        ValueError: threshold_by_width: must name "steps" and "guard" only, not ['steps']
        """
        guard = None
        if isinstance(steps, dict):
            if sorted(steps) != ["guard", "steps"]:
                raise ValueError(f'{where}: must name "steps" and "guard" only, '
                                 f"not {sorted(steps)}")
            guard = LaxGuard.parse(steps["guard"], f"{where}: guard")
            steps = steps["steps"]
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
        return cls(tuple(widths), tuple(thresholds), guard)

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
        return replace(self, thresholds=tuple(max(t, bar) for t in self.thresholds))

    def to_json(self) -> list[list[float]] | dict:
        """What :meth:`parse` reads back."""
        steps = [[w, t] for w, t in zip(self.widths, self.thresholds, strict=True)]
        return steps if self.guard is None else {"steps": steps, "guard": self.guard.to_json()}


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
