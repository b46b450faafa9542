"""Cards placed at the wrong spot: each card by its nearest spot against whole hands.

    python benchmarks/spot_assignment.py [--frames 400] [--seed 4600]
    python benchmarks/spot_assignment.py --labelled DIR   # read by the bundled reader

Geometry only (no reader): the simulator's labelled cards, their corners moved by
``--corner-px`` pixels of noise (standard deviation) and the calibration off by a random
turn (``--turn-deg``) and shift (``--shift-mm``) of the layout, as a camera's calibration
drifts. Scenarios, ``--frames`` frames each:

* ``data``: the deals and drawing of the data sets (:func:`vision.synth.random_deal`);
* ``long``: hands of five or six cards at every seat, as the data sets draw them (the step
  across a hand not shortened, so some hands stray);
* ``long-sparse``: such hands at every other seat, the seats between empty;
* ``in-area``: ``long`` drawn as the demo's camera draws (``hands_in_area``);
* ``dealt``: ``long`` and ``long-sparse`` with each hand moved so that its first card lies at
  the spot, as a dealer deals a hand outward from the spot.

For each: cards, cards placed wrong (spot other than the label's, or off the layout) by each
rule, and the cards each rule gets right that the other gets wrong. ``--labelled DIR`` instead
reads a labelled directory's frames (:mod:`vision.dataset`) with the bundled reader and places
what it reads, by the frame's own homography and card size (the labels'), the cards it read
by code matched to the labelled card of that code. Forty-sixth session:
``models/cards_v7.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision import handspots  # noqa: E402
from vision.calibration import TableCalibration, assign_spots  # noqa: E402
from vision.codes import CARD_CODES  # noqa: E402
from vision.synth import SPOTS, random_deal, render_table  # noqa: E402
from vision.tablesize import from_labels  # noqa: E402

SCENARIOS = ("data", "long", "long-sparse", "in-area", "dealt")


def _apply(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    v = pts @ h[:, :2].T + h[:, 2]
    return v[:, :2] / v[:, 2:3]


def _deal(scenario: str, k: int, rng: np.random.Generator) -> dict[str, list[str]]:
    if scenario == "data":
        return random_deal(rng)
    sparse = scenario == "long-sparse" or (scenario == "dealt" and k % 2 == 1)
    seats = range(1 + k // 2 % 2, 8, 2) if sparse else range(1, 8)
    deck = list(rng.permutation(CARD_CODES))
    return {f"seat{s}": [deck.pop() for _ in range(5 + int(rng.integers(2)))] for s in seats}


def _dealt_outward(labels: dict, rng: np.random.Generator) -> None:
    """Move each hand so that its first card's centre lies at its spot (12 mm of jitter)."""
    to_image = np.asarray(labels["table_to_image"], np.float64)
    to_layout = np.linalg.inv(to_image)
    first: dict[str, np.ndarray] = {}
    for card in labels["cards"]:
        q = _apply(to_layout, np.asarray(card["corners"], np.float64))
        if card["spot"] not in first:
            sx, sy, _ = SPOTS[card["spot"]]
            first[card["spot"]] = np.array([sx, sy]) + rng.normal(0, 12, 2) - q.mean(0)
        moved = q + first[card["spot"]]
        card["corners"] = _apply(to_image, moved).tolist()
        card["center"] = _apply(to_image, moved.mean(0, keepdims=True))[0].tolist()


def _result(labels: dict, rng: np.random.Generator, corner_px: float) -> dict:
    """What a reader that found every card would report, with ``corner_px`` of noise."""
    out: dict[str, list] = {"cards": [], "face_down": [], "unreadable": []}
    for card in labels["cards"]:
        corners = np.asarray(card["corners"], np.float64) + rng.normal(0, corner_px, (4, 2))
        centre = corners.mean(0).tolist()
        if card["code"] == "face_down":
            out["face_down"].append({"center": centre})
        elif not card.get("readable", True):
            out["unreadable"].append({"center": centre})
        else:
            out["cards"].append({"code": card["code"], "center": centre,
                                 "corners": corners.tolist()})
    return out


def _drifted(labels: dict, rng: np.random.Generator, turn_deg: float, shift_mm: float
             ) -> TableCalibration:
    table = from_labels(labels)
    a = np.radians(rng.normal(0, turn_deg))
    tx, ty = rng.normal(0, shift_mm, 2)
    drift = np.array([[np.cos(a), -np.sin(a), tx], [np.sin(a), np.cos(a), ty], [0, 0, 1]])
    return TableCalibration(drift @ table.image_to_layout, card_mm=table.card_mm)


