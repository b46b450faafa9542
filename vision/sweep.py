"""Threshold sweep of one or more readers on fresh calibration frames, rendered in parallel.

    python -m vision.sweep --frames-per-design 100 --seed 31 --workers 16 \\
        --out sweep.json models/cards_v4.onnx other/reader.onnx

Frames are of the *training* designs (:func:`vision.dataset.design_list` ``"train"``; scenes
never trained on), 75 % at 1280x720 and 25 % at 1920x1080, each seeded by (seed, frame
number, design) so that the set does not depend on how many processes render it. Every frame
is read once per model (at threshold 0.5) and scored at each threshold of
:data:`vision.calibrate.THRESHOLDS`; the summed counts (and, from 0.95 up, every misread with
its frame: ``"design#k truth->read"``) go to ``--out``, which
``vision.calibrate --sweep`` adds to its own frames when it picks the operating threshold.
Each model's ``.json`` (its gate) is read as by :class:`vision.recognize.Recognizer`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time
from pathlib import Path

import numpy as np

from vision.calibrate import THRESHOLDS, threshold_scores
from vision.dataset import design_list
from vision.evaluate import Score
from vision.synth import random_deal, render_table

#: Per worker process: the models (:func:`_init_worker`) and their recognisers.
_MODELS: list[str] = []
_RECOGNIZERS: dict = {}


def _init_worker(models: list[str]) -> None:
    _MODELS[:] = models


def _frame_scores(job: tuple[str, int, int]) -> dict[str, list[Score]]:
    import cv2

    from vision.recognize import Recognizer

    cv2.setNumThreads(1)
    design, k, seed = job
    rng = np.random.default_rng([seed, k, sum(map(ord, design))])
    size = (1280, 720) if rng.random() < 0.75 else (1920, 1080)
    img, labels = render_table(random_deal(rng), rng, design=design, size=size)
    out = {}
    for m in _MODELS:
        rec = _RECOGNIZERS.setdefault(m, Recognizer(m, threshold=0.5))
        out[m] = name_misreads(threshold_scores(rec, rec.read(img), labels), design, k)
    return out


def name_misreads(scores: list[Score], design: str, k: int) -> list[Score]:
    """``scores`` with each misread (``"AS->AC"``) prefixed by the frame that made it, so that
    a sweep's misreads can be rendered again (frame ``k`` of ``design``, the sweep's seed).

    >>> s = Score(misread=1, confusions=["AS->AC"])
    >>> name_misreads([s], "proc:1:1031", 8)[0].confusions
    ['proc:1:1031#8 AS->AC']
    """
    for s in scores:
        s.confusions = [f"{design}#{k} {c}" for c in s.confusions]
    return scores


def sweep_rendered(models: list[str], frames_per_design: int, seed: int,
                   workers: int, designs: list[str] | None = None) -> dict:
    """Summed scores per model and threshold (see the module docstring); ``designs`` instead
    of the training designs (a house deck's, :mod:`vision.enroll`). The workers are spawned,
    not forked: a fork of a process whose OpenCV or torch threads have run can deadlock."""
    jobs = [(d, k, seed) for d in designs or design_list("train", seed)
            for k in range(frames_per_design)]
    totals = {m: [Score() for _ in THRESHOLDS] for m in models}
    t0 = time.time()
    with mp.get_context("spawn").Pool(workers, initializer=_init_worker,
                                      initargs=(list(models),)) as pool:
        for i, res in enumerate(pool.imap_unordered(_frame_scores, jobs, chunksize=4)):
            for m, scores in res.items():
                for total, s in zip(totals[m], scores, strict=True):
                    total.add(s)
            if i % 250 == 0:
                print(f"{i}/{len(jobs)} frames, {time.time() - t0:.0f} s", flush=True)
        pool.close()  # let the workers exit (the context's terminate() would kill them)
        pool.join()
    return {"frames": len(jobs), "frames_per_design": frames_per_design, "seed": seed,
            "seconds": round(time.time() - t0, 1),
            "models": {Path(m).name: [{"threshold": t, **s.summary(),
                                       **({"misreads": sorted(s.confusions)} if t >= 0.95
                                          else {})}
                                      for t, s in zip(THRESHOLDS, totals[m], strict=True)]
                       for m in models}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--frames-per-design", type=int, default=20)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    result = sweep_rendered(args.models, args.frames_per_design, args.seed, args.workers)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for name, rows in result["models"].items():
        for r in rows:
            if r["threshold"] >= 0.95:
                print(name, r["threshold"], "recall", r["recall"], "misread",
                      f"{r['misread']}/{r['reported']}", "fp", r["false_positives"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
