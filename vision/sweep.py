"""Threshold sweep of one or more readers on fresh calibration frames, rendered in parallel.

    python -m vision.sweep --frames-per-design 100 --seed 31 --workers 16 \\
        --out sweep.json models/cards_v5.onnx other/reader.onnx

Frames are of the *training* designs (:func:`vision.dataset.design_list` ``"train"``; scenes
never trained on), or of the designs ``--designs`` names (``fonts``: decks of index typefaces
the committed reader never saw, :data:`vision.dataset.UNSEEN_FONTS`), 75 % at 1280x720 and
25 % at 1920x1080, each seeded by (seed, frame number, design) so that the set does not depend
on how many processes render it. Every frame is read once per model (at threshold 0.5) and
scored at each threshold of :data:`vision.calibrate.THRESHOLDS`; the summed counts (and, from
0.95 up, every misread with its frame: ``"design#k truth->read"``) go to ``--out``, which
``vision.calibrate --sweep`` adds to its own frames when it picks the operating threshold.
Each model's ``.json`` (its gate) is read as by :class:`vision.recognize.Recognizer`.

A reader named ``PATH@module.NAME=VALUE`` (more settings each after another ``@``) reads with
those pipeline settings (:mod:`vision.settings`) and is scored under that name: a pipeline
change and the pipeline as it is, judged on the same frames in one run. A reader with extra
walks (:data:`vision.recognize.EXTRA_BAR`) is also scored without their reads, as
``NAME own places``: the pipeline without them, on the same frames, for no more reading:

    python -m vision.sweep --designs fonts-held-out-strict --frames-per-design 40 --seed 53 \\
        --out cmp53.json models/cards_v7.onnx 'models/cards_v7.onnx@proposals.CLOSE_FIRST=True'

With ``--save-reads F`` every frame's reads (by the last reader named) and labels are kept in ``F``
(:mod:`vision.readsfile`); ``--from-reads F [F ...]`` then scores them again with the merge
as it is now, without rendering or reading a frame, into the same ``--out``:

    python -m vision.sweep --frames-per-design 160 --seed 31 --workers 2 \
        --out sweep31.json --save-reads reads31.npz models/cards_v5.onnx
    python -m vision.sweep --from-reads reads31.npz --out sweep31.json models/cards_v5.onnx

With ``--from-reads``, ``--designs`` keeps the frames of those designs only (each file's own
seed expands it): ``--designs fonts-held-out`` scores a ``fonts`` sweep's reads on the
typefaces a reader trained with ``--hold-out-fonts`` never saw, ``fonts-held-out-strict``
without the two of them that are near copies of a trained one. The extra walks' bar decides
only which of their cards the merge keeps, not what is read, so reads saved with the extra
walks at one bar are scored at the bar of the reader named (its ``.json``'s ``"extra_bar"``):
one sweep's reads judge every bar.

A reader whose ``.json`` holds cards to a threshold by their width (``"threshold_by_width"``,
:mod:`vision.widthbar`) is scored at those steps too, as ``NAME by width``: one row, its
``"threshold"`` the steps. The steps choose no place to read (the extra walks keep off the
cards of the flat threshold), so the reads of a reader without them, saved, are scored by a
copy whose ``.json`` names them: one sweep's reads judge every set of steps.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time
from pathlib import Path

import numpy as np

from vision import readsfile, tablesize
from vision.calibrate import THRESHOLDS, threshold_scores
from vision.dataset import design_list
from vision.evaluate import Score, score_frame
from vision.settings import applied, split_reader
from vision.synth import random_deal, render_table

#: Per worker process: the models (:func:`_init_worker`), each one's path and pipeline
#: settings (parsed once), their recognisers, whether the reads are sent back to be saved,
#: whether frames are read as a calibrated table's, and whether the last model reads them so
#: as well.
_MODELS: list[str] = []
_SPECS: dict = {}
_RECOGNIZERS: dict = {}
_SAVE: list[bool] = [False]
_CALIBRATED: list[bool] = [False]
_ALSO_CALIBRATED: list[bool] = [False]
#: The name under which the last model's reads at its table's sizes are scored, beside its
#: own (:func:`sweep_rendered` ``also_calibrated``).
CALIBRATED_SUFFIX = " calibrated"
#: The name under which a reader's reads without those of its extra walks
#: (:data:`vision.recognize.EXTRA_BAR`) are scored, beside its own: the same frames read by
#: the pipeline without them (their reads come after the pipeline's own, which they leave
#: as they are), for no more reading.
OWN_SUFFIX = " own places"
#: The name under which a reader whose ``.json`` holds cards to a threshold by their width
#: (``"threshold_by_width"``, :mod:`vision.widthbar`) is scored at those steps, beside every
#: flat threshold: one row, its ``"threshold"`` the steps.
BY_WIDTH_SUFFIX = " by width"


def _init_worker(models: list[str], save: bool = False, calibrated: bool = False,
                 also_calibrated: bool = False) -> None:
    _MODELS[:] = models
    _SPECS.update({m: split_reader(m) for m in models})
    _SAVE[0] = save
    _CALIBRATED[0] = calibrated
    _ALSO_CALIBRATED[0] = also_calibrated


def _frame_scores(job: tuple[str, int, int]) -> tuple[dict[str, list[Score]],
                                                      tuple[np.ndarray, dict] | None]:
    import cv2

    from vision.recognize import Recognizer

    cv2.setNumThreads(1)
    design, k, seed = job
    img, labels = sweep_frame(design, k, seed)
    table = (tablesize.from_labels(labels) if _CALIBRATED[0] or _ALSO_CALIBRATED[0]
             else None)
    out = {}
    for m in _MODELS:
        path, settings = _SPECS[m]
        with applied(settings):  # (a reader named with pipeline settings reads with them)
            rec = _RECOGNIZERS.setdefault(m, Recognizer(path, threshold=0.5))
            reads = rec.read(img, table if _CALIBRATED[0] else None)
            out[m] = name_misreads(threshold_scores(rec, reads, labels), design, k)
            if rec.model_width_steps is not None:
                out[m + BY_WIDTH_SUFFIX] = name_misreads(
                    [width_score(rec, reads, labels)], design, k)
            if rec.extra_walk_bar() is not None:  # and without them: the pipeline's own
                own = [r for r in reads if not r.extra_bar]
                out[m + OWN_SUFFIX] = name_misreads(threshold_scores(rec, own, labels),
                                                    design, k)
    if _ALSO_CALIBRATED[0]:  # (after the loop: ``reads`` stays the last model's own, saved)
        rec = _RECOGNIZERS[_MODELS[-1]]
        with applied(_SPECS[_MODELS[-1]][1]):
            out[_MODELS[-1] + CALIBRATED_SUFFIX] = name_misreads(
                threshold_scores(rec, rec.read(img, table), labels), design, k)
    # the last model's reads (see sweep_rendered), packed once
    kept = (readsfile.pack(reads), {**labels, "sweep_frame": [design, k]}) if _SAVE[0] else None
    return out, kept


def sweep_frame(design: str, k: int, seed: int) -> tuple[np.ndarray, dict]:
    """Frame ``k`` of ``design`` in the sweep of ``seed`` and its labels: seeded by all
    three, so that a frame is the same however many processes render the sweep, and can be
    rendered again alone (a misread's frame, a pilot's); 75 % at 1280x720, 25 % at
    1920x1080."""
    rng = np.random.default_rng([seed, k, sum(map(ord, design))])
    size = (1280, 720) if rng.random() < 0.75 else (1920, 1080)
    return render_table(random_deal(rng), rng, design=design, size=size)


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
                   workers: int, designs: list[str] | None = None,
                   save_reads: Path | None = None, calibrated: bool = False,
                   also_calibrated: bool = False) -> dict:
    """Summed scores per model and threshold (see the module docstring); ``designs`` instead
    of the training designs (a house deck's, :mod:`vision.enroll`); with ``save_reads`` every
    frame's reads by the *last* of ``models`` and its labels go to that file, in frame order;
    ``calibrated``: each frame read with the card sizes of its table
    (:func:`vision.tablesize.from_labels`), as a calibrated table's camera reads;
    ``also_calibrated``: the last model reads each frame both ways, its calibrated reads
    scored as ``NAME calibrated`` (:data:`CALIBRATED_SUFFIX`; what an enrollment compares).
    A reader of ``models`` named ``PATH@module.NAME=VALUE`` reads with those pipeline
    settings (:mod:`vision.settings`; no reads are then saved). The workers are spawned, not
    forked: a fork of a process whose OpenCV or torch threads have run can deadlock."""
    # the result is keyed by file name: two readers of one name would be summed as one
    named = [Path(m).name for m in models]
    if len(set(named)) < len(named):
        raise ValueError(f"two readers share a file name ({', '.join(models)}): their scores "
                         "are kept under it; copy one to another name")
    # settings are checked here, before a worker starts (a reads file does not name them)
    with_settings = [m for m in models if split_reader(m)[1]]
    if with_settings and save_reads is not None:
        raise ValueError("a sweep of readers named with pipeline settings keeps no reads")
    jobs = [(d, k, seed) for d in designs or design_list("train", seed)
            for k in range(frames_per_design)]
    if calibrated and also_calibrated:
        raise ValueError("also_calibrated reads the last model both ways: not with calibrated")
    names = [*models, *([models[-1] + CALIBRATED_SUFFIX] if also_calibrated else [])]
    totals = {m: [Score() for _ in THRESHOLDS] for m in names}
    kept: list[tuple[np.ndarray, dict] | None] = [None] * len(jobs)
    t0 = time.time()
    with mp.get_context("spawn").Pool(workers, initializer=_init_worker,
                                      initargs=(list(models), save_reads is not None,
                                                calibrated, also_calibrated)) as pool:
        for i, (n, (res, reads)) in enumerate(pool.imap_unordered(
                _numbered, list(enumerate(jobs)), chunksize=4)):
            for m, scores in res.items():
                # (a reader with extra walks is scored without them too: OWN_SUFFIX)
                # (and by width: one score, BY_WIDTH_SUFFIX)
                for total, s in zip(totals.setdefault(m, [Score() for _ in scores]),
                                    scores, strict=True):
                    total.add(s)
            kept[n] = reads
            if i % 250 == 0:
                print(f"{i}/{len(jobs)} frames, {time.time() - t0:.0f} s", flush=True)
        pool.close()  # let the workers exit (the context's terminate() would kill them)
        pool.join()
    result = {"frames": len(jobs), "frames_per_design": frames_per_design, "seed": seed,
              "calibrated": calibrated, "seconds": round(time.time() - t0, 1),
              "models": {Path(m).name: _rows(t) if not m.endswith(BY_WIDTH_SUFFIX)
                         else _width_rows(t[0], m.removesuffix(BY_WIDTH_SUFFIX))
                         for m, t in totals.items()}}
    if save_reads is not None:
        from vision.recognize import Recognizer

        identity = readsfile.reader_identity(Recognizer(models[-1], threshold=0.5),
                                             calibrated)
        readsfile.save(save_reads, kept, {**identity, **{k: result[k] for k in (
            "frames", "frames_per_design", "seed")}})
    return result


def _numbered(job: tuple[int, tuple[str, int, int]]) -> tuple[int, tuple]:
    return job[0], _frame_scores(job[1])


def _rows(totals: list[Score]) -> list[dict]:
    return [{"threshold": t, **s.summary(),
             **({"misreads": sorted(s.confusions)} if t >= 0.95 else {})}
            for t, s in zip(THRESHOLDS, totals, strict=True)]


def width_score(rec, reads: list, labels: dict) -> Score:  # noqa: ANN001 - a Recognizer
    """One frame's :class:`vision.evaluate.Score` with its cards held to the reader's
    thresholds by width (:attr:`vision.recognize.Recognizer.model_width_steps`)."""
    return score_frame({**rec.merge(reads, rec.model_width_steps), "elapsed_ms": 0.0}, labels)


def _width_rows(total: Score, model: str) -> list[dict]:
    """The one row of reader ``model`` (its spec) scored by width, its ``"threshold"`` the
    steps of the reader's ``.json``."""
    path = Path(split_reader(model)[0]).with_suffix(".json")
    steps = json.loads(path.read_text())["threshold_by_width"]
    return [{"threshold": steps, **total.summary(), "misreads": sorted(total.confusions)}]


def sweep_reads(model: str, paths: list[Path], designs: str | None = None,
                calibrated: bool = False) -> dict:
    """The sweep that :func:`sweep_rendered` would give, from the reads it saved
    (``paths``, summed), scored with the merge as it is now (:mod:`vision.readsfile`); with
    ``designs`` (a :func:`vision.dataset.design_list` spec, expanded with each file's seed)
    only the frames of those designs, counted in ``"frames"``; ``calibrated``: reads saved
    by a calibrated sweep (refused otherwise, and the other way round). A reader with extra
    walks is scored without them too, as the sweep does (:data:`OWN_SUFFIX`), and their reads
    at its bar, whatever bar they were saved with (the bar does not change the reads)."""
    from vision.recognize import Recognizer

    rec = Recognizer(model, threshold=0.5)
    identity = readsfile.reader_identity(rec, calibrated)
    totals = [Score() for _ in THRESHOLDS]
    bar = rec.extra_walk_bar()
    extra = bar is not None
    own_totals = [Score() for _ in THRESHOLDS]
    by_width = [Score()] if rec.model_width_steps is not None else None
    metas = []
    kept = 0
    t0 = time.time()
    for path in paths:
        meta, frames = readsfile.load(path)
        readsfile.check_identity(meta, identity, path)
        metas.append(meta)
        wanted = None if designs is None else set(design_list(designs, int(meta["seed"])))
        for packed, labels in frames:
            design, k = labels.get("sweep_frame", ["?", -1])
            if wanted is not None and design not in wanted:
                continue
            kept += 1
            reads = readsfile.at_bar(readsfile.unpack(packed), bar)
            parts = [(totals, reads)]
            if extra:  # and without them: the pipeline's own reads
                parts.append((own_totals, [r for r in reads if not r.extra_bar]))
            for sums, scored in parts:
                scores = threshold_scores(rec, scored, labels)
                for total, s in zip(sums, name_misreads(scores, design, k), strict=True):
                    total.add(s)
            if by_width is not None:
                by_width[0].add(name_misreads([width_score(rec, reads, labels)], design, k)[0])
    if designs is not None and not kept:
        raise ValueError(f"no frame of the designs {designs!r} in these reads")
    return {"frames": kept, "calibrated": calibrated,
            **({"designs": designs} if designs is not None else {}),
            "frames_per_design": metas[0]["frames_per_design"] if len(metas) == 1 else None,
            "seed": metas[0]["seed"] if len(metas) == 1 else [m["seed"] for m in metas],
            "seconds": round(time.time() - t0, 1), "from_reads": [Path(p).name for p in paths],
            "models": {Path(model).name: _rows(totals),
                       **({Path(model).name + OWN_SUFFIX: _rows(own_totals)} if extra else {}),
                       **({Path(model).name + BY_WIDTH_SUFFIX: _width_rows(by_width[0], model)}
                          if by_width else {})}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+",
                    help="readers (ONNX); PATH@module.NAME=VALUE reads with that pipeline "
                         "setting (vision.settings)")
    ap.add_argument("--frames-per-design", type=int, default=20)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--designs", default=None,
                    help="train (the default), fonts, fonts-held-out, fonts-held-out-strict, "
                         "val, or design names "
                         "separated by commas (vision.dataset.design_list); with --from-reads "
                         "the frames of those designs only")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--save-reads", type=Path, default=None,
                    help="keep every frame's reads by the last of the models in this file")
    ap.add_argument("--from-reads", type=Path, nargs="+", default=None,
                    help="score the reads of these files instead of rendering frames")
    ap.add_argument("--calibrated", action="store_true",
                    help="read each frame with the card sizes of its table (its labels' "
                         "homography), as a calibrated table's camera reads")
    args = ap.parse_args(argv)
    if args.from_reads and (len(args.models) != 1 or args.save_reads):
        ap.error("--from-reads takes one model and no --save-reads")
    try:
        result = (sweep_reads(args.models[0], args.from_reads, args.designs, args.calibrated)
                  if args.from_reads else
                  sweep_rendered(args.models, args.frames_per_design, args.seed, args.workers,
                                 design_list(args.designs or "train", args.seed),
                                 save_reads=args.save_reads, calibrated=args.calibrated))
    except ValueError as e:
        ap.error(str(e))
    if args.designs and not args.from_reads:  # which decks: a re-check asks for unseen ones
        result["designs"] = args.designs
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for name, rows in result["models"].items():
        for r in rows:
            if not isinstance(r["threshold"], (int, float)) or r["threshold"] >= 0.95:
                print(name, r["threshold"], "recall", r["recall"], "misread",
                      f"{r['misread']}/{r['reported']}", "fp", r["false_positives"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
