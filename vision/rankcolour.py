"""A card's rank and colour where its suit is in doubt.

The Monster Match hands are ranked by rank and colour alone (three or four of a kind, all
of one colour or not) but for the top one, four of a kind suited, which a floorperson
validates from the cards themselves. The reader is surer of a card's rank and colour than of
its suit: the suit within a colour is a small glyph under the rank (``models/cards_v5.md``,
twentieth and twenty-first sessions). So a card whose code is below the operating threshold,
but whose rank and colour are sure, is reported as ``unreadable`` *with* its rank, colour,
confidence and corners: the shoe's card can be checked against it (:mod:`controller.fusion`),
and a hand's rank follows from it unless the hand holds four of a kind of one colour.

The reader's probabilities over the 52 codes are summed over the two suits of each colour
(:func:`rank_colour_probs`: 26 classes, rank-major, black before red), and those reads go
through the very merge the codes go through (:func:`vision.merge.merge_reads`: reads of one
card grouped, a card read two ways refused, two corners read alike scored higher), each read
standing for its rank and colour by one code of them (:func:`representative`: spades for
black, hearts for red). The threshold is chosen by the misread rule on rank-and-colour
reports, apart from the codes' own (``python -m vision.calibrate_rank_colour``).

>>> p = np.zeros((1, 54)); p[0, CLASS_INDEX["QH"]] = 0.6; p[0, CLASS_INDEX["QD"]] = 0.399
>>> k = int(rank_colour_probs(p).argmax()); name(k), round(float(rank_colour_probs(p)[0, k]), 3)
(('Q', 'red'), 0.999)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vision.codes import CLASS_INDEX, CLASSES, RANKS
from vision.merge import CLASH_CENTRE, SAME_CENTRE, _Read, merge_reads, read_floor

COLOURS = ("black", "red")
#: Each suit's colour, as an index of :data:`COLOURS`.
SUIT_COLOUR = {"S": 0, "C": 0, "H": 1, "D": 1}
#: The 26 rank-and-colour classes, rank-major: ``("A", "black"), ("A", "red"), ...``.
RANK_COLOUR_NAMES: tuple[tuple[str, str], ...] = tuple((r, c) for r in RANKS for c in COLOURS)
#: ``(len(CLASSES), 26)``: 1 where a code has that rank and colour (face down, reject: none).
_MATRIX = np.zeros((len(CLASSES), len(RANK_COLOUR_NAMES)), np.float32)
for _i, _code in enumerate(CLASSES[:52]):
    _MATRIX[_i, 2 * RANKS.index(_code[0]) + SUIT_COLOUR[_code[1]]] = 1.0
#: The suit that stands for each colour in the merge (:func:`representative`).
_REPRESENTATIVE_SUIT = ("S", "H")


def rank_colour_probs(probs: np.ndarray) -> np.ndarray:
    """``(N, 26)``: each read's probability of each rank and colour (the two suits of a
    colour summed), from the reader's ``(N, len(CLASSES))`` probabilities."""
    return np.asarray(probs, np.float32) @ _MATRIX


def name(k: int) -> tuple[str, str]:
    """Rank and colour of class ``k``: ``name(23)`` is ``('Q', 'red')``.

    >>> name(0), name(23)
    (('A', 'black'), ('Q', 'red'))
    """
    return RANK_COLOUR_NAMES[k]


def representative(k: int) -> int:
    """The code (an index of :data:`vision.codes.CLASSES`) that stands for rank-and-colour
    class ``k`` in the merge: the spade of a black rank, the heart of a red one.

    >>> CLASSES[representative(23)], CLASSES[representative(0)]
    ('QH', 'AS')
    """
    rank, colour = RANK_COLOUR_NAMES[k]
    return CLASS_INDEX[rank + _REPRESENTATIVE_SUIT[COLOURS.index(colour)]]


def of_code(code: str) -> tuple[str, str]:
    """A card code's rank and colour.

    >>> of_code("TD")
    ('T', 'red')
    """
    return code[0], COLOURS[SUIT_COLOUR[code[1]]]


