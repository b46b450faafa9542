"""Every read of a set of labelled frames, saved, so that the merge can be scored again fast.

The reader's part of a frame (:meth:`vision.recognize.Recognizer.read`: proposals, gate,
reader, second look, hand walk) is ~99 % of its time; the merge (:meth:`Recognizer.merge`)
about 1 ms. A change to the merge alone (how reads are grouped, split, refused or scored)
needs the threshold rule again (``models/cards_v4.md``), which reads 7560 frames, most of
them rendered on the fly (~30 minutes on two cores); from saved reads the same sweep takes a
few minutes and gives the same counts. ``python -m vision.sweep ... --save-reads F`` saves a
sweep's reads; ``python -m vision.sweep --from-reads F ... --out S`` scores them with the
merge as it is now, for ``vision.calibrate --sweep S``.

Reads are only as current as the code that read them: they name the reader and gate (by
SHA-256), their look scales and hand walks, and whether the frames were read with their
table's card sizes, and are refused for another; a change to the read
stage itself (proposals, looks, the walk) makes them stale without their knowing, so such a
change needs a fresh sweep.

File: ``.npz`` with ``reads`` (all reads, ``(n, 15)`` float64: class, probability, code
mass, index-corner point (2), x axis (2), y axis (2), width, height, direct, placement
scale, rank and colour (:mod:`vision.rankcolour`) and its probability; files saved before
2026-12-02 have the first 13 and no rank and colour), ``offsets`` (where each frame's
reads start; ``n`` last), ``labels`` (each frame's labels, JSON) and ``meta`` (JSON).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from vision import handwalk
from vision.proposals import IndexFrame

#: Columns of a packed read (13 before the rank and colour were kept, 15 before the extra
#: walks' bar).
COLUMNS = 16


def pack(reads: list) -> np.ndarray:
    """Reads (:class:`vision.merge._Read`) as rows of :data:`COLUMNS` floats."""
    return np.array([[r.cls, r.prob, r.code_mass, *r.frame.point, *r.frame.x_axis,
                      *r.frame.y_axis, r.frame.width, r.frame.height, float(r.frame.direct),
                      r.place, r.rank_colour, r.rank_colour_prob, r.extra_bar] for r in reads],
                    np.float64).reshape(-1, COLUMNS)


def unpack(rows: np.ndarray) -> list:
    """The reads that :func:`pack` made ``rows`` of (rows of 13, saved before the rank and
    colour were kept, give reads that do not know them; rows of 15 or fewer, reads of the
    pipeline's own places)."""
    from vision.merge import _Read

    return [_Read(int(r[0]), float(r[1]), float(r[2]),
                  IndexFrame(r[3:5].copy(), r[5:7].copy(), r[7:9].copy(), float(r[9]),
                             float(r[10]), bool(r[11])), float(r[12]),
                  *((int(r[13]), float(r[14])) if len(r) > 13 else ()),
                  *((float(r[15]),) if len(r) > 15 else ())) for r in rows]


def at_bar(reads: list, bar: float | None) -> list:
    """``reads`` with the extra walks' reads (``extra_bar`` set) held to ``bar`` instead of
    the bar they were saved with (``None``: as saved). The bar decides only which of their
    cards :func:`vision.merge.merge_reads` keeps, not what they read, so reads saved at one
    bar are those of another (:func:`check_identity` does not compare it).

    >>> from vision.merge import _Read
    >>> f = IndexFrame(np.zeros(2), np.array([1.0, 0]), np.array([0, 1.0]), 60.0, 87.0, True)
    >>> reads = [_Read(0, 0.99, 1.0, f), _Read(0, 0.9998, 1.0, f, extra_bar=0.9995)]
    >>> [r.extra_bar for r in at_bar(reads, 0.9999)]
    [0.0, 0.9999]
    """
    if bar is None:
        return reads
    return [replace(r, extra_bar=bar) if r.extra_bar else r for r in reads]


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def reader_identity(rec, calibrated: bool = False) -> dict:  # noqa: ANN001
    """What made a set of reads (:class:`vision.recognize.Recognizer` ``rec``): the reader's
    and gate's SHA-256, the look scales, the hand walks and the first walk's extra places
    (more places, more candidates), the extra walks (:func:`extra_walks`) and whether the
    frames were read with their table's card sizes (``calibrated``,
    :mod:`vision.tablesize`)."""
    splits = handwalk.SPLITS if rec.walk_splits is None else rec.walk_splits
    opposite = (handwalk.OPPOSITE_ANCHORS if rec.opposite_anchors is None
                else rec.opposite_anchors)
    lone = rec.lone_walk(calibrated)
    lone = handwalk.LONE_ANCHORS if lone is None else lone
    return {"model": rec.model_path.name, "model_sha256": file_sha256(rec.model_path),
            "gate_sha256": file_sha256(rec.gate_path) if rec.gate_path is not None else None,
            "look_scales": list(rec.look_scales), "hand_walks": rec.hand_walks,
            "walk_splits": list(splits), "opposite_anchors": bool(opposite),
            "lone_anchors": bool(lone), "calibrated": calibrated,
            "extra_walks": extra_walks(rec)}


def extra_walks(rec) -> dict | None:  # noqa: ANN001
    """The extra walks ``rec`` reads with (:data:`vision.recognize.EXTRA_BAR`): their bar and
    places (``"off_cards"``: the threshold whose reported cards they keep off,
    :data:`vision.recognize.EXTRA_OFF_CARDS`), or ``None`` for none."""
    from vision import recognize

    bar = rec.extra_walk_bar()
    if bar is None:
        return None
    return {"bar": bar, "walks": recognize.EXTRA_WALKS, "splits": list(recognize.EXTRA_SPLITS),
            "opposite_anchors": recognize.EXTRA_OPPOSITE, "lone_anchors": recognize.EXTRA_LONE,
            "off_cards": rec.model_threshold if recognize.EXTRA_OFF_CARDS else None}


def save(path: Path, frames: list[tuple[np.ndarray, dict]], meta: dict) -> None:
    """Write packed reads and labels of ``frames`` (in order) with ``meta``."""
    counts = [len(r) for r, _ in frames]
    np.savez_compressed(
        path, reads=np.concatenate([r for r, _ in frames]) if frames else np.zeros((0, COLUMNS)),
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        labels=np.array([json.dumps(lab) for _, lab in frames]),
        meta=np.array(json.dumps(meta)))


def load(path: Path) -> tuple[dict, list[tuple[np.ndarray, dict]]]:
    """``meta`` and the frames (packed reads, labels) of a file :func:`save` wrote."""
    with np.load(path) as d:
        reads, offsets = d["reads"], d["offsets"]
        frames = [(reads[a:b], json.loads(str(lab)))
                  for a, b, lab in zip(offsets[:-1], offsets[1:], d["labels"], strict=True)]
        return json.loads(str(d["meta"])), frames


def check_identity(meta: dict, identity: dict, path: Path) -> None:
    """Refuse reads made by another reader, gate, look scales, hand walks or walk places than
    ``identity``'s. The extra walks' bar is not compared: it changes which of their cards the
    merge keeps, not what they read (:func:`vision.sweep.sweep_reads` scores them at the
    reader's bar)."""
    for key, name in _IDENTITY_NAMES.items():
        made, wanted = meta.get(key, _BEFORE_THE_KEY.get(key)), identity[key]
        if key == "extra_walks":
            made, wanted = _without_bar(made), _without_bar(wanted)
        if made != wanted:
            raise ValueError(f"{path}: its reads were made with another {name} "
                             f"({made!r}, not {identity[key]!r}); sweep again")


def _without_bar(walks: dict | None) -> dict | None:
    return None if walks is None else {k: v for k, v in walks.items() if k != "bar"}


#: The keys of :func:`reader_identity`, as an error names them.
_IDENTITY_NAMES = {"model_sha256": "model", "gate_sha256": "gate", "look_scales": "look",
                   "hand_walks": "number of hand walks",
                   "walk_splits": "walk splits", "opposite_anchors": "opposite anchors",
                   "lone_anchors": "lone anchors' grid",
                   "calibrated": "card size (a calibrated table's, or the frame's own)",
                   "extra_walks": "extra walks"}
#: What files saved before a key was written were made with: one hand walk, no extra walk
#: places, the frame's own card size.
_BEFORE_THE_KEY = {"hand_walks": 1, "walk_splits": [], "opposite_anchors": False,
                   "lone_anchors": False, "calibrated": False, "extra_walks": None}
