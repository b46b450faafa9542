"""Where the recogniser's misses go, on a labelled directory (the format of ``sample_images/``).

    python benchmarks/vision_misses.py DIR [--model M] [--threshold T] [--calibrated]
        [--set module.NAME=VALUE ...]

Each readable face-up card is put in the first of these that holds:

* **reported**: a card of its code is reported within 0.6 card widths of its centre;
* **no candidate**: no candidate frame lies on a visible index corner (within 0.12 card widths,
  axes within ~25 degrees): the proposals missed it;
* **refused or merged**: a candidate there reads the right code at or above the threshold,
  yet the card is not reported (refused for a disagreeing read, or merged with another card);
* **right code below threshold**: the best read of the right code there is below it;
* **other class on top**: every candidate there reads another class best.

Then recall by card width (pixels, scaled to 720p), by overlap (the top card of its hand, or
a card with a later card over it), and, where the labels record it (``"photometric"``,
frames rendered since 2026-11-30), by blur, JPEG quality and the frame's glare spots; by the
camera's tilt seen at the card (:func:`vision.evaluate.camera_tilt`, from the labels'
homography); and the
kinds above by the card's place in its hand (alone, first, between, last: the walk along a
hand, ``vision/handwalk.py``, is for the cards between). Frames of a multi-deck shoe
(``python -m vision.dataset ... --identical-pairs P``) add recall of the cards whose code
the frame holds twice against the others, and how many pairs of identical readable cards
were both reported (each report matched to one card as ``vision-eval`` matches them: one
report between two identical cards is within reach of both). Last, the misreads (a reported
card on a labelled card of another code, matched as ``vision-eval`` does) by kind: the code
of another card within :data:`NEIGHBOUR` card widths (a right read placed on the wrong
card), else the same rank in another suit, another rank of the same suit, or both wrong.
With ``--calibrated`` every frame is read at its table's card sizes (its labels' homography,
:func:`vision.tablesize.from_labels`), as ``vision-eval --calibrated`` reads, at the model's
calibrated threshold where its ``.json`` names one. With ``--set module.NAME=VALUE`` (as
often as needed) the frames are read with those pipeline settings (:mod:`vision.settings`),
to see where a change moves the misses. Not a speed benchmark: see
``vision_bench.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.codes import CLASS_INDEX  # noqa: E402
from vision.evaluate import (  # noqa: E402
    CODE_RADIUS,
    label_tilt,
    labelled_images,
    match_reports,
)
from vision.recognize import DEFAULT_MODEL, Recognizer, load_image  # noqa: E402
from vision.settings import applied, parse  # noqa: E402
from vision.tablesize import from_labels  # noqa: E402

ON_CORNER = 0.12
#: A misread whose code is that of a labelled card this near (card widths) was a placing.
NEIGHBOUR = 1.5
MISREAD_KINDS = ("another card's code nearby", "same rank, other suit", "same suit, other rank",
                 "rank and suit wrong")
KINDS = ("reported", "no candidate", "refused or merged", "right code below threshold",
         "other class on top")


def classify_card(card: dict, reads: list, result: dict, threshold: float) -> tuple[str, float]:
    """The miss kind of one readable card, and the best probability of its code there."""
    w = card["card_width_px"]
    centre = np.array(card["center"])
    if any(c["code"] == card["code"]
           and np.linalg.norm(np.array(c["center"]) - centre) / w < CODE_RADIUS
           for c in result["cards"]):
        return "reported", 1.0
    q = np.array(card["corners"], float)
    on_corner = []
    for a, b, visible in ((q[0], q[1], card["index_visible"][0]),
                          (q[2], q[3], card["index_visible"][1])):
        if visible < 0.85:
            continue
        x_dir = (b - a) / np.linalg.norm(b - a)
        on_corner += [r for r in reads if np.linalg.norm(r.frame.point - a) < ON_CORNER * w
                      and float(np.dot(r.frame.x_axis, x_dir)) > 0.9]
    if not on_corner:
        return "no candidate", 0.0
    code = CLASS_INDEX[card["code"]]
    best = max((r.prob for r in on_corner if r.cls == code), default=0.0)
    if best >= threshold:
        return "refused or merged", best
    if best > 0:
        return "right code below threshold", best
    return "other class on top", 0.0


def misread_kinds(result: dict, cards: list[dict]) -> list[str]:
    """The kind (:data:`MISREAD_KINDS`) of each misread among ``result``'s cards, matched to the
    labelled ``cards`` as ``vision-eval`` does (:func:`vision.evaluate.match_reports`).

    >>> cards = [{"code": "6S", "center": [0, 0], "card_width_px": 50.0},
    ...          {"code": "KD", "center": [40, 0], "card_width_px": 50.0}]
    >>> def at(code, x): return {"cards": [{"code": code, "center": [x, 0]}]}
    >>> misread_kinds(at("TS", 2), cards), misread_kinds(at("6C", 2), cards)
    (['same suit, other rank'], ['same rank, other suit'])
    >>> misread_kinds(at("KD", 2), cards), misread_kinds(at("6S", 2), cards)
    (["another card's code nearby"], [])
    """
    kinds = []
    for card, (best, _) in zip(result["cards"], match_reports(result["cards"], cards),
                               strict=True):
        if best is None or cards[best]["code"] == card["code"]:
            continue
        truth, read = cards[best]["code"], card["code"]
        p = np.array(card["center"], float)
        if any(t["code"] == read and np.linalg.norm(p - np.array(t["center"]))
               < NEIGHBOUR * t["card_width_px"] for t in cards):
            kinds.append(MISREAD_KINDS[0])
        elif truth[0] == read[0]:
            kinds.append(MISREAD_KINDS[1])
        elif truth[1] == read[1]:
            kinds.append(MISREAD_KINDS[2])
        else:
            kinds.append(MISREAD_KINDS[3])
    return kinds


def _bucket_width(w720: float) -> str:
    return "<50" if w720 < 50 else "50-60" if w720 < 60 else "60-70" if w720 < 70 else ">=70"


def _bucket_blur(p: dict) -> str:
    if p.get("clean"):
        return "none (clean render)"
    if p.get("gaussian_blur"):
        return "gaussian"
    return "motion" if p.get("motion_blur_px") else "none"


def hand_place(cards: list[dict], k: int) -> str:
    """Where card ``k`` lies in its hand (the labels' cards of its spot, in dealing order).

    >>> hand = [{"spot": "seat1"}, {"spot": "dealer"}, {"spot": "seat1"}, {"spot": "seat1"}]
    >>> [hand_place(hand, k) for k in range(4)]
    ['first', 'alone', 'between', 'last']
    """
    mine = [i for i, c in enumerate(cards) if c["spot"] == cards[k]["spot"]]
    if len(mine) == 1:
        return "alone"
    return "first" if k == mine[0] else "last" if k == mine[-1] else "between"


def _bucket_tilt(degrees: float) -> str:
    return "<15" if degrees < 15 else "15-30" if degrees < 30 else ">=30"


def _bucket_jpeg(p: dict) -> str:
    q = p.get("jpeg_quality", 100)
    return "<50" if q < 50 else "50-70" if q < 70 else ">=70"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--threshold", type=float, default=None,
                    help="operating threshold (default: the model's)")
    ap.add_argument("--calibrated", action="store_true",
                    help="read each frame at its table's card sizes (its labels' homography)")
    ap.add_argument("--set", action="append", default=[], metavar="module.NAME=VALUE",
                    help="read with this pipeline setting (vision.settings; repeatable)")
    args = ap.parse_args(argv)
    try:
        settings = [parse(text) for text in args.set]
    except ValueError as e:
        ap.error(str(e))
    with applied(settings):
        return _misses(args)


def _misses(args: argparse.Namespace) -> int:
    rec = Recognizer(args.model)
    thr = (args.threshold if args.threshold is not None
           else rec.calibrated_threshold
           if args.calibrated and rec.calibrated_threshold is not None
           else rec.threshold)
    kinds: Counter = Counter()
    below: list[float] = []
    by: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    by_place: dict[str, Counter] = defaultdict(Counter)
    misreads: Counter = Counter()
    pairs = Counter()
    for image, label_file in labelled_images(args.directory):
        labels = json.loads(label_file.read_text())
        reads = rec.read(load_image(image), from_labels(labels) if args.calibrated else None)
        result = rec.merge(reads, thr)
        photometric = labels.get("photometric")
        misreads.update(misread_kinds(result, labels["cards"]))
        held = Counter(c["code"] for c in labels["cards"] if c["code"] != "face_down")
        matched = {best for (best, _), c in zip(match_reports(result["cards"], labels["cards"]),
                                                 result["cards"], strict=True)
                   if best is not None and labels["cards"][best]["code"] == c["code"]}
        found: dict[str, list[bool]] = defaultdict(list)
        for k, card in enumerate(labels["cards"]):
            if card["code"] == "face_down" or not card.get("readable", True):
                continue
            kind, best = classify_card(card, reads, result, thr)
            kinds[kind] += 1
            found[card["code"]].append(k in matched)
            by["identical cards"]["a code held twice" if held[card["code"]] > 1
                                  else "the others"].append(k in matched)
            place = hand_place(labels["cards"], k)
            by_place[place][kind] += 1
            if kind == "right code below threshold":
                below.append(best)
            ok = kind == "reported"
            by["card width (720p px)"][_bucket_width(
                card["card_width_px"] * 720 / labels["height"])].append(ok)
            covered = place in ("first", "between")
            by["overlap"]["under a later card" if covered else "top of its hand"].append(ok)
            if photometric is not None:
                by["blur"][_bucket_blur(photometric)].append(ok)
                by["JPEG quality"][_bucket_jpeg(photometric)].append(ok)
                by["glare spots in the frame"][str(photometric.get("glare", 0))].append(ok)
            tilt = label_tilt(labels, card["center"])
            if tilt is not None:
                by["camera tilt (degrees)"][_bucket_tilt(tilt)].append(ok)
        for code, oks in found.items():
            if held[code] == 2 and len(oks) == 2:  # a pair of identical cards, both readable
                pairs["pairs"] += 1
                pairs["both reported"] += all(oks)
    total = sum(kinds.values())
    if not total:
        print("no readable face-up cards")
        return 1
    print(f"{args.directory}: {total} readable face-up cards, threshold {thr}")
    for kind in KINDS:
        print(f"  {kind:28s} {100 * kinds[kind] / total:5.1f}%  ({kinds[kind]})")
    if below:
        print(f"  (right code below threshold: median best probability {np.median(below):.3f})")
    if "a code held twice" not in by["identical cards"]:
        del by["identical cards"]  # a single deck's frames: nothing to compare
    for name, groups in by.items():
        cells = "  ".join(f"{g} {100 * np.mean(v):.1f}% (n={len(v)})"
                          for g, v in sorted(groups.items()))
        print(f"recall by {name}: {cells}")
    if pairs["pairs"]:
        print(f"identical pairs (a multi-deck shoe's): both cards reported in "
              f"{pairs['both reported']} of {pairs['pairs']}")
    print("by place in the hand: " + " / ".join(KINDS))
    for place in ("alone", "first", "between", "last"):
        n = sum(by_place[place].values())
        if n:
            print(f"  {place:8s} n={n:5d} " + " ".join(
                f"{100 * by_place[place][kind] / n:5.1f}%" for kind in KINDS))
    print(f"misreads {sum(misreads.values())}: " + ", ".join(
        f"{kind} {misreads[kind]}" for kind in MISREAD_KINDS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