def rank_colour_reads(reads: list[_Read], floor: float = 0.0) -> list[_Read]:
    """Each read that knows its rank and colour at ``floor`` or more, as a read of the code
    that stands for them (:func:`representative`) at their probability: what
    :func:`vision.merge.merge_reads` merges into rank-and-colour cards."""
    return [replace(r, cls=representative(r.rank_colour), prob=r.rank_colour_prob)
            for r in reads if r.rank_colour >= 0 and r.rank_colour_prob >= floor]


def with_rank_colour(result: dict, reads: list[_Read], threshold: float) -> dict:
    """``result`` (:func:`vision.merge.merge_reads` of ``reads`` at the code threshold) with
    every card whose rank and colour merge at ``threshold`` but that is not reported by its
    code added to the refusals as ``{"center", "rank", "color", "confidence", "corners"}``
    (in place of the plain refusals within half a card width of it).

    A rank-and-colour card is the reported card itself when it lies within
    :data:`vision.merge.CLASH_CENTRE` card widths of it, or within
    :data:`vision.merge.SAME_CENTRE` with the same rank and colour: reads too unsure of their
    code to be merged with the card's own, but sure of its rank and colour, lie a hand step
    off it (a neighbour's corner showing its index) and would be split off as an identical
    card (:func:`vision.merge.split_twins`); a neighbour of the same rank and colour, another
    suit, is lost with them.

    >>> from vision.proposals import IndexFrame
    >>> def read(code, other, p, x):  # an index corner at (x, 0) of a card 60 x 87, read
    ...     f = IndexFrame(np.array([x, 0.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0]),
    ...                    60.0, 87.0, True)                  # as code at p, other at 1 - p
    ...     probs = np.zeros((1, len(CLASSES)))
    ...     probs[0, CLASS_INDEX[code]], probs[0, CLASS_INDEX[other]] = p, 1 - p
    ...     rc = rank_colour_probs(probs)[0]
    ...     return _Read(CLASS_INDEX[code], p, 1.0, f, 1.0, int(rc.argmax()), float(rc.max()))
    >>> reads = [read("QH", "QD", 0.8, 0.0), read("7S", "7C", 0.9995, 300.0)]
    >>> result = merge_reads(reads, 0.997)
    >>> [c["code"] for c in result["cards"]], result["unreadable"]
    (['7S'], [{'center': [30.0, 43.5]}])
    >>> u = with_rank_colour(result, reads, 0.997)["unreadable"]
    >>> [(v["rank"], v["color"], v["confidence"], v["center"]) for v in u]
    [('Q', 'red', 1.0, [30.0, 43.5])]
    >>> with_rank_colour(result, [read("QH", "KH", 0.8, 0.0)], 0.997)["unreadable"]  # rank unsure
    [{'center': [30.0, 43.5]}]
    """
    # the merge's cards come of the reads at its floor alone (the rest make its refusals and
    # backs, not wanted here): only those, about a tenth of a frame's reads, are merged
    known = merge_reads(rank_colour_reads(reads, read_floor(threshold)), threshold)["cards"]
    cards = [(np.array(c["center"]), of_code(c["code"])) for c in result["cards"]]
    unreadable = list(result["unreadable"])
    for rc in known:
        centre = np.array(rc["center"])
        width = float(np.linalg.norm(np.subtract(rc["corners"][1], rc["corners"][0])))
        rank_colour = of_code(rc["code"])
        if any(d < CLASH_CENTRE * width or (d < SAME_CENTRE * width and rank_colour == named)
               for d, named in ((float(np.linalg.norm(c - centre)), n) for c, n in cards)):
            continue  # the card reported by its code
        unreadable = [u for u in unreadable if "rank" in u
                      or float(np.linalg.norm(np.subtract(u["center"], centre))) >= 0.5 * width]
        unreadable.append({"center": rc["center"], "rank": rank_colour[0],
                           "color": rank_colour[1], "confidence": rc["confidence"],
                           "corners": rc["corners"]})
    return {**result, "unreadable": unreadable}
