"""A card's confidence from all its agreeing reads: a logistic model fitted on rendered frames.

    python -m vision.confidence models/cards_v4.onnx --frames-per-design 160 --seed 51 \\
        --workers 2

A card is usually read more than once (its index corner reached by several candidates, its two
opposite corners, the hand walk's candidates), and the reader's probability vector says more
than its top entry. Before the fourteenth session a card's confidence was its best read's
probability (or the two-corner score, :func:`vision.recognize.card_score`); the
:class:`CardConfidence` model combines that score with how many reads agree and with how much
probability the best read leaves to its runner-up code (:func:`features`), as a logistic
regression of "this card is misread" fitted on cards of rendered frames of the *training*
designs (scenes never trained on, seeded like :mod:`vision.sweep` but with a seed of their own,
so that the frames the operating threshold is chosen on are not the ones the model is fitted on).

Cards are formed as :meth:`vision.recognize.Recognizer.merge` forms them, from the reads at or
above :attr:`CardConfidence.floor` (reads that disagree refuse the card, and refused cards are
left out); a card matched to a labelled card of its code is right, one matched to another
code a misread (:func:`vision.evaluate.match_reports`); false positives are left out (they are
not misreads of a card, and the threshold rule bounds them separately). The fit is
Newton-Raphson on standardised features with a small ridge penalty, deterministic; the
model's ``.json`` gets ``"card_confidence"`` and the operating threshold must be chosen again
(:mod:`vision.calibrate`): the confidence is a new number.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Names of :func:`features`, in order (recorded with the fitted weights).
FEATURES = ("score_logit", "log_reads", "runner_up_logit")
#: Reads of a card code at least this probable form cards when a model is fitted (the pair
#: floor of the 0.99 threshold, :func:`vision.recognize.pair_floor`, and its doubt floor).
FLOOR = 0.9
#: Probabilities are clipped this far from 0 and 1 before their logits are taken (the int8
#: reader's softmax reaches 1.0 in float32).
EPS = 1e-6
#: Ridge penalty on the standardised weights (not on the intercept).
RIDGE = 1.0


def logit(p: float) -> float:
    """``log(p / (1 - p))`` of ``p`` clipped to ``[EPS, 1 - EPS]``.

    >>> round(logit(0.5), 6), round(logit(0.99), 3), round(logit(1.0), 2)
    (0.0, 4.595, 13.82)
    """
    p = min(max(p, EPS), 1.0 - EPS)
    return math.log(p / (1.0 - p))


def features(score: float, reads: int, runner_up: float) -> np.ndarray:
    """The inputs of :class:`CardConfidence` (:data:`FEATURES`) for one card: its score
    (:func:`vision.recognize.card_score`), how many reads at or above the floor agree on it,
    and the probability of the runner-up code in its best read.

    >>> features(0.99, 1, 0.005).round(3).tolist()
    [4.595, 0.0, -5.293]
    """
    return np.array([logit(score), math.log(reads), logit(runner_up)])


@dataclass(frozen=True)
class CardConfidence:
    """``sigmoid(intercept + weights . features)``: the fitted probability that a card formed
    from reads at or above :attr:`floor` is read right.

    >>> m = CardConfidence(0.0, (1.0, 0.0, 0.0))   # the score itself
    >>> round(m(0.99, 3, 0.001), 6)
    0.99
    >>> m = CardConfidence(1.0, (0.8, 0.5, -0.3))
    >>> m(0.99, 3, 0.001) > m(0.99, 1, 0.001) > m(0.99, 1, 0.009)
    True
    >>> CardConfidence.from_meta(m.to_meta()) == m
    True
    """

    intercept: float
    weights: tuple[float, ...]
    floor: float = FLOOR

    def __call__(self, score: float, reads: int, runner_up: float) -> float:
        z = self.intercept + float(np.dot(self.weights, features(score, reads, runner_up)))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def to_meta(self) -> dict:
        return {"features": list(FEATURES), "intercept": self.intercept,
                "weights": list(self.weights), "floor": self.floor}

    @classmethod
    def from_meta(cls, meta: dict | None) -> CardConfidence | None:
        """The model of a reader's ``.json`` (``"card_confidence"``), or ``None`` without one;
        a model of other features is refused (``ValueError``), not misapplied."""
        if not meta:
            return None
        if list(meta.get("features", [])) != list(FEATURES):
            raise ValueError(f"card_confidence: features {meta.get('features')} are not "
                             f"{list(FEATURES)}")
        weights = tuple(float(w) for w in meta["weights"])
        floor = float(meta.get("floor", FLOOR))
        if not 0.5 <= floor < 1.0:
            raise ValueError(f"card_confidence: floor {floor} is not in [0.5, 1)")
        return cls(float(meta["intercept"]), weights, floor)


def fit(x: np.ndarray, wrong: np.ndarray, ridge: float = RIDGE,
        iterations: int = 50) -> CardConfidence:
    """Logistic regression of ``wrong`` (1 = misread) on ``x`` (rows of :func:`features`),
    returned as the confidence of being right, in raw feature units.

    >>> rng = np.random.default_rng(0)
    >>> s = rng.normal(size=4000)
    >>> wrong = (rng.random(4000) < 1 / (1 + np.exp(2 * s))).astype(float)
    >>> x = np.c_[s, rng.normal(size=4000), rng.normal(size=4000)]
    >>> m = fit(x, wrong)
    >>> round(m.weights[0], 1), abs(m.weights[1]) < 0.2
    (2.0, True)
    """
    mu, sd = x.mean(0), x.std(0) + 1e-12
    z = np.c_[np.ones(len(x)), (x - mu) / sd]
    w = np.zeros(z.shape[1])
    penalty = ridge * np.diag(np.r_[0.0, np.ones(z.shape[1] - 1)])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -500, 500)))
        grad = z.T @ (p - wrong) + penalty @ w
        hess = (z * (p * (1.0 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    raw = w[1:] / sd                       # the confidence of being right: minus the odds
    return CardConfidence(float(-(w[0] - np.dot(raw, mu))), tuple(float(v) for v in -raw))


def frame_cards(rec, reads: list, labels: dict, floor: float = FLOOR) -> tuple[np.ndarray,
                                                                               np.ndarray]:
    """Rows of :func:`features` and their truth (0 right, 1 misread) for the cards that
    ``reads`` form at ``floor`` (false positives left out)."""
    from vision.evaluate import match_reports

    groups = rec.card_groups(reads, floor)
    cards = [{"code": c, "center": centre} for c, centre, _ in groups]
    x, y = [], []
    for (code, _, feats), (best, _) in zip(groups, match_reports(cards, labels["cards"]),
                                           strict=True):
        if best is None:
            continue
        x.append(feats)
        y.append(int(labels["cards"][best]["code"] != code))
    return np.array(x, np.float64).reshape(-1, len(FEATURES)), np.array(y, np.int8)


_RECOGNIZERS: dict = {}


def _frame_job(job: tuple[str, str, int, int]) -> tuple[np.ndarray, np.ndarray, int]:
    import cv2

    from vision.recognize import Recognizer
    from vision.synth import random_deal, render_table

    cv2.setNumThreads(1)
    model, design, k, seed = job
    rng = np.random.default_rng([seed, k, sum(map(ord, design))])
    size = (1280, 720) if rng.random() < 0.75 else (1920, 1080)
    img, labels = render_table(random_deal(rng), rng, design=design, size=size)
    rec = _RECOGNIZERS.setdefault(model, Recognizer(model, threshold=0.5))
    readable = sum(1 for c in labels["cards"] if c["code"] != "face_down" and c["readable"])
    return (*frame_cards(rec, rec.read(img), labels), readable)


def collect(model: str, frames_per_design: int, seed: int, workers: int) -> dict[str, np.ndarray]:
    """Features (``x``) and truth (``y``) of every card of freshly rendered frames of the
    training designs (frame ``k`` of a design seeded as :mod:`vision.sweep` seeds it), each
    card's frame (``frame``) and the frames' readable face-up cards (``readable``)."""
    from vision.dataset import design_list

    jobs = [(model, d, k, seed) for d in design_list("train", seed)
            for k in range(frames_per_design)]
    xs, ys, frames, readable = [], [], [], 0
    t0 = time.time()
    with mp.get_context("spawn").Pool(workers) as pool:
        for i, (x, y, n) in enumerate(pool.imap(_frame_job, jobs, chunksize=4)):
            xs.append(x)
            ys.append(y)
            frames.append(np.full(len(y), i))
            readable += n
            if i % 250 == 0:
                print(f"{i}/{len(jobs)} frames, {time.time() - t0:.0f} s", flush=True)
        pool.close()
        pool.join()
    return {"x": np.concatenate(xs), "y": np.concatenate(ys),
            "frame": np.concatenate(frames), "readable": np.array(readable)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path, help="reader (its .json gets the fitted model)")
    ap.add_argument("--frames-per-design", type=int, default=160)
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--save", type=Path, default=None, help="also keep the features (npz)")
    args = ap.parse_args(argv)
    data = collect(str(args.model), args.frames_per_design, args.seed, args.workers)
    if args.save:
        np.savez(args.save, **data)
    x, y = data["x"], data["y"]
    if y.sum() < 20:
        raise SystemExit(f"only {int(y.sum())} misread cards among {len(y)}: too few to fit")
    model = fit(x, y.astype(np.float64))
    meta_path = args.model.with_suffix(".json")
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    meta["card_confidence"] = {**model.to_meta(), "fitted_on": {
        "frames_per_design": args.frames_per_design, "seed": args.seed,
        "cards": len(y), "misread": int(y.sum())}}
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{len(y)} cards, {int(y.sum())} misread; intercept {model.intercept:.4f}, weights "
          + ", ".join(f"{n} {w:.4f}" for n, w in zip(FEATURES, model.weights, strict=True))
          + f"; written to {meta_path} (choose the threshold again: vision.calibrate)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