def _truth(labels: dict) -> list[str]:
    """The label spots in the order :func:`assign_spots` returns the cards."""
    cards = labels["cards"]
    return ([c["spot"] for c in cards if c["code"] != "face_down" and c.get("readable", True)]
            + [c["spot"] for c in cards if c["code"] == "face_down"]
            + [c["spot"] for c in cards if c["code"] != "face_down"
               and not c.get("readable", True)])


def _count(counts: dict[str, int], truth: str, nearest: str | None, by_hand: str | None) -> None:
    """Add one card placed each way (``truth``: its label's spot)."""
    counts["cards"] += 1
    counts["wrong_nearest"] += nearest != truth
    counts["wrong_by_hand"] += by_hand != truth
    counts["mended"] += nearest != truth and by_hand == truth
    counts["broken"] += nearest == truth and by_hand != truth


def _counts() -> dict[str, int]:
    return {"cards": 0, "wrong_nearest": 0, "wrong_by_hand": 0, "mended": 0, "broken": 0}


def run(scenario: str, frames: int, seed: int, corner_px: float, turn_deg: float,
        shift_mm: float) -> dict[str, int]:
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario)])
    counts = _counts()
    for k in range(frames):
        deal = _deal(scenario, k, rng)
        _, labels = render_table(deal, rng, design="proc:0:1", size=(1280, 720), clean=True,
                                 hands_in_area=scenario == "in-area")
        if scenario == "dealt":
            _dealt_outward(labels, rng)
        result = _result(labels, rng, corner_px)
        cal = _drifted(labels, rng, turn_deg, shift_mm)
        truth = _truth(labels)
        placed = {}
        for by_hand in (False, True):
            r = assign_spots(result, dataclasses.replace(cal, by_hand=by_hand))
            placed[by_hand] = [c["spot"] for key in ("cards", "face_down", "unreadable")
                               for c in r[key]]
        for t, a, b in zip(truth, placed[False], placed[True], strict=True):
            _count(counts, t, a, b)
    return counts


def run_labelled(directory: Path) -> dict[str, int]:
    """The counts of :func:`run` for the cards the bundled reader reads in ``directory``."""
    import json

    from vision.evaluate import labelled_images
    from vision.recognize import DEFAULT_MODEL, Recognizer, load_image

    rec = Recognizer(DEFAULT_MODEL)
    counts = _counts()
    for image, label_path in labelled_images(directory):
        labels = json.loads(label_path.read_text())
        spot_of = {c["code"]: c["spot"] for c in labels["cards"] if c["code"] != "face_down"}
        table = from_labels(labels)
        result = rec.recognize(load_image(image))
        placed = {}
        for by_hand in (False, True):
            cal = TableCalibration(table.image_to_layout, card_mm=table.card_mm, by_hand=by_hand)
            placed[by_hand] = [(c["code"], c["spot"]) for c in assign_spots(result, cal)["cards"]]
        for (code, a), (_, b) in zip(placed[False], placed[True], strict=True):
            if code in spot_of:  # (a misread names no card on the table)
                _count(counts, spot_of[code], a, b)
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=400)
    ap.add_argument("--seed", type=int, default=4600)
    ap.add_argument("--corner-px", type=float, default=2.0)
    ap.add_argument("--turn-deg", type=float, default=1.0)
    ap.add_argument("--shift-mm", type=float, default=8.0)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--labelled", type=Path, help="a labelled directory, read by the reader")
    ap.add_argument("--anchor-share", type=float, default=handspots.ANCHOR_SHARE,
                    help="the anchoring radius's share of half the way to the next spot")
    args = ap.parse_args(argv)
    handspots.ANCHOR_SHARE = args.anchor_share
    total = {"cards": 0, "broken": 0}
    print(f"{'scenario':12s} {'cards':>7s} {'wrong, nearest':>15s} {'wrong, by hand':>15s} "
          f"{'mended':>7s} {'broken':>7s}")
    for scenario in [str(args.labelled)] if args.labelled else args.scenarios.split(","):
        c = (run_labelled(args.labelled) if args.labelled else
             run(scenario, args.frames, args.seed, args.corner_px, args.turn_deg, args.shift_mm))
        total["cards"] += c["cards"]
        total["broken"] += c["broken"]
        print(f"{scenario:12s} {c['cards']:7d} {c['wrong_nearest']:15d} {c['wrong_by_hand']:15d} "
              f"{c['mended']:7d} {c['broken']:7d}", flush=True)
    print(f"all: {total['cards']} cards, {total['broken']} right by nearest spot and wrong by hand")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
