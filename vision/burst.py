"""Several frames of a still layout, read as one (a *burst*).

A table camera sees the same layout many times a second. A card the reader is unsure of in
one frame is often sure in the next: its confidence near the operating threshold turns on the
sensor noise and the compression of that one frame. So the frames of a burst are read one by
one (:meth:`vision.recognize.Recognizer.recognize`, each at the operating threshold) and their
reports fused (:func:`fuse`):

* reports of one code within :data:`SAME_CARD` card widths of each other, from different
  frames, are one card (its best report, with the number of frames that read it);
* the same code reported apart in frames that never report it twice is still one card placed
  two ways (a card read at one index corner is placed from the estimated card size), up to
  :data:`SAME_CODE_APART` card widths;
* two codes reported at one place (centres within :data:`CONFLICT` card widths, less than the
  0.26-card pitch of an overlapped hand) refuse the card: a frame that read it otherwise is
  as sure as the one that read it so;
* a card must be read in ``min_frames`` frames (all of a shorter burst): a misread is most
  often a one-frame read;
* face-down cards are those seen in at least half the frames (a false face-down card comes
  and goes with the noise, a real one stays); refusals where no card was fused;
* a frame's ``"warning"`` (no colour, mirrored) refuses every face-up card of the burst.

The burst is meant for a *still* layout (the table's cross-check after a deal or a reveal):
frames where a hand or a card moves between them read a card in two places. More chances to
read a card are also more chances to misread it, so the threshold and the agreement for
bursts are chosen on calibration bursts of the training designs (the model's ``"burst"``
metadata; ``models/cards_v4.md``, twelfth session: bursts of three, two frames agreeing, at
0.993). Measured there and on the validation designs, bursts read no more cards than single
frames at equal misreads (the recall-misread curve is the same); they halve false face-down
cards.

>>> card = lambda code, x, conf: {"code": code, "confidence": conf, "center": [x, 100.0],
...     "corners": [[x - 25, 65], [x + 25, 65], [x + 25, 135], [x - 25, 135]]}
>>> frames = [{"cards": [card("QH", 100, 0.995)], "face_down": [], "unreadable": []},
...           {"cards": [], "face_down": [], "unreadable": [{"center": [100, 100]}]},
...           {"cards": [card("QH", 102, 0.999), card("7S", 300, 0.998)],
...            "face_down": [], "unreadable": []}]
>>> [(c["code"], c["confidence"], c["frames"]) for c in fuse(frames)["cards"]]
[('QH', 0.999, 2), ('7S', 0.998, 1)]
>>> frames[1]["cards"] = [card("QD", 101, 0.996)]           # read otherwise in one frame
>>> fused = fuse(frames)
>>> [c["code"] for c in fused["cards"]], fused["unreadable"]
(['7S'], [{'center': [102.0, 100.0]}])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from vision.frames import refuse_codes

#: Reports of one code from different frames within this many card widths are one card
#: (the evaluation counts a right code within 0.6 card widths as the card).
SAME_CARD = 0.6
#: The same code placed this far apart, in frames that never report it twice, is one card.
SAME_CODE_APART = 1.0
#: Two codes reported within this many card widths of each other are one card read two ways.
CONFLICT = 0.15
#: A face-down card must be seen in at least this share of the frames.
FACE_DOWN_SHARE = 0.5


@dataclass
class _Card:
    code: str
    center: np.ndarray
    width: float
    best: dict
    frames: set[int] = field(default_factory=set)


def card_width(card: dict) -> float:
    """Mean length of a reported card's top and bottom edges, in pixels."""
    q = np.asarray(card["corners"], np.float64)
    return float((np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2)


def _cards(results: Sequence[dict], threshold: float) -> list[_Card]:
    cards: list[_Card] = []
    for k, result in enumerate(results):
        for rep in sorted(result["cards"], key=lambda c: -c["confidence"]):
            if rep["confidence"] < threshold:
                continue
            p, w = np.asarray(rep["center"], np.float64), card_width(rep)
            same = [c for c in cards if c.code == rep["code"] and k not in c.frames
                    and np.linalg.norm(c.center - p) < SAME_CARD * min(w, c.width)]
            if same:
                c = min(same, key=lambda c: float(np.linalg.norm(c.center - p)))
                c.frames.add(k)
                if rep["confidence"] > c.best["confidence"]:
                    c.best, c.center, c.width = rep, p, w
            else:
                cards.append(_Card(rep["code"], p, w, rep, {k}))
    # one card placed two ways in different frames: the surer placing takes the other in
    kept: list[_Card] = []
    for c in sorted(cards, key=lambda c: -c.best["confidence"]):
        home = next((k for k in kept if k.code == c.code and not k.frames & c.frames
                     and np.linalg.norm(k.center - c.center)
                     < SAME_CODE_APART * min(k.width, c.width)), None)
        if home is None:
            kept.append(c)
        else:
            home.frames |= c.frames
    return [c for c in cards if any(c is k for k in kept)]  # in the order first read


def _points(results: Sequence[dict], key: str) -> list[tuple[int, np.ndarray]]:
    return [(k, np.asarray(p["center"], np.float64)) for k, r in enumerate(results)
            for p in r[key]]


def _clusters(points: list[tuple[int, np.ndarray]], radius: float) -> list[tuple[np.ndarray, set]]:
    """Points of different frames within ``radius`` pixels of a cluster's first point."""
    out: list[tuple[np.ndarray, set[int]]] = []
    for k, p in points:
        for centre, frames in out:
            if k not in frames and np.linalg.norm(centre - p) < radius:
                frames.add(k)
                break
        else:
            out.append((p, {k}))
    return out


def fuse(results: Sequence[dict], threshold: float = 0.0, min_frames: int = 1) -> dict:
    """One result (the shape of :meth:`Recognizer.recognize`'s) from the results of the frames
    of a burst; each card gains ``"frames"``, the number of frames that read it. Reports below
    ``threshold`` are dropped first (each frame was read at the operating threshold already);
    a card must then be read in ``min_frames`` frames (all of them, in a shorter burst).
    """
    if not results:
        raise ValueError("a burst needs at least one frame")
    cards = _cards(results, threshold)
    widths = [c.width for c in cards] or [card_width(c) for r in results for c in r["cards"]]
    # face-down and refused cards carry no size: the frames' cards give the scale
    scale = float(np.median(widths)) if widths else 50.0
    out_cards, unreadable = [], []
    for c in cards:
        if any(o.code != c.code and np.linalg.norm(o.center - c.center)
               < CONFLICT * min(o.width, c.width) for o in cards):
            if not any(np.linalg.norm(c.center - u) < 0.5 * scale for u in unreadable):
                unreadable.append(c.center)  # one refusal for the card read two ways
            continue
        if len(c.frames) < min(min_frames, len(results)):
            continue
        out_cards.append({**c.best, "frames": len(c.frames)})
    centres = np.array([c["center"] for c in out_cards], np.float64).reshape(-1, 2)

    def near_card(p: np.ndarray) -> bool:
        return bool((np.linalg.norm(centres - p, axis=1) < 0.5 * scale).any())

    backs = [p for p, frames in _clusters(_points(results, "face_down"), 0.5 * scale)
             if len(frames) >= FACE_DOWN_SHARE * len(results)]
    for p, _ in _clusters(_points(results, "unreadable"), 0.5 * scale):
        if not near_card(p) and not any(np.linalg.norm(p - u) < 0.5 * scale
                                        for u in [*unreadable, *backs]):
            unreadable.append(p)
    fused: dict = {"cards": out_cards,
                   "face_down": [{"center": _pt(p)} for p in backs],
                   "unreadable": [{"center": _pt(p)} for p in unreadable],
                   "frames": len(results),
                   "elapsed_ms": round(sum(float(r.get("elapsed_ms", 0.0)) for r in results), 1)}
    if results and "quality" in results[0]:  # one still camera: its first frame's
        fused["quality"] = results[0]["quality"]
    warnings = [r["warning"] for r in results if r.get("warning")]
    if warnings:
        fused = refuse_codes(fused, warnings[0])
    return fused


def _pt(p: np.ndarray) -> list[float]:
    return [round(float(p[0]), 1), round(float(p[1]), 1)]
