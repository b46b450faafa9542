"""Enroll a house deck: the reader and the gate fine-tuned on scenes of the casino's own cards.

    monster-match enroll-deck DECK --out DIR [--scenes 1200] [--epochs 2] [--frames 1000]

``DECK`` is a deck directory (:mod:`vision.deckdir`: the 52 faces and the back as images) or
a design name (``plastic``, ``proc:5:1007``), for a lab trying the procedure. A casino deals
one or two designs of its own; the bundled models have never seen them (their figures are
for designs they never saw), and a model that has read many scenes of the house's cards
reads them better, its back above all. The steps:

1. render ``scenes`` training scenes, :data:`HOUSE_SHARE` of them with the house deck and the
   rest with the training designs (so that the models keep what they know), into
   ``DIR/work`` (:func:`vision.train.generate`);
2. fine-tune the bundled reader (its int8 weights turned back into floats) and gate for
   ``epochs`` epochs from their weights, BatchNorms frozen (:func:`vision.train.train`), and
   quantise the reader to int8 (:mod:`vision.quantize`; its weights in 7 bits by default,
   :data:`WEIGHT_BITS`);
3. render ``frames`` fresh labelled frames of the house deck (other seeds), read them with the
   bundled models and the enrolled ones (:mod:`vision.sweep`; the enrolled reader walks its
   hands ``hand_walks`` times, by default as often as the reader it starts from,
   :func:`enrolled_hand_walks`; with ``walk_splits`` / ``opposite_anchors`` its first walk
   places more corners, :func:`vision.handwalk.hand_walk`), and set the enrolled
   reader's operating threshold by the rule the bundled one was set by (the 95 % upper
   bound of the misread rate within 0.1 %, at most 0.1 false positives a frame, at that
   threshold and every higher one; :func:`vision.calibrate.pick_threshold`), never below the
   bundled reader's threshold for the designs it was trained on (``"seen_threshold"``; its
   operating threshold, for designs it never saw, is higher): enrollment is to read the
   house's cards better, not to trust a reader more on a thousand frames. (The bound needs
   reports: about 3000 with no misread, 6300 with two; a thousand frames give some 11,000.)
   The report compares the bundled models at their operating threshold. The same frames'
   reads set the enrolled reader's rank-and-colour threshold (:mod:`vision.rankcolour`: a
   card refused by code but sure of its rank and colour names them) by the same rule on
   those refusals alone (:mod:`vision.calibrate_rank_colour`), never below the same floor;
   where no threshold keeps it, the enrolled reader names no rank and colour. The enrolled
   reader also reads the same frames at their table's card sizes (as the camera of a
   calibrated table can, :mod:`vision.tablesize`), and where the same rule holds for those
   reads, above the same floor, and they find more of the deck's cards than its reads at the
   frame's own sizes do, that threshold is written as ``"calibrated_threshold"``: a table
   whose ``[camera]`` is calibrated then reads the deck so
   (:meth:`vision.recognize.Recognizer.table_for`).

Written to ``DIR``: ``cards_house.onnx`` + ``cards_house.json`` (threshold, gate, the sweep)
and ``gate_house.onnx`` (use with ``--model DIR/cards_house.onnx``, or ``[camera] model`` in
the table's TOML), and ``enroll_report.json``, the bundled and the enrolled models on the
same house frames; the models appear there only once the threshold is set (an interrupted
enrollment leaves only ``DIR/work``: run it again with the same settings and it resumes after
its last finished step, each scene chunk and each fine-tune being recorded in
``DIR/work/steps.json`` with what it was made from, :mod:`vision.steplog`; ``--keep-data``
keeps them after a finished run too, so that the same deck can be enrolled again with other
walk settings, which only the threshold step reads, without rendering or training again).
Needs the ``train`` extra (torch, onnx) and, for the replay scenes' aisleriot designs,
``gnome-cards-data`` and ``rsvg-convert`` (without them the replay uses procedural decks
only). Two cores took 10 minutes for 1000 scenes and 600 frames; the defaults (1200 and
1000) take about 15-20 minutes (the fresh frames read three times since the twenty-ninth
session: 1239 s of them on an AVX2 EPYC, against 665 s before).

An enrolled reader is for its deck: on other designs it misreads more often than the bundled
one (measured in ``models/cards_v4.md``, "Tenth session").
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import numpy as np

from vision.designs import AISLERIOT_DIR, TRAIN_AISLERIOT, cache_dir, get_design
from vision.quantize import WEIGHT_QMAX
from vision.recognize import DEFAULT_MODEL, HAND_WALKS
from vision.steplog import StepLog, file_digest
from vision.train import add_precision_argument, training_precision

#: Share of the enrollment scenes drawn with the house deck; the rest replay training designs.
#: ``plastic`` enrolled (`models/cards_v4.md`, "Tenth session"): 1000 scenes at 0.7
#: and 1200 at 0.5 read its validation frames alike (84.6 / 84.5 %), and the other validation
#: designs with 9 and 5 misreads (the bundled reader: 3), so 0.5 and 1200 scenes.
HOUSE_SHARE = 0.5
READER_NAME, GATE_NAME = "cards_house.onnx", "gate_house.onnx"
#: The finished steps of an enrollment in ``OUT/work`` (:mod:`vision.steplog`), for a rerun
#: of an interrupted one to resume from.
STEPS_NAME = "steps.json"
#: Bits of the enrolled reader's int8 weights: in 7 (within +-64) the pairwise sums of the
#: fast U8S8 kernels of x86 CPUs without VNNI fit their 16-bit lanes, so such a CPU runs it
#: on them instead of the slower exact U8U8 ones (:mod:`vision.kernels`); 8 uses the full
#: range. Its threshold is set on its own reads either way. ``plastic``'s enrolled float
#: reader quantised both ways from the same crops (``models/cards_v5.md``, twenty-ninth
#: session): on its 1000 fresh frames at 0.99 90.78 % either way (4 misreads each), at the
#: table's sizes 92.58 % against 92.67 % (2 each); on an AVX2 EPYC the reader 0.71-0.77 of
#: the time, whole 720p frames 0.888 (paired).
WEIGHT_BITS = 7
#: The enrolled reader's name in ``OUT/work`` while its threshold is being set.
_CANDIDATE = "enrolled_candidate.onnx"


class EnrollError(RuntimeError):
    """Enrollment cannot run (a missing training dependency, a bad deck, no bundled model)."""


def _aisleriot_available() -> bool:
    """Whether aisleriot designs can be drawn here (sheets cached, or the package and
    ``rsvg-convert`` installed to rasterise them)."""
    cached = all(any(cache_dir().glob(f"{name}-*.png")) for name in TRAIN_AISLERIOT)
    return cached or (AISLERIOT_DIR.is_dir() and shutil.which("rsvg-convert") is not None)


def design_picker(house: str, share: float, aisleriot: bool) -> Callable:
    """Each scene's design: ``house`` with probability ``share``, else a training design
    (aisleriot ones only if ``aisleriot``; procedural decks with OpenCV's fonts otherwise).

    >>> pick = design_picker("deck:/x", 0.7, aisleriot=False)
    >>> rng = np.random.default_rng(1)
    >>> draws = [pick(rng) for _ in range(1000)]
    >>> 650 < draws.count("deck:/x") < 750, all(d.startswith(("deck:", "proc:")) for d in draws)
    (True, True)
    """
    from vision.train import DesignMix

    replay = DesignMix(aisleriot=aisleriot)

    def pick(rng: np.random.Generator) -> str:
        if rng.random() < share:
            return house
        return replay.draw(rng)

    return pick


def _render_chunk(job: tuple[str, float, bool, int, int, str]) -> str:
    import threading

    import cv2
    from tqdm import tqdm

    from vision.train import generate

    cv2.setNumThreads(1)
    # tqdm's default lock is a multiprocessing semaphore, which a spawned worker never
    # releases: the parent then warns of leaked semaphores at exit
    tqdm.set_lock(threading.RLock())
    house, share, aisleriot, n, seed, out = job
    generate(n, seed, Path(out), pick=design_picker(house, share, aisleriot))
    return out


def render_data(house: str, work: Path, scenes: int, seed: int, workers: int,
                share: float = HOUSE_SHARE, aisleriot: bool | None = None,
                steps: StepLog | None = None, log: Callable[[str], None] = print
                ) -> tuple[list[Path], Path]:
    """Training chunks (one per worker) and a calibration chunk of enrollment scenes. Each
    chunk is seeded by its number: the same ``seed``, ``workers`` and ``aisleriot`` (default:
    whether aisleriot designs can be drawn here) render the same scenes. With ``steps``, a
    chunk it records as rendered with the same settings is kept, and each chunk rendered
    is recorded as it finishes (:func:`chunk_key`)."""
    work.mkdir(parents=True, exist_ok=True)
    if aisleriot is None:
        aisleriot = _aisleriot_available()
    n = max(1, workers)
    per = [scenes // n + (k < scenes % n) for k in range(n)]
    jobs = [(house, share, aisleriot, c, seed * 100 + k, str(work / f"data{k}.npz"))
            for k, c in enumerate(per) if c > 0]
    jobs.append((house, share, aisleriot, max(scenes // 10, 4), seed * 100 + 99,
                 str(work / "cal.npz")))
    keys = {job[-1]: chunk_key(job) for job in jobs}
    todo = [job for job in jobs
            if steps is None
            or not steps.done(_chunk_step(job[-1]), keys[job[-1]], [Path(job[-1])])]
    if steps is not None and len(todo) < len(jobs):
        log(f"resuming: {len(jobs) - len(todo)} of {len(jobs)} scene chunks already rendered "
            f"with these settings ({steps.path})")
    if todo:
        # spawned, not forked: a fork of a process whose OpenCV threads have run can deadlock
        with mp.get_context("spawn").Pool(min(n, len(todo))) as pool:
            for out in pool.imap_unordered(_render_chunk, todo):
                if steps is not None:  # each chunk kept as soon as it is whole
                    steps.record(_chunk_step(out), keys[out], [Path(out)])
            pool.close()  # let the workers exit (the context's terminate() would kill them)
            pool.join()
    done = [Path(job[-1]) for job in jobs]
    return done[:-1], done[-1]


def chunk_key(job: tuple[str, float, bool, int, int, str]) -> dict:
    """What a scene chunk depends on: the house deck (a deck directory by the digest of its
    files too, for its cards may be rescanned under the same name), the house share, the
    replay designs, the number of scenes and the seed, and this package's version."""
    house, share, aisleriot, scenes, seed, _ = job
    key = {"house": house, "share": share, "aisleriot": aisleriot, "scenes": scenes,
           "seed": seed, "version": _version()}
    if house.startswith("deck:"):
        folder = Path(house[len("deck:"):])
        key["deck_files"] = {p.name: file_digest(p) for p in sorted(folder.iterdir())
                             if p.is_file()}
    return key


def _chunk_step(out: str) -> str:
    return f"render {Path(out).name}"


def _version() -> str:
    try:
        return metadata.version("monster-match")
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "source"


def infer_arch(model: Path) -> str:
    """The :data:`vision.train.ARCHITECTURES` entry whose layers ``model`` has (kernel shapes
    compared), so that a bundled model can be fine-tuned without knowing how it was built."""
    from torch import nn

    from vision.train import ARCHITECTURES, build_model, onnx_weights

    graph, weights = onnx_weights(model)
    shapes = [tuple(weights[n.input[1]].shape) for n in graph.node
              if n.op_type in ("Conv", "Gemm")]
    for arch in ARCHITECTURES:
        layers = [m for m in build_model(arch) if isinstance(m, nn.Conv2d | nn.Linear)]
        if [tuple(m.weight.shape) for m in layers] == shapes:
            return arch
    raise EnrollError(f"{model}: not one of the architectures of vision.train")


def _fine_tune(job: dict) -> dict:
    """One fine-tune, run in a spawned process: the enrolling process never loads torch."""
    from vision.train import train

    info = train([Path(p) for p in job["data"]], [Path(job["cal"])], job["epochs"],
                 job["seed"], Path(job["out"]), Path(job["log"]), init=Path(job["init"]),
                 max_lr=1e-3, arch=infer_arch(Path(job["init"])),
                 label_smoothing=job["label_smoothing"], reject_fraction=job["reject_fraction"],
                 threads=job["threads"], geometric=True, precision=job["precision"])
    for k in range(job["epochs"]):  # the per-epoch copies are not needed
        Path(job["out"]).with_name(f"{Path(job['out']).stem}.epoch{k}.onnx").unlink(
            missing_ok=True)
    return info


def _check_training_extra() -> None:
    """Torch and onnx present, without importing torch here (see :func:`_fine_tune`)."""
    from importlib.util import find_spec

    missing = [m for m in ("torch", "onnx") if find_spec(m) is None]
    if missing:
        raise EnrollError(f"enrollment trains models and needs {' and '.join(missing)}: "
                          f"install the train extra (pip install -e '.[train]')")


def enrolled_hand_walks(base_meta: dict, asked: int | None) -> int:
    """The enrolled reader's hand walks (its ``"hand_walks"``): ``asked``, or by default the
    base reader's (one for a model whose ``.json`` names none, :data:`HAND_WALKS`), so that an
    enrolled reader reads its frames as the one it started from did.

    ``plastic`` enrolled from ``cards_v5``, its threshold step on the same 1000 fresh frames
    (``models/cards_v5.md``, twenty-sixth and twenty-seventh sessions): one walk 89.65 % with
    5 misreads, three walks with later ones halfway only (the bundled reader's) 90.04 % with
    4, three walks placing every point 90.34 % with 3 but 1.35-1.48 times a frame's time.

    >>> enrolled_hand_walks({"hand_walks": 3}, None), enrolled_hand_walks({}, None)
    (3, 1)
    >>> enrolled_hand_walks({"hand_walks": 3}, 1)
    1
    """
    walks = int(base_meta.get("hand_walks", HAND_WALKS)) if asked is None else asked
    if walks < 0:
        raise EnrollError(f"hand walks must be 0 or more, not {walks}")
    return walks


def enroll(deck: str, out: Path, scenes: int = 1200, epochs: int = 2, frames: int = 1000,
           workers: int | None = None, seed: int = 1, base: Path = DEFAULT_MODEL,
           keep_data: bool = False, log: Callable[[str], None] = print,
           house_share: float = HOUSE_SHARE, hand_walks: int | None = None,
           weight_bits: int = WEIGHT_BITS, walk_splits: tuple[int, ...] = (),
           opposite_anchors: bool = False, lone_anchors: bool | str = False,
           precision: str = "auto") -> dict:
    """Enroll ``deck`` (module docstring); returns the report written to
    ``out/enroll_report.json``. ``weight_bits``: the enrolled reader's int8 weights in 8 bits
    or 7 (:data:`WEIGHT_BITS`). ``walk_splits`` and ``opposite_anchors``: the first hand
    walk's extra places (:func:`vision.handwalk.hand_walk`); ``lone_anchors``: the grid
    around hands of one read corner before the walks (:func:`vision.handwalk.lone_walk`),
    ``True`` for every read or ``"calibrated"`` for reads at a calibrated table's sizes only;
    the enrolled reader's thresholds are then set with them (its ``.json`` names them).
    ``precision``: the fine-tunes' arithmetic (:data:`vision.train.PRECISIONS`)."""
    if weight_bits not in WEIGHT_QMAX:
        raise EnrollError(f"weight bits must be 7 or 8, not {weight_bits}")
    if any(k < 3 for k in walk_splits):
        raise EnrollError(f"walk splits are hand steps between two anchors, 3 or more, not "
                          f"{list(walk_splits)}")
    if lone_anchors not in (False, True, "calibrated"):
        raise EnrollError(f"lone anchors are true, false or 'calibrated', not {lone_anchors!r}")
    if hand_walks is not None:
        enrolled_hand_walks({}, hand_walks)  # a bad number is refused before any work
    try:  # the arithmetic itself, not "auto", goes into the fine-tunes' step keys
        precision = training_precision(precision)
    except ValueError as e:
        raise EnrollError(str(e)) from None
    is_dir = "/" in deck or Path(deck).is_dir()
    house = f"deck:{Path(deck).resolve()}" if is_dir else deck
    design = get_design(house)  # DeckError / FileNotFoundError before any work
    _check_training_extra()
    base = Path(base)
    base_meta = json.loads(base.with_suffix(".json").read_text())
    if not base_meta.get("gate"):
        raise EnrollError(f"{base}: its metadata name no gate to fine-tune")
    base_gate = base.parent / base_meta["gate"]
    hand_walks = enrolled_hand_walks(base_meta, hand_walks)
    if base.name == _CANDIDATE:
        raise EnrollError(f"{base}: rename the model to start from (its name is the one "
                          f"enrollment gives its candidate)")
    workers = workers or os.cpu_count() or 1
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    t0 = time.time()
    log(f"enrolling {design.name}: rendering {scenes} scenes ({house_share:.0%} house deck) "
        f"with {workers} processes")
    aisleriot = _aisleriot_available()
    steps = StepLog(work / STEPS_NAME)
    data, cal = render_data(house, work, scenes, seed, workers, house_share, aisleriot,
                            steps=steps, log=log)
    log(f"rendered in {time.time() - t0:.0f} s; fine-tuning the reader and the gate "
        f"({epochs} epochs each)")
    float_reader = work / "reader_float.onnx"
    jobs = [
        {"data": [str(p) for p in data], "cal": str(cal), "epochs": epochs, "seed": seed,
         "out": str(float_reader), "log": str(work / "reader_log.jsonl"), "init": str(base),
         "label_smoothing": 0.0, "reject_fraction": 0.35, "threads": workers,
         "precision": precision},
        {"data": [str(p) for p in data], "cal": str(cal), "epochs": epochs, "seed": seed,
         "out": str(work / GATE_NAME), "log": str(work / "gate_log.jsonl"),
         "init": str(base_gate), "label_smoothing": 0.02, "reject_fraction": 1.0,
         "threads": workers, "precision": precision},
    ]
    histories = []
    for name, job in zip(("reader", "gate"), jobs, strict=True):
        key = fine_tune_key(job, steps)
        if steps.done(f"fine-tune {name}", key, [Path(job["out"])]):
            log(f"resuming: the {name} was fine-tuned with these settings ({steps.path})")
            histories.append(steps.info(f"fine-tune {name}"))
            continue
        with mp.get_context("spawn").Pool(1) as pool:
            history = pool.apply(_fine_tune, (job,))["history"]
            pool.close()
            pool.join()
        steps.record(f"fine-tune {name}", key, [Path(job["out"])], info=history)
        histories.append(history)
    from vision.quantize import quantize

    # the candidate reads its house frames from OUT/work under its own name; OUT gets the
    # models only once their threshold is set (an interrupted run leaves no model there)
    candidate = work / _CANDIDATE
    quantize(float_reader, candidate, cal, reduce_range=weight_bits == 7)
    meta = {k: v for k, v in base_meta.items()
            if k in ("classes", "input", "look_scales", "threshold")}
    meta.update(gate=GATE_NAME, enrolled_from={"reader": base.name, "gate": base_gate.name},
                deck=design.name, hand_walks=hand_walks, weight_bits=weight_bits)
    if walk_splits:
        meta.update(walk_splits=list(walk_splits))
    if opposite_anchors:
        meta.update(opposite_anchors=True)
    if lone_anchors:
        meta.update(lone_anchors=lone_anchors)
    candidate.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    log(f"fine-tuned at {time.time() - t0:.0f} s; reading {frames} fresh frames of the house "
        f"deck with the bundled and the enrolled models")
    # the floor: the bundled reader's threshold on designs it was trained on, for the enrolled
    # one has seen this deck (its threshold for designs it never saw is higher; calibrate.py)
    report = _sweep_and_pick(house, candidate, base, float(base_meta["threshold"]),
                             float(base_meta.get("seen_threshold", base_meta["threshold"])),
                             frames, seed, workers, work / "house_reads.npz")
    meta.update(threshold=report["enrolled"]["threshold"], house_sweep=report.pop("sweep"),
                rule=report["rule"])
    rc_threshold = report["enrolled"]["rank_colour_threshold"]
    if rc_threshold is not None:
        meta.update(rank_colour_threshold=rc_threshold)
    meta.update(rank_colour_sweep=report.pop("rank_colour_sweep"))
    if report["enrolled_calibrated"]["adopted"]:
        meta.update(calibrated_threshold=report["enrolled_calibrated"]["threshold"])
    meta.update(calibrated_sweep=report.pop("calibrated_sweep"))
    report["enrolled"]["model"] = READER_NAME
    report.update(deck=design.name, scenes=scenes, epochs=epochs, seed=seed, hand_walks=hand_walks,
                  walk_splits=list(walk_splits), opposite_anchors=opposite_anchors,
                  lone_anchors=lone_anchors, weight_bits=weight_bits,
                  house_share=house_share, workers=workers, replay_aisleriot=aisleriot,
                  precision=precision,
                  training=dict(zip(("reader", "gate"), histories, strict=True)),
                  seconds=round(time.time() - t0, 1))
    reader = out / READER_NAME
    # a kept gate stays in work too, for a rerun to find its fine-tune finished
    (shutil.copy2 if keep_data else os.replace)(work / GATE_NAME, out / GATE_NAME)
    os.replace(candidate, reader)
    candidate.with_suffix(".json").unlink()
    reader.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    (out / "enroll_report.json").write_text(json.dumps(report, indent=1) + "\n")
    if not keep_data:
        for p in [*data, cal, work / "house_reads.npz"]:
            p.unlink(missing_ok=True)
        steps.forget()  # nothing left to resume from
    return report


def fine_tune_key(job: dict, steps: StepLog) -> dict:
    """What a fine-tune's model depends on: its settings, the model it starts from (by
    digest) and the keys its scene chunks were rendered with (so re-rendered scenes retrain
    it)."""
    key = {k: v for k, v in job.items() if k not in ("out", "log", "data", "cal", "init")}
    key.update(init=file_digest(Path(job["init"])), version=_version(),
               data=[steps.key(_chunk_step(p)) for p in job["data"]],
               cal=steps.key(_chunk_step(job["cal"])))
    return key


def _sweep_and_pick(house: str, reader: Path, base: Path, base_threshold: float,
                    floor: float, frames: int, seed: int, workers: int,
                    reads: Path) -> dict:
    from vision import calibrate_rank_colour
    from vision.calibrate import misread_upper_bound, pick_threshold
    from vision.sweep import CALIBRATED_SUFFIX, sweep_rendered

    # the enrolled reader's reads (the last model's) are kept for its rank-and-colour pick;
    # it reads every frame at its table's card sizes too
    res = sweep_rendered([str(base), str(reader)], frames, seed + 7919, workers,
                         designs=[house], save_reads=reads, also_calibrated=True)
    rows_base, rows_new = res["models"][base.name], res["models"][reader.name]
    rule = {"max_error": 0.001, "max_fp": 0.1, "bound": True, "floor": floor}
    picked = pick_threshold(rows_new, rule["max_error"], rule["max_fp"])
    threshold = max(picked["threshold"], floor)
    # too few frames (or too many misreads) to show the bound even at the top threshold
    meets = misread_upper_bound(picked["misread"], picked["reported"]) <= rule["max_error"]

    def at(rows: list[dict], t: float) -> dict:
        row = next(r for r in rows if r["threshold"] == t)
        return {k: v for k, v in row.items() if k not in _UNTIMED}

    bundled = {"model": base.name, "threshold": base_threshold,
               **at(rows_base, base_threshold)}
    enrolled = {"model": reader.name, **at(rows_new, threshold),
                "rule_pick": picked["threshold"], "rule_met": meets}
    rc_rows = calibrate_rank_colour.sweep(reader, [reads], threshold)
    rc_pick = calibrate_rank_colour.pick(rc_rows, rule["max_error"], rule["max_fp"])
    rc_threshold = None if rc_pick is None else max(rc_pick, floor)
    enrolled.update(rank_colour_threshold=rc_threshold, rank_colour_rule_pick=rc_pick)
    if rc_threshold is not None:
        row = next(r for r in rc_rows if r["threshold"] == rc_threshold)
        enrolled.update(rank_colour_recall=row["rank_colour_recall"],
                        rank_colour_misread=row["misread"],
                        rank_colour_reported=row["reported"],
                        rank_colour_false_positives=row["false_positives"])
    rows_cal = res["models"][reader.name + CALIBRATED_SUFFIX]
    cal = calibrated_pick(rows_cal, enrolled, rule)
    return {"frames": res["frames"], "frame_seed": res["seed"], "rule": rule,
            "bundled": bundled, "enrolled": enrolled, "advice": advice(bundled, enrolled),
            "enrolled_calibrated": {"model": reader.name, **cal},
            "sweep": [{k: v for k, v in r.items() if k != "ms_per_frame_median"}
                      for r in rows_new],
            "calibrated_sweep": [{k: v for k, v in r.items() if k != "ms_per_frame_median"}
                                 for r in rows_cal],
            "rank_colour_sweep": rc_rows}


def calibrated_pick(rows: list[dict], enrolled: dict, rule: dict) -> dict:
    """The threshold for the enrolled reader's reads at a calibrated table's card sizes
    (``rows``: their sweep on the house frames), by ``rule`` as for its own reads, never below
    ``rule["floor"]``; ``"adopted"`` where the rule is met (misreads and false positives)
    and at the threshold they find more of the deck's cards than ``enrolled`` (its reads at
    the frame's own sizes, at its threshold, whose rule must hold too).

    >>> rows = [{"threshold": t, "recall": r, "misread": 0, "reported": 9000,
    ...          "false_positives": 0, "frames": 800} for t, r in ((0.99, 0.93), (0.995, 0.92))]
    >>> rule = {"max_error": 0.001, "max_fp": 0.1, "floor": 0.99}
    >>> pick = calibrated_pick(rows, {"recall": 0.90, "rule_met": True}, rule)
    >>> pick["threshold"], pick["recall"], pick["adopted"]
    (0.99, 0.93, True)
    >>> calibrated_pick(rows, {"recall": 0.95, "rule_met": True}, rule)["adopted"]
    False
    """
    from vision.calibrate import keeps_rule, pick_threshold

    picked = pick_threshold(rows, rule["max_error"], rule["max_fp"])
    threshold = max(picked["threshold"], rule["floor"])
    # (the highest row comes back even where the rule fails there: too few frames)
    meets = keeps_rule(picked, rule["max_error"], rule["max_fp"])
    row = {k: v for k, v in next(r for r in rows if r["threshold"] == threshold).items()
           if k not in _UNTIMED}
    adopted = meets and enrolled["rule_met"] and row["recall"] > enrolled["recall"]
    return {"threshold": threshold, **row, "rule_pick": picked["threshold"],
            "rule_met": meets, "adopted": adopted}


def advice(bundled: dict, enrolled: dict) -> str:
    """Whether the house should read with the enrolled models: only if their threshold meets
    the rule and they find more of the deck's cards than the bundled ones, each at its own
    threshold (a deck whose small suit glyphs the reader learns to guess can come out worse).

    >>> advice({"recall": 0.64}, {"recall": 0.61, "rule_met": False})[:8]
    'keep the'
    >>> advice({"recall": 0.69}, {"recall": 0.84, "rule_met": True})[:7]
    'use the'
    """
    if not enrolled["rule_met"]:
        return ("keep the bundled models: the misread bound was not shown at any threshold "
                "(enroll again with more --frames, or the deck misreads too often)")
    if enrolled["recall"] <= bundled["recall"]:
        return "keep the bundled models: the enrolled ones find no more of this deck's cards"
    return "use the enrolled models for this deck"


#: Row fields left out of the report: the frames' misread list (in the reader's ``.json``)
#: and a time the sweep does not measure.
_UNTIMED = ("misreads", "ms_per_frame_median")


def summary(report: dict) -> str:
    """The report's comparison as a few lines of text."""
    lines = [f"deck {report['deck']}: {report['frames']} fresh frames"]
    for key in ("bundled", "enrolled"):
        r = report[key]
        lines.append(
            f"  {key:8s} {r['model']:18s} threshold {r['threshold']:<6} recall "
            f"{100 * r['recall']:.2f}% ({r['correct']}/{r['readable_cards']})  misreads "
            f"{r['misread']}/{r['reported']}  face down {r['face_down_found']}/"
            f"{r['face_down']} (false {r['face_down_false']})  false positives "
            f"{r['false_positives']}")
    rc = report["enrolled"]
    if rc.get("rank_colour_threshold") is not None:
        lines.append(
            f"  enrolled, by rank and colour where the code is refused (threshold "
            f"{rc['rank_colour_threshold']}): known {100 * rc['rank_colour_recall']:.2f}%  "
            f"misreads {rc['rank_colour_misread']}/{rc['rank_colour_reported']}  false "
            f"positives {rc['rank_colour_false_positives']}")
    elif "rank_colour_threshold" in rc:
        lines.append("  enrolled, by rank and colour: no threshold keeps the rule; the "
                     "enrolled reader names none")
    cal = report.get("enrolled_calibrated")
    if cal is not None:
        lines.append(
            f"  enrolled at a calibrated table's card sizes: threshold {cal['threshold']} recall "
            f"{100 * cal['recall']:.2f}% ({cal['correct']}/{cal['readable_cards']})  misreads "
            f"{cal['misread']}/{cal['reported']}  false positives {cal['false_positives']}: "
            + ("a calibrated table's camera reads so" if cal["adopted"] else
               "not used (" + ("the misread bound was not shown" if not cal["rule_met"]
                               else "no more cards than at the frame's own sizes") + ")"))
    lines.append(f"  advice: {report['advice']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    args = ap.parse_args(argv)
    report = run(args)
    print(summary(report))
    return 0


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("deck", help="deck directory (52 faces + back, see vision.deckdir) or a "
                                 "design name")
    ap.add_argument("--out", type=Path, required=True, help="directory for the enrolled models")
    ap.add_argument("--scenes", type=int, default=1200,
                    help="training scenes to render (default %(default)s; 3600, about an "
                         "hour on two cores: of three validation decks one read 1.6-3.9 "
                         "points more of its frames, two about as many)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--house-share", type=float, default=HOUSE_SHARE,
                    help="share of the scenes drawn with the house deck (the rest replay the "
                         "training designs)")
    ap.add_argument("--frames", type=int, default=1000,
                    help="fresh house-deck frames that set the threshold and the report")
    ap.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL,
                    help="the reader to start from (its gate named in its .json)")
    ap.add_argument("--hand-walks", type=int, default=None,
                    help="hand walks of the enrolled reader (each finds covered cards between "
                         "those the last read; more cost time; its threshold is set with "
                         "them; default: the --model's, 3 for the bundled reader)")
    ap.add_argument("--walk-splits", type=int, nargs="+", default=[], metavar="K",
                    help="in the first hand walk, two read corners K hand steps apart (3 or "
                         "more) put a corner at each step between them: more covered cards "
                         "of long hands, more time (default: none)")
    ap.add_argument("--opposite-anchors", action="store_true",
                    help="in the first hand walk, each read corner also anchors at its "
                         "card's opposite index corner (cards laid turned half round)")
    ap.add_argument("--lone-anchors", choices=("calibrated", "always"), default=None,
                    help="before the hand walks, look around each read corner of a hand no "
                         "other corner of which was read, on a grid of hand steps: for reads "
                         "at a calibrated table's card sizes only, or always (measured: +1 to "
                         "+1.4 points of three decks at a calibrated table's sizes, the rule "
                         "kept; at the frame's own sizes one deck of three read fewer; about "
                         "1.25 times a frame's time)")
    ap.add_argument("--weight-bits", type=int, choices=sorted(WEIGHT_QMAX),
                    default=WEIGHT_BITS,
                    help="bits of the enrolled reader's int8 weights: 7 runs faster on x86 "
                         "CPUs without VNNI, measured to read as 8 does (default %(default)s)")
    ap.add_argument("--keep-data", action="store_true",
                    help="keep the rendered training crops and fine-tuned models in OUT/work: "
                         "a rerun with the same settings (other walk settings allowed) "
                         "only sets the thresholds again")
    add_precision_argument(ap)


def run(args: argparse.Namespace) -> dict:
    for name in ("scenes", "epochs", "frames"):
        if getattr(args, name) < 1:
            raise EnrollError(f"--{name} must be at least 1")
    if not 0.0 < args.house_share <= 1.0:
        raise EnrollError("--house-share must be above 0 and at most 1")
    return enroll(args.deck, args.out, args.scenes, args.epochs, args.frames, args.workers,
                  args.seed, args.model, args.keep_data, house_share=args.house_share,
                  hand_walks=args.hand_walks, weight_bits=args.weight_bits,
                  walk_splits=tuple(args.walk_splits), opposite_anchors=args.opposite_anchors,
                  lone_anchors={"calibrated": "calibrated", "always": True}.get(
                      args.lone_anchors, False), precision=args.precision)


if __name__ == "__main__":
    raise SystemExit(main())
