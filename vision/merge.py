"""Merge one frame's reads into cards: group the reads of one card, refuse a card read two
ways, split neighbours and identical cards that a chain of reads linked, score and place
each card, find face-down cards and say where a card could not be read.

The reads come from :meth:`vision.recognize.Recognizer.read` (or a file of saved reads,
:mod:`vision.readsfile`): each is a candidate index corner with its best class and
probability. Reads of the same card (its two index corners, or one corner reached twice) are
grouped by the card centre they imply; reads of one card that disagree are refused (where a
chain of reads linked two neighbours of a hand, the group is split by code instead:
:func:`split_neighbours`, and where some of its codes do claim one card, that card is
refused and the others kept, :func:`clear_of_clashes`; a group of one code whose index
corners lie a hand step apart holds identical cards of a multi-deck shoe, and is split by
corner: :func:`split_twins`; a card read at its two index corners, each on its own, and
its size misjudged at one of them, is joined back into one card: :func:`join_far_corners`).
A card's confidence is its best read's probability, or higher when its two opposite index
corners were read alike (:func:`card_score`); a card below the operating threshold is
reported as ``unreadable``, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from vision.codes import CLASSES, FACE_DOWN_INDEX
from vision.components import component_labels
from vision.handwalk import is_step
from vision.proposals import IndexFrame, axis_steps, card_steps
from vision.widthbar import RAW_READS, RAW_SCORE, Threshold, WidthSteps, at_least, lowest

#: Two reads of one index corner are at most this far apart (card widths). Candidates of one
#: corner lie within the reader's reach (~0.12); the index corners of neighbours in a hand are
#: 0.26 card widths apart or more, less as measured in a frame whose size estimate is too
#: large. At 0.22 (before 2026-11-30) 15 neighbours of 380 calibration frames were refused;
#: 0.17 read 66.44 -> 67.04 % of their cards at 0.993 (1 misread either way; 0.14: 67.08 %).
SAME_INDEX = 0.17
#: Two reads of the same code whose implied card centres are closer than this (card widths)
#: are one card. Generous: the implied centres rest on the card size estimated in the frame,
#: and a card reported twice is a card "never dealt" to the shoe cross-check. Two identical
#: cards of a multi-deck shoe side by side in a hand are closer than this too: their group is
#: split again by its index corners (:func:`split_twins`).
SAME_CENTRE = 0.8
#: Two reads of different codes from frames not turned alike whose implied card centres are
#: closer than this (card widths) claim one card (neighbours in a hand are at least ~0.26
#: card widths apart): refused.
CLASH_CENTRE = 0.2
#: Reads of different codes grouped as one card whose cards (by code) lie at least this far
#: apart (card widths) are neighbours, not one card read two ways (:func:`split_neighbours`):
#: :data:`CLASH_CENTRE`, the distance at which two codes claim one card. Before 2026-12-01 such
#: groups were refused: on 540 calibration frames 167 of the 183 cards read right yet
#: refused lay in a group holding a neighbour's code; split, 67.53 -> 69.76 % of their cards at
#: 0.99, 1 misread either way (0.15: 69.89 %, 2; 0.3: 69.07 %, 1). 0 turns the split off.
SPLIT_GAP = 0.2
#: Whether, in a group :func:`split_neighbours` refuses (some of its codes claim one card),
#: the codes whose cards lie :data:`SPLIT_GAP` or more from every other code's are kept as
#: cards of their own (:func:`clear_of_clashes`): a neighbour that a chain of reads linked to
#: a card read two ways is not that card. Before the thirty-fourth session the whole group
#: was refused (on 150 fresh 1080p frames of an enrolled deck, 2 of 9 cards read surely yet
#: refused were such neighbours).
KEEP_CLEAR_NEIGHBOURS = True
#: Whether a group of reads of one code whose index corners lie apart is split into the
#: identical cards it holds (:func:`split_twins`).
TWIN_SPLIT = True
#: ... when their corners lie one or two hand steps apart (:func:`hand_apart`), in card widths
#: along and card heights across: the hand walk's steps (``vision/handwalk.py``: the renderer
#: pitches 0.26-0.40 widths and 0.12-0.30 heights), narrowed from 0.2 and 0.06 at their low
#: ends, where one corner read twice lies (on 5400 calibration frames of the training
#: designs, 43 such splits at 0.2 / 0.06, 5 at these; of 340 identical pairs split, 12 % fewer)
TWIN_STEP_U = (0.24, 0.45)
TWIN_STEP_V = (0.1, 0.35)
#: ... or, in a row, from 0.3 to 0.75 card widths along and under 0.06 heights across (one
#: corner read twice lay up to 0.29 widths along).
TWIN_ROW_STEP = (0.3, 0.75, 0.06)
#: ... or whatever their step, when they lie at least this far apart and less than this (card
#: widths): axes estimated off under a tilted view turn a hand step into one nearly straight
#: down the card, where one corner read twice lies too, though nearer (on 1500 single-deck
#: calibration frames 556 of 571 such pairs of corners lay under 0.3 widths apart; of 613 pairs
#: of identical neighbours' corners, 540 at 0.3 or more). On the 7560 calibration frames at
#: 0.99, false positives 128 -> 131 / 129 / 128 at 0.35 / 0.4 / 0.45; twin cards of 180
#: training-design frames 64.1 -> 69.9 / 69.1 / 68.1 % (with the best-first choice of corners).
TWIN_APART = (0.45, 0.8)
#: Face-down reads closer than this (card widths) are one card.
SAME_BACK = 0.8
#: A candidate read as a card back with at least this probability is a face-down card. On the
#: 360 labelled calibration frames (276 face-down cards), found / false: 0.5 (before
#: 2026-11-30, eighth session) 224 / 38, 0.7 214 / 20, 0.8 212 / 10, **0.9 204 / 2**, 0.95
#: 193 / 2; chosen by found minus twice false (a card reported that is not there, like a
#: wrong card, is worse than one missed). Face-up reads are not affected.
FACE_DOWN_FLOOR = 0.9
#: A face-down read whose card centre is closer than this (card widths) to a reported card's
#: is taken for that card's own body, not a back. The dealer's hole card lies over the up
#: card, 0.26-0.40 card widths along; at 0.5 (before 2026-11-30, seventh session) it hid 26
#: of the 38 face-down cards missed on 216 labelled calibration frames. On the 360: 0.5
#: found 208 of 276 (32 false), 0.4 225 (38), 0.3 229 (45), 0.2 238 (54), none 239 (82).
BACK_CLEAR = 0.4
#: Reads of a card code at least this probable (or at least the pair floor of the operating
#: threshold, if lower) take part in the grouping: one that disagrees with the card's other
#: reads makes the card unreadable, even when it is below the operating threshold. At 0.5
#: (before 2026-11-30) weak second opinions refused many right reads: 0.9 read 52.5 % instead
#: of 49.9 % of the 1900 calibration frames' cards at 0.99, with 7 misreads in 13,482 instead
#: of 6 in 12,805 (95 % bound 0.098 %, within the 0.1 % rule). Swept again on 2026-12-01 (the
#: 7560 calibration frames, the rule picking 0.99 each time): 0.8 74.10 % of the cards with
#: 54 misreads, 0.85 74.24 % with 56, 0.9 74.355 % with 58.
DOUBT_FLOOR = 0.9
#: Two cards reported with one code, turned opposite ways, are one card's two index corners
#: (:func:`join_far_corners`) when each lies ahead of the other by more than this many card
#: widths along and card heights down (a card's far corner lies at 1, 1, or at 0, 1 on decks
#: with an index in all four corners) ...
FAR_CORNER_AHEAD = (-0.1, 0.5)
#: ... and at most this many card widths away (a card's diagonal is ~1.75 widths; its size is
#: what was misjudged). 0 turns the join off.
FAR_CORNER_REACH = 3.2
#: A card of the extra walks (:func:`merge_reads`) is not added within this many card widths
#: of a card of its code that the pipeline's own reads report (the far corner's reach): it is
#: most likely that card, misjudged in size (two identical cards of a multi-deck shoe that
#: close lose the second).
SAME_CODE_REACH = FAR_CORNER_REACH


@dataclass
class _Read:
    """What the reader made of one candidate index corner (``frame``): its best class ``cls``
    (an index of :data:`vision.codes.CLASSES`) at probability ``prob``, and the probability
    on the 52 card codes together (``code_mass``)."""

    cls: int
    prob: float
    code_mass: float
    frame: IndexFrame
    #: Scale of the frame's size at which a card known by this corner alone is placed
    #: (:func:`vision.recognize.placement_scale`).
    place: float = 1.0
    #: The most probable rank and colour (:mod:`vision.rankcolour`; -1: not known, as in
    #: reads saved before it) and its probability, the two suits of the colour summed.
    rank_colour: int = -1
    rank_colour_prob: float = 0.0
    #: 0 for a read of the pipeline's own places; for a read of the extra walks' places
    #: (:data:`vision.recognize.EXTRA_BAR`), the bar a card that needs it must reach (or the
    #: threshold, if higher): :func:`merge_reads`.
    extra_bar: float = 0.0

    @cached_property
    def center(self) -> np.ndarray:
        f = self.frame
        return f.point + 0.5 * (f.width * f.x_axis + f.height * f.y_axis)

    @property
    def back_center(self) -> np.ndarray:
        """Card centre for a face-down read: a back has no index, so the corner may be any of
        the four; split the difference between width and height along both axes."""
        f = self.frame
        half = 0.25 * (f.width + f.height)
        return f.point + half * (f.x_axis + f.y_axis)

    def corners(self) -> np.ndarray:
        """The card's corners from this index corner, at :attr:`place` times the frame's
        size."""
        f = self.frame
        x, y = self.place * f.width * f.x_axis, self.place * f.height * f.y_axis
        return np.array([f.point, f.point + x, f.point + x + y, f.point + y])


def merge_reads(reads: list[_Read], thr: Threshold, own: dict | None = None) -> dict:
    """Cards, face-down cards and refusals from a frame's reads
    (:meth:`vision.recognize.Recognizer.read`) at operating threshold ``thr``: those of the
    pipeline's own reads (:func:`merge_own`), and where some reads come from the extra walks
    (``extra_bar`` set, :data:`vision.recognize.EXTRA_BAR`), the cards of all the reads that
    reach the extra bar (or ``thr``, if higher) lying over none of the own reads' cards or
    face-down cards, each in place of the own reads' refusals under it.

    The extra walks' places add reads of cards the pipeline refused as well as of cards it
    never reached; at the operating threshold the cards they add misread several times as
    often as the rest (``models/cards_v7.md``, fifty-seventh session), so they answer to a
    stricter bar, and never change a card the pipeline's own reads report. ``own``: the own
    reads' :func:`merge_own` at ``thr``, where it was made already. ``thr`` may go by the
    card's width (:class:`vision.widthbar.WidthSteps`), and its guard
    (:class:`vision.widthbar.LaxGuard`) then judges the cards of the whole merge.

    >>> def read(code, prob, point, bar=0.0):  # an index corner of a card 60 x 87
    ...     f = IndexFrame(np.array(point, float), np.array([1.0, 0.0]),
    ...                    np.array([0.0, 1.0]), 60.0, 87.0, True)
    ...     return _Read(CLASSES.index(code), prob, 1.0, f, extra_bar=bar)
    >>> own = read("QH", 0.99, (100, 100))                      # refused at 0.997
    >>> merge_reads([own], 0.997)["cards"], len(merge_reads([own], 0.997)["unreadable"])
    ([], 1)
    >>> extra = read("QH", 0.9996, (102, 101), bar=0.9995)      # an extra walk's sure read
    >>> out = merge_reads([own, extra], 0.997)
    >>> [c["code"] for c in out["cards"]], out["unreadable"]    # the refusal made a card
    (['QH'], [])
    >>> merge_reads([own, read("QH", 0.999, (102, 101), bar=0.9995)], 0.997)["cards"]
    []
    """
    result = _merge_reads(reads, thr, own)
    # (a guard on the cards under the flat threshold judges the frame's whole report)
    guard = thr.guard if isinstance(thr, WidthSteps) else None
    return result if guard is None else guard.kept(result)


def _merge_reads(reads: list[_Read], thr: Threshold, own: dict | None) -> dict:
    extra = [r for r in reads if r.extra_bar]
    if not extra:
        return own if own is not None else merge_own(reads, thr)
    result = own if own is not None else merge_own([r for r in reads if not r.extra_bar], thr)
    more = merge_own(reads, at_least(thr, max(r.extra_bar for r in extra)))
    # (a face-down card or a refusal has no width: an added card, which may be misjudged
    # small, reaches over them by half its width or the reported cards' median, the larger)
    widths = [_card_width(c) for c in result["cards"]]
    typical = float(np.median(widths)) if widths else 0.0
    added = [c for c in more["cards"] if not _taken(c, result, typical)]
    if not added:
        return result
    refused = [u for u in result["unreadable"]
               if all(np.linalg.norm(np.array(u["center"]) - np.array(c["center"]))
                      > 0.5 * max(_card_width(c), typical) for c in added)]
    return {**result, "cards": result["cards"] + added, "unreadable": refused}


def _taken(card: dict, result: dict, typical: float) -> bool:
    """Whether a card of the extra walks' merge lies where ``result`` (the pipeline's own)
    reports a card or a face-down card: within half the larger of their widths of its
    centre, or, a card of the same code, within :data:`SAME_CODE_REACH` of that card's
    widths; a face-down card within half of its width or ``typical`` (the reported cards'
    median), the larger. Misjudged in size, an extra read of a reported card's other corner
    puts its centre that far off (on development frames, four of 65 cards added at 0.9995,
    each the size of a card's index or smaller: 0.5-1.8 widths from the reported one of its
    code)."""
    centre, width = np.array(card["center"]), _card_width(card)
    for other in result["cards"]:
        apart = float(np.linalg.norm(np.array(other["center"]) - centre))
        other_width = _card_width(other)
        if apart <= 0.5 * max(width, other_width) or (
                other["code"] == card["code"] and apart <= SAME_CODE_REACH * other_width):
            return True
    return any(float(np.linalg.norm(np.array(b["center"]) - centre)) <= 0.5 * max(width, typical)
               for b in result["face_down"])


def over_cards(frames: list[IndexFrame], cards: list[dict], place: float = 1.0) -> np.ndarray:
    """Whether the card each of ``frames`` would make read on its own (its index corner's
    card at ``place`` times the frame's size, :meth:`_Read.corners`) lies over one of
    ``cards`` as :func:`_taken` has it: within half the larger of the two widths of that
    card's centre. The extra walks read no such place: :func:`merge_reads` would add no card
    there.

    >>> x, y = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    >>> def at(px): return IndexFrame(np.array([px, 0.0]), x, y, 60.0, 87.0, False)
    >>> card = {"center": [30.0, 43.5], "corners": [[0, 0], [60, 0], [60, 87], [0, 87]]}
    >>> over_cards([at(0), at(18), at(40)], [card]).tolist()
    [True, True, False]
    """
    if not frames or not cards:
        return np.zeros(len(frames), bool)
    widths = place * np.array([f.width for f in frames])
    centres = np.array([f.point + 0.5 * place * (f.width * f.x_axis + f.height * f.y_axis)
                        for f in frames])
    card_centres = np.array([c["center"] for c in cards], np.float64)
    card_widths = np.array([_card_width(c) for c in cards])
    apart = np.linalg.norm(centres[:, None] - card_centres[None], axis=2)
    return (apart <= 0.5 * np.maximum(widths[:, None], card_widths[None])).any(1)


def _card_width(card: dict) -> float:
    """A reported card's width (its first two corners apart), pixels."""
    a, b = np.array(card["corners"][:2], float)
    return float(np.linalg.norm(b - a))


def merge_own(reads: list[_Read], thr: Threshold) -> dict:
    """Cards, face-down cards and refusals from reads (:meth:`vision.recognize.Recognizer.read`)
    at operating threshold ``thr``, every read alike (:func:`merge_reads` for the extra
    walks' reads). Where ``thr`` goes by width (:class:`vision.widthbar.WidthSteps`), a
    card is kept at the threshold of its own width, and a read under the threshold of its
    frame's width that made no card is a refusal.

    >>> def read(code, prob, point, axis):  # an index corner of a card 60 x 87
    ...     f = IndexFrame(np.array(point, float), np.array([axis, 0.0]),
    ...                    np.array([0.0, axis]), 60.0, 87.0, True)
    ...     return _Read(CLASSES.index(code), prob, 1.0, f)
    >>> near, far = read("QH", 0.95, (100, 100), 1.0), read("QH", 0.95, (160, 187), -1.0)
    >>> merge_reads([near], 0.99)["cards"], len(merge_reads([near], 0.99)["unreadable"])
    ([], 1)
    >>> [(c["code"], c["confidence"], c["center"]) for c in merge_reads([near, far], 0.99)["cards"]]
    [('QH', 0.9975, [130.0, 143.5])]
    >>> merge_reads([near, far, read("QD", 0.95, (102, 101), 1.0)], 0.99)["cards"]  # read two ways
    []
    """
    floor = read_floor(lowest(thr))
    # (a card's quad is made for its threshold only where that goes by width)
    by_width = thr if isinstance(thr, WidthSteps) else None
    sure = sorted((r for r in reads if r.cls < 52 and r.prob >= floor),
                  key=lambda r: -r.prob)
    groups = _group_same_card(sure)
    found: list[tuple[list[_Read], float]] = []
    unreadable = []
    while groups:
        g = groups.pop(0)
        best = g[0]
        if any(r.cls != best.cls for r in g):
            parts = split_neighbours(g) if SPLIT_GAP else None
            if parts is None:  # one card read two ways: refuse it (not its clear neighbours)
                clear, refused = (clear_of_clashes(g) if SPLIT_GAP and KEEP_CLEAR_NEIGHBOURS
                                  else ([], best))
                unreadable.append(refused.center)
                groups[:0] = clear
            else:
                groups[:0] = parts
            continue
        if TWIN_SPLIT and len(g) > 1:
            twins = split_twins(g)
            if len(twins) > 1:  # identical cards of a multi-deck shoe, side by side
                groups[:0] = twins
                continue
        score = card_score(g)
        if score < (thr if by_width is None else by_width.for_card(_card_quad(g))):
            continue  # left to the refusals below
        found.append((g, score))
    cards = []
    joined = join_far_corners(found)
    # (a guard judges a card by its score as held to its threshold, not as rounded, and by
    # how many reads made it)
    guarded = by_width is not None and by_width.guard is not None
    for g, score in joined:
        quad = _card_quad(g)
        cards.append({
            "code": CLASSES[g[0].cls],
            "confidence": round(score, 4),
            "center": _pt(quad.mean(0)),
            "corners": [_pt(c) for c in quad],
            **({RAW_SCORE: score, RAW_READS: len(g)} if guarded else {}),
        })
    # where cards lie, for the backs and refusals below; a joined card's parts too (reads
    # around its misjudged centre are its own, neither a back nor a card refused)
    centres = [c["center"] for c in cards]
    if len(joined) < len(found):
        centres += [_pt(_card_quad(g).mean(0)) for g, _ in found]
    card_centres = np.array(centres, np.float64).reshape(-1, 2)

    def near_card(p: np.ndarray, w: float, radius: float) -> bool:
        return bool((np.linalg.norm(card_centres - p, axis=1) < radius * w).any())

    backs: list[tuple[np.ndarray, float, int]] = []
    for r in reads:
        if r.cls != FACE_DOWN_INDEX or r.prob < FACE_DOWN_FLOOR:
            continue
        c, w = r.back_center, r.frame.width
        if near_card(c, w, BACK_CLEAR):
            continue
        for k, (bc, bw, n) in enumerate(backs):
            if np.linalg.norm(bc - c) < SAME_BACK * w:
                backs[k] = ((bc * n + c) / (n + 1), bw, n + 1)
                break
        else:
            backs.append((c, w, 1))
    doubt: list[tuple[np.ndarray, float]] = []
    for r in reads:
        if r.cls >= 52 or r.code_mass < 0.5 or r.prob >= (
                thr if by_width is None else by_width.for_card(r.corners())):
            continue
        c, w = r.center, r.frame.width
        if near_card(c, w, 0.5) or any(np.linalg.norm(c - b[0]) < 0.5 * w for b in backs):
            continue
        if any(np.linalg.norm(c - d) < 0.5 * w
               for d in [*unreadable, *(d for d, _ in doubt)]):  # one refusal per card
            continue
        doubt.append((c, w))
    unreadable += [d for d, _ in doubt]
    return {"cards": cards, "face_down": [{"center": _pt(b[0])} for b in backs],
            "unreadable": [{"center": _pt(u)} for u in unreadable]}


def join_far_corners(found: list[tuple[list[_Read], float]]) -> list[tuple[list[_Read], float]]:
    """Cards (their reads, best first, and score) with those that are another card's far
    index corner joined to it (:func:`_far_corner_of`): the joined card keeps the reads of
    both, best first, and the higher score.

    One card read at both index corners whose size was misjudged at one of them implies two
    card centres too far apart to be grouped (:data:`SAME_CENTRE`), and was reported twice:
    a card "never dealt" to the shoe cross-check.

    >>> def read(x, y, axis, prob=0.999):  # a 7H index corner, a card 60 x 87
    ...     f = IndexFrame(np.array([x, y], float), np.array([axis, 0.0]),
    ...                    np.array([0.0, axis]), 60.0, 87.0, True)
    ...     return _Read(CLASSES.index("7H"), prob, 1.0, f)
    >>> near, far = [read(0, 0, 1.0)], [read(100, 140, -1.0, 0.995)]  # size misjudged
    >>> [(len(g), s) for g, s in join_far_corners([(near, 0.999), (far, 0.995)])]
    [(2, 0.999)]
    >>> len(join_far_corners([(near, 0.999), ([read(-100, -140, -1.0)], 0.999)]))  # behind
    2
    """
    out: list[tuple[list[_Read], float]] = []
    for g, score in found:
        for k, (h, kept_score) in enumerate(out):
            if (FAR_CORNER_REACH and h[0].cls == g[0].cls and _one_way(h) and _one_way(g)
                    and _far_corner_of(h[0].frame, g[0].frame)):
                out[k] = (sorted(h + g, key=lambda r: -r.prob), max(kept_score, score))
                break
        else:
            out.append((g, score))
    return out


def _one_way(group: list[_Read]) -> bool:
    """Whether all reads of a card are turned like its best (it was read at one index corner:
    a card read at both, or two identical cards side by side, is not joined to another)."""
    x = group[0].frame.x_axis
    return all(float(np.dot(r.frame.x_axis, x)) > 0.8 for r in group)


def _far_corner_of(a: IndexFrame, b: IndexFrame) -> bool:
    """Whether index corners ``a`` and ``b``, turned opposite ways, may be one card's two: each
    lies ahead of the other by more than :data:`FAR_CORNER_AHEAD` (card widths along, card
    heights down), at most :data:`FAR_CORNER_REACH` card widths away."""
    if float(np.dot(a.x_axis, b.x_axis)) >= -0.8:
        return False
    d = b.point - a.point
    if float(np.linalg.norm(d)) > FAR_CORNER_REACH * min(a.width, b.width):
        return False
    (ua, va), (ub, vb) = card_steps(a, d), card_steps(b, -d)
    return min(va, vb) > FAR_CORNER_AHEAD[1] and min(ua, ub) > FAR_CORNER_AHEAD[0]


def split_neighbours(group: list[_Read]) -> list[list[_Read]] | None:
    """A group of reads of several codes (best first) split by code, each part best first,
    when the cards the parts imply (:func:`_card_quad`) lie at least :data:`SPLIT_GAP` card
    widths apart two by two, else ``None``: one card read two ways, refused.

    The grouping is transitive: reads of a hand's neighbours, each pair of them rightly kept
    apart by :func:`_same_card`, still end in one group when a chain of reads links them (a
    card's far corner read near the next card's, a walked candidate between two index
    corners), and that group, read two ways, refused both cards.

    >>> from vision.proposals import IndexFrame
    >>> def read(code, x):  # an index corner at (x, 0), axes upright, a card 60 x 87
    ...     f = IndexFrame(np.array([x, 0.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0]),
    ...                    60.0, 87.0, True)
    ...     return _Read(CLASSES.index(code), 0.999, 1.0, f)
    >>> [[CLASSES[r.cls] for r in p] for p in split_neighbours([read("3C", 0), read("KH", 18)])]
    [['3C'], ['KH']]
    >>> split_neighbours([read("3C", 0), read("KH", 6)]) is None   # 0.1 card widths apart
    True
    """
    parts, clashing = _code_parts(group)
    return None if clashing else parts


def _code_parts(group: list[_Read]) -> tuple[list[list[_Read]], set[int]]:
    """``group``'s reads by code (each part best first, in the order of its best read) and
    the indices of the parts whose cards (:func:`_card_quad`) lie within :data:`SPLIT_GAP`
    card widths of another part's."""
    parts: dict[int, list[_Read]] = {}
    for r in group:
        parts.setdefault(r.cls, []).append(r)
    values = list(parts.values())
    centres = [(_card_quad(p).mean(0), min(r.frame.width for r in p)) for p in values]
    clashing: set[int] = set()
    for i, (ci, wi) in enumerate(centres):
        for j in range(i + 1, len(centres)):
            cj, wj = centres[j]
            if np.linalg.norm(ci - cj) < SPLIT_GAP * min(wi, wj):
                clashing.update((i, j))
    return values, clashing


def clear_of_clashes(group: list[_Read]) -> tuple[list[list[_Read]], _Read]:
    """For a group of reads of several codes that :func:`split_neighbours` refuses: its parts
    by code (each best first) whose cards lie at least :data:`SPLIT_GAP` card widths from
    every other part's, and the best read of the rest (the card read two ways).

    >>> from vision.proposals import IndexFrame
    >>> def read(code, x, prob=0.999):  # an index corner at (x, 0), a card 60 x 87
    ...     f = IndexFrame(np.array([x, 0.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0]),
    ...                    60.0, 87.0, True)
    ...     return _Read(CLASSES.index(code), prob, 1.0, f)
    >>> group = [read("5D", 0), read("5S", -22), read("6D", 3, 0.94)]  # 5D read two ways
    >>> split_neighbours(group) is None
    True
    >>> clear, refused = clear_of_clashes(group)
    >>> [[CLASSES[r.cls] for r in p] for p in clear], CLASSES[refused.cls]
    ([['5S']], '5D')
    """
    values, clashing = _code_parts(group)
    clear = [p for k, p in enumerate(values) if k not in clashing]
    refused = max((values[k][0] for k in clashing), key=lambda r: r.prob)
    return clear, refused


def split_twins(group: list[_Read]) -> list[list[_Read]]:
    """A group of reads of one code (best first) split into the cards it holds: one per index
    corner turned like the best read's, or else turned the other way (the best read may be a
    card's far corner; reads of one corner lie within :data:`SAME_INDEX` card widths): the
    best corner, and each other that lies a hand step (:func:`hand_apart`) or
    :data:`TWIN_APART` from every corner kept before it, best first; each other read goes to
    the card whose centre is nearest its own. ``[group]`` when no two such corners are found.

    A six- or eight-deck shoe deals two identical cards side by side in a hand (a player's
    first two cards alike: about one hand in 55), and the merge, which takes reads of one code
    whose implied card centres lie within :data:`SAME_CENTRE` card widths for one card (a
    card size misjudged moves them), made one card of the two: the camera saw one of two
    identical cards, those of every suited four- or three-of-a-kind that holds such a pair.

    >>> def read(x, y=0.0, prob=0.999, axis=1.0):  # a 7H index corner, a card 60 x 87
    ...     f = IndexFrame(np.array([x, y]), np.array([axis, 0.0]), np.array([0.0, axis]),
    ...                    60.0, 87.0, True)
    ...     return _Read(CLASSES.index("7H"), prob, 1.0, f)
    >>> [[float(r.frame.point[0]) for r in p] for p in split_twins([read(0), read(20)])]
    [[0.0], [20.0]]
    >>> len(split_twins([read(0), read(5)]))   # one corner read twice
    1
    >>> far = read(80, 87, 0.99, -1.0)   # the far index corner of the card at 20
    >>> [[float(r.frame.point[0]) for r in p] for p in split_twins([read(0), read(20), far])]
    [[0.0], [20.0, 80.0]]
    >>> stray = read(31, 0.0, 0.95)   # too near the card at 20 for a card of its own
    >>> [[float(r.frame.point[0]) for r in p] for p in split_twins([read(0), read(20), stray])]
    [[0.0], [20.0, 31.0]]
    """
    w = min(r.frame.width for r in group)
    for axis in (group[0].frame.x_axis, -group[0].frame.x_axis):
        corners: list[list[_Read]] = []
        for r in group:
            if float(np.dot(r.frame.x_axis, axis)) <= 0.8:
                continue
            near = [c for c in corners if min(np.linalg.norm(r.frame.point - o.frame.point)
                                              for o in c) < SAME_INDEX * w]
            if near:  # single link: a read near two corners joins them
                for c in near[1:]:
                    near[0].extend(c)
                    corners.remove(c)
                near[0].append(r)
            else:
                corners.append([r])
        # best corner first; each other one is a card of its own when it lies apart from
        # every card kept so far (a stray corner between two cards goes to the nearer)
        kept = corners[:1]
        for c in corners[1:]:
            if all(_twin_step(k[0].frame, c[0].frame, w) for k in kept):
                kept.append(c)
        if len(kept) < 2:
            continue
        corners = kept
        centres = [_card_quad(c).mean(0) for c in corners]
        taken = {id(r) for c in corners for r in c}
        for r in group:
            if id(r) not in taken:
                k = int(np.argmin([np.linalg.norm(r.center - c) for c in centres]))
                corners[k].append(r)
        return [sorted(c, key=lambda r: -r.prob) for c in corners]
    return [group]


def _twin_step(a: IndexFrame, b: IndexFrame, w: float) -> bool:
    """Whether index corners ``a`` and ``b`` (turned alike) are those of two cards: a hand step
    apart in ``a``'s axes (:func:`hand_apart`), or :data:`TWIN_APART` card widths (``w``)."""
    return (hand_apart(*card_steps(a, b.point - a.point))
            or TWIN_APART[0] * w <= float(np.linalg.norm(b.point - a.point)) < TWIN_APART[1] * w)


def hand_apart(u: float, v: float) -> bool:
    """Whether two index corners turned alike, ``u`` card widths along and ``v`` card heights
    across apart, are those of two cards of one hand: one or two steps of
    :data:`TWIN_STEP_U` along and :data:`TWIN_STEP_V` across, or of a row
    (:data:`TWIN_ROW_STEP`). One corner read at two places lies nearer: along the card's
    height, where the index's rank and suit lie, or less than a step along.

    >>> hand_apart(0.3, 0.2), hand_apart(-0.3, -0.2), hand_apart(0.7, 0.45), hand_apart(0.5, 0.0)
    (True, True, True, True)
    >>> hand_apart(0.05, 0.15), hand_apart(0.21, 0.07), hand_apart(0.25, 0.0), hand_apart(1.0, 1.0)
    (False, False, False, False)
    """
    steps = (TWIN_STEP_U, TWIN_STEP_V, TWIN_ROW_STEP[:2], TWIN_ROW_STEP[2])
    return bool(is_step(u, v, steps) or is_step(u / 2, v / 2, steps, row=False))


def read_floor(threshold: float) -> float:
    """The least probability at which a card-code read takes part in the grouping at
    ``threshold``: the pair floor, or :data:`DOUBT_FLOOR` where that is lower. Below it a read
    changes no card :func:`merge_reads` reports."""
    return min(pair_floor(threshold), DOUBT_FLOOR)


def pair_floor(threshold: float) -> float:
    """The least probability at which a read can count towards a card at ``threshold``: the one
    at which two opposite index corners of one card, both read so, reach it
    (:func:`card_score`)."""
    return 1.0 - float(np.sqrt(max(1.0 - threshold, 0.0)))


def card_score(group: list[_Read]) -> float:
    """The confidence of a card from the agreeing reads of one card (best first).

    The best read's probability, or, when the card's two opposite index corners were both read
    (:func:`_opposite_corners`) with probabilities ``p`` and ``q``, ``1 - (1 - min(p, q))**2``
    if higher: two index corners, each cut and classified on its own, agreeing on the code.
    The two reads are not independent (same print, same frame), so the score is no probability;
    the operating threshold is chosen on it on training designs (:mod:`vision.calibrate`).
    """
    score = group[0].prob
    for i, a in enumerate(group):
        for b in group[i + 1:]:
            if (_opposite_corners(a.frame, b.frame, measured=True)
                    or _opposite_corners(b.frame, a.frame, measured=True)):
                score = max(score, 1.0 - (1.0 - min(a.prob, b.prob)) ** 2)
    return score


def _opposite_corners(fa: IndexFrame, fb: IndexFrame, measured: bool = False) -> bool:
    """Whether two frames are the two opposite index corners of one card (axes reversed).

    By default, tightly by the card size estimated at each corner: seen from either end, the
    other corner is one card width (within 15 %) along that frame's x axis and one card height
    (within 20 %) along its y axis (:func:`card_steps`: the axes are the card's edges, which
    a tilted view does not keep at right angles); this also decides that two reads of
    different codes claim one card. With ``measured`` (for reads of the same code), by the
    frames alone: the step between the corner points, measured along each frame's own axes,
    is the same width and height seen from both ends (within 12 %), with a card's
    proportions under a tilted view (1.1-1.9) and 0.55-1.6 of the estimated width; the size
    estimate is what is least sure in a frame, and two corners that agree measure the card.

    >>> import numpy as np
    >>> from vision.proposals import IndexFrame
    >>> x, y = np.array([0.96, 0.28]), np.array([-0.6, 0.8])  # 110 degrees apart
    >>> tl = IndexFrame(np.zeros(2), x, y, 50.0, 70.0, True)
    >>> def br(step): return IndexFrame(step, -x, -y, 50.0, 70.0, True)
    >>> _opposite_corners(tl, br(50 * x + 70 * y))   # the card's own far corner
    True
    >>> _opposite_corners(tl, br(65 * x + 90 * y))   # a neighbour's in a hand
    False
    """
    if float(np.dot(fa.x_axis, fb.x_axis)) >= -0.8:
        return False
    d = fb.point - fa.point
    if not measured:
        u, v = card_steps(fa, d)
        ub, vb = card_steps(fb, -d)
        return (0.85 < u < 1.15 and 0.8 < v < 1.2 and 0.85 < ub < 1.15 and 0.8 < vb < 1.2)
    w = min(fa.width, fb.width)
    u, v = float(np.dot(d, fa.x_axis)), float(np.dot(d, fa.y_axis))
    ub, vb = float(np.dot(-d, fb.x_axis)), float(np.dot(-d, fb.y_axis))
    if min(u, v, ub, vb) <= 0:
        return False
    return (abs(u - ub) < 0.12 * u and abs(v - vb) < 0.12 * v
            and 0.55 < u / w < 1.6 and 1.1 < v / u < 1.9)


def _same_card(a: _Read, b: _Read) -> bool:
    """Whether two reads are of one card.

    Whatever the codes: the same index corner seen twice (axes alike, points within
    :data:`SAME_INDEX` card widths), or the card's two opposite index corners (axes reversed,
    one a card diagonal away from the other, tightly: :func:`_opposite_corners`), or, for
    frames turned neither alike nor reversed, implied card centres within
    :data:`CLASH_CENTRE` card widths. Only when the codes agree: a looser diagonal, or
    implied card centres within :data:`SAME_CENTRE` card widths. Reads of one card that
    disagree make the card unreadable.

    Reads of different codes from reversed frames are one card by the tight diagonal alone:
    their implied centres rest on the card size estimated at each (a tilted view stretches
    one end), and the two cards of a hand, read at opposite ends, fell within
    :data:`CLASH_CENTRE` and refused each other. On the 380 labelled calibration frames
    (``models/cards_v4.md``), of 64 refused cards 54 were such neighbours, each read right.
    """
    fa, fb = a.frame, b.frame
    w = min(fa.width, fb.width)
    same_code = a.cls == b.cls
    gap = float(np.linalg.norm(a.center - b.center))
    dot = float(np.dot(fa.x_axis, fb.x_axis))
    d = fb.point - fa.point
    if dot > 0.8:
        # Index corners turned alike are one if they are at one place (a card has one index
        # corner each way up); implied centres, which rest on the estimated card size, count
        # only for reads of the same code: for different codes they fell within CLASH_CENTRE
        # for neighbours in a hand, refusing both cards.
        return (float(np.linalg.norm(d)) < SAME_INDEX * w
                or (same_code and gap < SAME_CENTRE * w))
    if same_code and gap < SAME_CENTRE * w:
        return True
    if not same_code and dot >= -0.8 and gap < CLASH_CENTRE * w:
        return True
    if dot < -0.8:
        u = float(np.dot(d, fa.x_axis)) / w
        v = float(np.dot(d, fa.y_axis)) / w
        if u <= 0:
            return False
        if _opposite_corners(fa, fb):
            return True
        if same_code and _opposite_corners(fa, fb, measured=True):
            return True
        return same_code and 0.65 < u < 1.4 and 1.15 < v / u < 1.9
    return False


def _same_card_pairs(reads: list[_Read], pairs: np.ndarray) -> np.ndarray:
    """:func:`_same_card` for every pair ``(i, j)`` of ``pairs`` at once: a boolean array.

    The same tests in the same order, on arrays: one call per pair cost 9.6 ms of the
    slowest fifth of the `val` frames (~23 cards each). A test
    (``tests/test_vision_units.py``) checks that both agree on every pair of real frames.
    """
    if not len(pairs):
        return np.zeros(0, bool)
    frames = [r.frame for r in reads]
    pts = np.array([f.point for f in frames], np.float64)
    xs = np.array([f.x_axis for f in frames], np.float64)
    ys = np.array([f.y_axis for f in frames], np.float64)
    widths = np.array([f.width for f in frames], np.float64)
    heights = np.array([f.height for f in frames], np.float64)
    centres = np.array([r.center for r in reads], np.float64)
    cls = np.array([r.cls for r in reads])
    i, j = pairs[:, 0], pairs[:, 1]
    w = np.minimum(widths[i], widths[j])
    same_code = cls[i] == cls[j]
    gap = np.linalg.norm(centres[i] - centres[j], axis=1)
    dot = np.einsum("ij,ij->i", xs[i], xs[j])
    d = pts[j] - pts[i]
    alike = dot > 0.8
    near_centre = same_code & (gap < SAME_CENTRE * w)
    one = np.where(alike, (np.linalg.norm(d, axis=1) < SAME_INDEX * w) | near_centre,
                   near_centre | (~same_code & (dot >= -0.8) & (gap < CLASH_CENTRE * w)))
    rev = ~alike & ~one & (dot < -0.8)
    if not rev.any():
        return one
    k = np.flatnonzero(rev)
    ia, ib, dk, wk = i[k], j[k], d[k], w[k]
    along = np.einsum("ij,ij->i", dk, xs[ia])
    down = np.einsum("ij,ij->i", dk, ys[ia])
    u, v = along / wk, down / wk

    ua, va = axis_steps(xs[ia], ys[ia], widths[ia], heights[ia], dk)
    ub, vb = axis_steps(xs[ib], ys[ib], widths[ib], heights[ib], -dk)
    tight = (_between(ua, 0.85, 1.15) & _between(va, 0.8, 1.2)
             & _between(ub, 0.85, 1.15) & _between(vb, 0.8, 1.2))
    # _opposite_corners(measured=True): the step along each frame's own axes
    back_u = np.einsum("ij,ij->i", -dk, xs[ib])
    back_v = np.einsum("ij,ij->i", -dk, ys[ib])
    with np.errstate(divide="ignore", invalid="ignore"):
        measured = ((np.minimum(np.minimum(along, down), np.minimum(back_u, back_v)) > 0)
                    & (np.abs(along - back_u) < 0.12 * along)
                    & (np.abs(down - back_v) < 0.12 * down)
                    & _between(along / wk, 0.55, 1.6) & _between(down / along, 1.1, 1.9))
        loose = _between(u, 0.65, 1.4) & _between(v / u, 1.15, 1.9)
    sc = same_code[k]
    one[k] = (u > 0) & (tight | (sc & measured) | (sc & loose))
    return one


def _between(a: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return (a > lo) & (a < hi)


def _group_same_card(reads: list[_Read]) -> list[list[_Read]]:
    """Connected groups of reads of one card, each sorted by confidence (highest first)."""
    pairs = _pairs_in_reach(reads)
    labels = component_labels(len(reads), pairs[_same_card_pairs(reads, pairs)])
    groups: dict[int, list[_Read]] = {}
    for label, r in zip(labels, reads, strict=True):
        groups.setdefault(label, []).append(r)
    return [sorted(g, key=lambda r: -r.prob) for g in groups.values()]


def _pairs_in_reach(reads: list[_Read]) -> np.ndarray:
    """Index pairs ``(i, j)``, ``i < j`` in row order, of reads close enough for
    :func:`_same_card` to join: corner points within 3.5 card widths (the farthest opposite
    corners it accepts are 3.44 apart) or within the centre tolerance plus both frames' half
    diagonals. The others cannot be one card; testing every pair one by one cost 2.5 ms a
    frame.

    >>> import numpy as np
    >>> from vision.proposals import IndexFrame
    >>> def read(x): return _Read(0, 0.99, 1.0, IndexFrame(np.array([x, 0.0]),
    ...     np.array([1.0, 0.0]), np.array([0.0, 1.0]), 50.0, 70.0, True))
    >>> _pairs_in_reach([read(0.0), read(100.0), read(900.0)]).tolist()
    [[0, 1]]
    """
    if len(reads) < 2:
        return np.zeros((0, 2), int)
    pts = np.array([r.frame.point for r in reads])
    widths = np.array([r.frame.width for r in reads])
    half_diag = 0.5 * np.hypot(widths, [r.frame.height for r in reads])
    dist = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)
    w = np.minimum(widths[:, None], widths[None, :])
    reach = np.maximum(3.5 * w, max(SAME_CENTRE, CLASH_CENTRE) * w
                       + half_diag[:, None] + half_diag[None, :])
    return np.argwhere(np.triu(dist <= reach, 1))


def _card_quad(group: list[_Read]) -> np.ndarray:
    """Card corners (its own TL, TR, BR, BL): from both index corners when both were read,
    otherwise from the best read and the estimated card size at its placement scale
    (:meth:`_Read.corners`)."""
    best = group[0]
    f = best.frame
    for other in group[1:]:
        if float(np.dot(other.frame.x_axis, f.x_axis)) < -0.8:
            d = other.frame.point - f.point
            x = float(np.dot(d, f.x_axis)) * f.x_axis
            y = float(np.dot(d, f.y_axis)) * f.y_axis
            return np.array([f.point, f.point + x, other.frame.point, f.point + y])
    return best.corners()


def _pt(p: np.ndarray) -> list[float]:
    return [round(float(p[0]), 1), round(float(p[1]), 1)]
