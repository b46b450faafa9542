"""How well readers rank their reads of labelled index crops, split by the suit rule.

    python benchmarks/crop_ranking.py --make hcal.npz --designs fonts-held-out-strict \\
        --scenes 240 --seed 201 [--camera-share 1]
    python benchmarks/crop_ranking.py hcal.npz models/cards_v5.onnx OTHER.onnx ...

``--make`` renders ``--scenes`` scenes of the decks ``--designs`` expands to
(:func:`vision.dataset.design_list` with ``--seed``), one deck a scene drawn at random, and saves
their crops (true and proposed index corners, as training data is cut) labelled with the suit
rule (:func:`vision.train.suit_illegible`). Then, per reader, over the card-code crops: the
share read right at 0.99 or more and the count read wrong there, and the right reads ranked
before the 5th, 10th, 20th and 50th wrong one (by the top probability: a threshold's best case
at that many misreads, without the pipeline around the reader), for all crops, the legible
and the illegible ones; and the same counts for the best pair of thresholds, one for legible
crops and a higher or lower one for illegible ones, chosen with the flag known (an oracle:
what telling the reader which crops are illegible could gain at most). Twenty-first session:
``models/cards_v5.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.recognize import Recognizer  # noqa: E402

#: Wrong reads at which the ranking is reported.
WRONG_COUNTS = (5, 10, 20, 50)
#: Thresholds the oracle pair is chosen from.
GRID = (0.9, 0.95, 0.97, 0.98, 0.99, 0.993, 0.995, 0.997, 0.998, 0.999, 0.9995, 0.9998,
        0.9999, 1.01)


def right_before(conf: np.ndarray, right: np.ndarray, counts: tuple[int, ...] = WRONG_COUNTS
                 ) -> dict[int, int]:
    """Right reads ranked (by ``conf``, highest first) before the k-th wrong one, per k.

    >>> conf = np.array([0.99, 0.98, 0.97, 0.96, 0.95])
    >>> right_before(conf, np.array([True, False, True, True, False]), (1, 2, 3))
    {1: 1, 2: 3, 3: 3}
    """
    ranked = right[np.argsort(-conf, kind="stable")]
    wrong_so_far = np.cumsum(~ranked)
    return {k: int(ranked[:int(np.searchsorted(wrong_so_far, k))].sum()) for k in counts}


def oracle_pair(conf: np.ndarray, right: np.ndarray, flagged: np.ndarray, wrong: int,
                grid: tuple[float, ...] = GRID) -> tuple[int, int, int]:
    """The most right reads with at most ``wrong`` wrong ones, over one threshold (the first
    number) and over a pair, one for unflagged and one for ``flagged`` reads (the second,
    with its wrong reads the third).

    >>> conf = np.array([0.999, 0.999, 0.99, 0.99])
    >>> oracle_pair(conf, np.array([True, False, True, True]),
    ...             np.array([False, True, False, True]), wrong=0)
    (0, 2, 0)
    """
    def count(sel: np.ndarray, t: float) -> tuple[int, int]:
        s = sel & (conf >= t)
        return int((s & right).sum()), int((s & ~right).sum())

    everyone = np.ones_like(flagged)
    one = max((r for r, w in (count(everyone, t) for t in grid) if w <= wrong), default=0)
    best = (0, 0)
    for t1 in grid:
        r1, w1 = count(~flagged, t1)
        for t2 in grid:
            r2, w2 = count(flagged, t2)
            if w1 + w2 <= wrong and r1 + r2 > best[0]:
                best = (r1 + r2, w1 + w2)
    return one, best[0], best[1]


def make(out: Path, designs: str, scenes: int, seed: int, camera_share: float = 0.0) -> None:
    """Render the crop file (see the module docstring); ``camera_share`` of its scenes seen
    through a badly set camera (:func:`vision.conditions.random_condition`)."""
    from vision.dataset import design_list
    from vision.train import DesignMix, generate

    decks = design_list(designs, seed)
    generate(scenes, seed, out, DesignMix(camera_share=camera_share), legibility="suit",
             pick=lambda rng: decks[int(rng.integers(len(decks)))])


def report(crops: Path, models: list[Path]) -> None:
    """Print the ranking of every model on the crop file."""
    with np.load(crops) as z:
        x, y, flags = z["x"], z["y"], z["illegible"]
        rule = str(z["legibility_rule"]) if "legibility_rule" in z else "scene"
    card = y < 52
    print(f"{crops}: {int(card.sum())} card-code crops, {int((flags & card).sum())} "
          f"illegible by the {rule} rule")
    for model in models:
        rec = Recognizer(model)
        probs = np.concatenate([rec.classify(x[i:i + 4096].astype(np.float32) / 255)
                                for i in range(0, len(x), 4096)])
        pred, conf = probs.argmax(1), probs.max(1)
        right = pred == y
        print(model)
        for name, sel in (("all", card), ("legible", card & ~flags),
                          ("illegible", card & flags)):
            code = sel & (pred < 52)
            sure = code & (conf >= 0.99)
            print(f"  {name:9s} n={int(sel.sum()):6d}  sure right "
                  f"{100 * float((sure & right).sum()) / max(int(sel.sum()), 1):5.1f} %  "
                  f"sure wrong {int((sure & ~right).sum()):3d}  right before the k-th wrong "
                  f"{right_before(conf[code], right[code])}")
        code = card & (pred < 52)
        pairs = [oracle_pair(conf[code], right[code], flags[code], k) for k in WRONG_COUNTS]
        print("  one threshold / oracle pair, at most k wrong: " + ", ".join(
            f"{k}: {one} / {two}" for k, (one, two, _) in zip(WRONG_COUNTS, pairs,
                                                               strict=True)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("crops", type=Path, nargs="?", help="a crop file (npz) to report on")
    ap.add_argument("models", type=Path, nargs="*")
    ap.add_argument("--make", type=Path, help="render a crop file here instead")
    ap.add_argument("--designs", default="fonts-held-out-strict")
    ap.add_argument("--scenes", type=int, default=240)
    ap.add_argument("--seed", type=int, default=201)
    ap.add_argument("--camera-share", type=float, default=0.0,
                    help="(--make) share of the scenes seen through a badly set camera")
    args = ap.parse_args(argv)
    if args.make is not None:
        make(args.make, args.designs, args.scenes, args.seed, args.camera_share)
        return 0
    if args.crops is None or not args.models:
        ap.error("give a crop file and at least one model, or --make FILE")
    report(args.crops, args.models)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
