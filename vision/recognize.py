"""Read every card in a table frame: face-up codes with confidence, face-down cards, refusals.

Pipeline: :func:`vision.proposals.outline` finds the card outlines' corners and hypotheses of
the card size; the reader picks the size under which the corners read
(:meth:`Recognizer.pick_size`); :func:`vision.proposals.propose` turns them into candidate
index corners, each is cut to a
canonical crop (:mod:`vision.crops`) and classified (52 codes, face down, reject) in reused
onnxruntime sessions: a small *gate* model looks at every candidate, and the larger *reader*
model only at those the gate does not put almost entirely on face down / reject
(:data:`GATE_CODE_MASS`; most candidates of a frame are felt, chips and card bodies); a
candidate read as a card code is classified again at two more crop scales and the three looks
averaged (:meth:`Recognizer.second_look`; a model may name more scales, and then the three
neighbouring ones that read it best count). Index corners read as cards then put more
candidates where a hand's even pitch says a covered card's corner lies
(:func:`vision.handwalk.hand_walk`, and their copies moved onto card edges), read alike;
where asked (the bundled reader's ``.json`` asks), one more walk looks around every hand,
away from the cards already reported, and the cards only it finds must reach a stricter bar
(:data:`EXTRA_BAR`). The reads are then merged into cards (:mod:`vision.merge`:
reads of one card grouped, a card read two ways refused, a card's confidence from its
reads); a card below the operating threshold is reported as ``unreadable``, never guessed;
so is every card of a frame without colour or a mirrored one, with a ``"warning"``. Every
result carries the frame's ``"quality"``: the blur of its card edges, its card width and the
warnings they raise (:mod:`vision.quality`), measured on the outline the reads were made
from, so the reads are the same without it. Several frames of a still layout can be read as
one (:meth:`Recognizer.recognize_burst`, :mod:`vision.burst`).

    >>> from vision.recognize import Recognizer  # doctest: +SKIP
    >>> Recognizer().recognize(cv2.imread("frame.jpg"))  # doctest: +SKIP
    {"cards": [{"code": "QH", "confidence": 0.998, "center": [x, y], "corners": [...]}],
     "face_down": [{"center": [x, y]}], "unreadable": [{"center": [x, y]}]}
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from vision.burst import fuse
from vision.codes import CLASSES
from vision.colourcast import stock_colour, with_colour
from vision.crops import extract_crops
from vision.exposure import brightened, stock_level, with_exposure
from vision.frames import (
    MIRRORED,
    as_bgr,
    colour_follows_brightness,
    has_colour,
    refuse_codes,
)
from vision.framesize import reading_size, to_frame_pixels
from vision.handwalk import ANCHOR_FLOOR, walk
from vision.kernels import (
    check_session,
    gemm_pays,
    gemm_routed,
    model_key,
    needs_exact_kernels,
    routes_convs_to_gemm,
)
from vision.merge import _Read, merge_own, merge_reads, over_cards, read_floor
from vision.onnxwire import WireError
from vision.proposals import (
    IndexFrame,
    Outline,
    index_frames,
    outline,
    propose,
)
from vision.quality import card_width, measure
from vision.rankcolour import rank_colour_probs, with_rank_colour
from vision.refine import gradients, refine
from vision.tablesize import TableSize
from vision.widthbar import Threshold, WidthSteps


def _model_dir() -> Path:
    """``$MONSTER_MATCH_MODELS``, else the repository's ``models/`` (a checkout or an
    editable install), else ``<prefix>/share/monster-match/models`` (a wheel install)."""
    import os
    import sys

    if os.environ.get("MONSTER_MATCH_MODELS"):
        return Path(os.environ["MONSTER_MATCH_MODELS"])
    here = Path(__file__).resolve().parent.parent / "models"
    if here.is_dir():
        return here
    return Path(sys.prefix) / "share" / "monster-match" / "models"


MODEL_DIR = _model_dir()
DEFAULT_MODEL = MODEL_DIR / "cards_v7.onnx"
#: The reader looks at a candidate when the gate puts at least this much on the card codes.
#: With ``gate_v2`` and the hand walk, on the 360 labelled calibration frames at 0.99: 0.05
#: read 73.61 % of the cards with 133 reader crops a frame, 0.1 73.70 % with 114, 0.2
#: 73.68 % with 103 (2 misreads each; the reader's weak reads of candidates the gate all but
#: rejects refused a few cards). 0.1, not higher: the gate has seen no validation design,
#: and at 0.2 it drops 1.3 % of the card crops of a calibration chunk against 0.3 % at 0.05.
#: (0.3 ran the reader on 17.5 crops fewer a frame of the training designs and took 0.946
#: of a `valb` frame's time; with second looks from 0.9 too, 0.927, but it read 0.22 points
#: fewer cards of the held-out typefaces: ``models/cards_v7.md``, forty-third session.)
GATE_CODE_MASS = 0.1
#: A candidate that the first look puts at least this much probability on card codes is
#: looked at again on frames scaled by the look scales (about its corner point:
#: :data:`LOOK_SCALES`, or the model's ``"look_scales"``), and its probabilities are the mean
#: of the three neighbouring scales whose mean is surest of a card code: a read must hold
#: when the crop's scale changes by ~7 %. With more than three scales this is a search for the
#: scale, which the proposals estimate from the card size in the frame and can miss by 20 % or
#: more; it found more cards but made as many more misreads (``models/cards_v4.md``), so the
#: default is the three scales alone.
SECOND_LOOK_MASS = 0.3
#: Crop scales of the second look, in increasing order, 1.0 (the first look) included; the
#: default is one window (no search), as ``cards_v4`` uses.
LOOK_SCALES: tuple[float, ...] = (0.93, 1.0, 1.07)
#: ... provided its best card code has at least this probability on the first look (the
#: reads that calibrate a threshold, :meth:`Recognizer.read`; :meth:`Recognizer.recognize`
#: starts higher where its thresholds allow: :meth:`Recognizer.second_look_floor`), and
#: less than this.
SECOND_LOOK_FLOOR = 0.35
#: (That ceiling: looking again at the reads from it up as well, 1.4 times the reader crops,
#: left the misread rule's pick for ``cards_v7`` at 0.997 and read 1.56 points fewer cards of
#: the held-out typefaces there: ``models/cards_v7.md``, forty-third session.)
SECOND_LOOK_CEILING = 0.999
#: A read this sure counts for a card-size hypothesis (:meth:`Recognizer.pick_size`) ...
SIZE_SURE = 0.99
#: ... and another hypothesis than the best-supported one needs this many times its count,
#: plus this margin.
SIZE_WIN_FACTOR = 2
SIZE_WIN_MARGIN = 2
#: ... or, with this share of its support or more, just a higher count.
SIZE_CLOSE_SUPPORT = 0.6
#: A card read at one index corner only is placed at a smaller hypothesis (at most this
#: share of the chosen one's height) under which the outline corners read at least this
#: share as often (:func:`placement_scale`).
PLACE_RATIO = 0.8
PLACE_COUNT = 0.8
#: Candidates one hand step from the index corners read as cards (:mod:`vision.handwalk`):
#: on the 360 labelled calibration frames at 0.99, 71.8 -> 72.9 % of the cards read (73.6 %
#: with the walked frames' copies moved onto card edges), misreads and false positives alike,
#: +3 to +4.6 ms a 720p frame (``models/cards_v4.md``).
HAND_WALK = True
#: Hand walks made one after another, each anchored on what the ones before read as well
#: (:func:`vision.handwalk.walk`; later walks place only halfway points), unless the model's
#: ``"hand_walks"`` says otherwise: its threshold holds for the walks it was chosen with. The
#: bundled reader's ``.json`` says 3, and ``cards_v7``'s threshold was chosen with three. For
#: ``cards_v5`` three walks read, on the held-out typefaces at 0.997, 60.27 % of the cards
#: against 59.80 % with one walk, the same 33 misreads, the rule's threshold the same, for
#: 1.04-1.05 times a frame's time (``models/cards_v5.md``, twenty-seventh session). A model
#: without the key (one made before it) walks once; an enrolled reader as often as
#: ``enroll-deck --hand-walks`` said.
HAND_WALKS = 1
#: After the walks, the extra walks (:func:`vision.handwalk.walk` once more, from every read
#: so far: the lone anchors' grid, and a first walk's splits of three steps and opposite
#: anchors) where this is a bar, the model's ``"extra_bar"`` or this setting: their reads
#: make cards only at this bar or the threshold, whichever is higher, and only where the
#: pipeline's own reads report no card (:func:`vision.merge.merge_reads`). 0: none.
#: Walked with the others, those places read ~3 points more of the held-out cards at 0.997,
#: but the cards they added misread eight times as often as the rest (fifty-seventh session);
#: held to 0.9995 here, +1.68 points on eight fresh held-out sweeps and +1.1 to +1.6 on the
#: validation sets with the same misreads, for 1.67 times a frame's time: an option
#: (fifty-eighth session). Reading none of their walked places over a reported card
#: (:data:`EXTRA_OFF_CARDS`) made them 1.30 times a frame's time and passed one gate (+1.00
#: points), but on eight more fresh sweeps read as recognize does (+1.66 points) they made 5
#: misreads more where the rule allows 3 (``models/cards_v7.md``, fifty-ninth session). Held
#: to 0.9999 (sixtieth session): +0.91 points on eight more fresh held-out sweeps with 1
#: misread more, +0.2 to +0.9 on the validation sets with the same misreads, and the bundled
#: reader's ``.json`` asks for them since.
EXTRA_BAR = 0.0
#: The bar the extra walks were measured and adopted at with the bundled reader
#: (``--extra-walks``'s default and the bundled ``.json``'s ``"extra_bar"``;
#: ``models/cards_v7.md``, fifty-eighth to sixtieth sessions).
EXTRA_WALKS_BAR = 0.9999
#: The extra walks' places (:func:`vision.handwalk.walk`'s ``splits``, ``opposite``,
#: ``lone``) and how many walks they take.
EXTRA_SPLITS: tuple[int, ...] = (3,)
EXTRA_OPPOSITE = True
EXTRA_LONE = True
EXTRA_WALKS = 1
#: Whether the extra walks leave out the walked places (and their copies moved onto card
#: edges) whose card, read on its own, would lie over a card the pipeline's own reads report
#: at the operating threshold (:func:`vision.merge.over_cards`): :func:`vision.merge.merge_reads`
#: adds no card there. Most of those places were copies moved onto the edges of the cards
#: already read. On 320 development frames the walk's reader crops went from 79 to 10 a frame
#: and one card of 67 added was lost; the lone anchors' grid is read whole, as a grid point
#: over a reported card may read a covered one and anchor its hand (sample neoclassical_000's
#: 2C is found so). The places are chosen by the cards reported at the model's own
#: threshold (:attr:`Recognizer.model_threshold`), whatever threshold a sweep scores or a
#: reader is given (``models/cards_v7.md``, fifty-ninth session).
EXTRA_OFF_CARDS = True
#: A frame that reports no more cards than this is checked for a mirrored picture
#: (:meth:`Recognizer.looks_mirrored`): a mirrored index reads as almost nothing, but a few
#: glyphs read as themselves mirrored. On `val`, `val2`, `val1080all`, `calib` and `calib2`
#: 574 of their 624 mirror images are found mirrored (552 when only frames without a card
#: were checked), none of the 61 frames of the 624 themselves that report two cards or fewer;
#: on 300 frames of two or three face-up cards, 239 of their mirror images (232), none of the
#: 115 frames checked. (Counted at the threshold for the training designs, at which this was
#: chosen: at an operating threshold of 0.998 or 0.999 (``cards_v4``, 2026-12-01) twice as
#: many `valb` frames report two cards or fewer, and each check costs 12-14 ms.)
MIRROR_CHECK_CARDS = 2
#: ... which needs this many sure reads flipped ...
MIRROR_MIN_SURE = 2
#: ... and this many times as many as unflipped.
MIRROR_FACTOR = 3


class ImageError(ValueError):
    """A file that is missing, corrupt or not an image."""


def load_image(path: str | Path) -> np.ndarray:
    """Read a BGR image, raising :class:`ImageError` for a missing or undecodable file."""
    p = Path(path)
    try:
        data = np.fromfile(p, np.uint8)
    except OSError as exc:
        raise ImageError(f"{p}: {exc.strerror or exc}") from None
    raw = data.tobytes()
    if raw[:2] == b"\xff\xd8" and b"\xff\xd9" not in raw[-64:]:
        raise ImageError(f"{p}: truncated JPEG (no end-of-image marker)")
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and b"IEND" not in raw[-16:]:
        raise ImageError(f"{p}: truncated PNG (no IEND chunk)")
    img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if img is None:
        raise ImageError(f"{p}: not a readable image")
    return img


#: Per model file (path, size, modification time): whether its QGEMM session was the faster
#: one in this process (vision.kernels.gemm_pays), measured once.
_gemm_choice: dict[tuple[str, int, int], bool] = {}


def on_qgemm(model: Path) -> bool:
    """Whether this process reads with ``model``'s deeper convolutions moved to onnxruntime's
    QGEMM path (:func:`vision.kernels.gemm_routed`; after it was opened here)."""
    return _gemm_choice.get(model_key(model), False)


def session_options(threads: int):  # noqa: ANN201 - onnxruntime is imported lazily
    """onnxruntime's options for a model the recogniser reads with: ``threads`` threads,
    sequential, and exact integer kernels where the CPU's fast ones saturate."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # The int8 reader's U8S8 kernels on x86 CPUs without VNNI (AVX2, AVX-512 before VNNI) add
    # products pairwise in saturating 16-bit lanes: logits off by up to ~5, half the cards
    # lost (models/cards_v5.md, twenty-third session). There onnxruntime is asked to rewrite
    # the weights for its U8U8 kernels: exact integer sums, the same output as VNNI's.
    if needs_exact_kernels():
        opts.add_session_config_entry("session.x64quantprecision", "1")
    return opts


def _session(model: Path, threads: int):  # noqa: ANN202 - onnxruntime is imported lazily
    import onnxruntime as ort

    if not model.exists():
        raise FileNotFoundError(f"vision model not found: {model}")
    opts = session_options(threads)

    def open_session(source: str | bytes):  # noqa: ANN202
        return ort.InferenceSession(source, opts, providers=["CPUExecutionProvider"])

    # On a CPU with AMX the deeper int8 convolutions may run on onnxruntime's QGEMM path (AMX
    # tiles) instead of its symmetric VNNI kernels: the same model, rewritten in memory
    # (vision.kernels.gemm_routed), kept where it measures faster in this process; the file,
    # and what its SHA-256 names, are unchanged, and the check below runs on what is kept.
    session = None
    key = model_key(model)
    if routes_convs_to_gemm() and _gemm_choice.get(key) is not False:
        try:
            routed, moved = gemm_routed(model.read_bytes())
        except WireError:  # a file onnxruntime reads but the wire reader does not: as it is
            routed, moved = b"", 0
        if moved:
            faster = open_session(routed)
            if key not in _gemm_choice:
                session = open_session(str(model))
                _gemm_choice[key] = gemm_pays(session, faster)
            if _gemm_choice[key]:
                session = faster
        else:
            _gemm_choice[key] = False
    if session is None:
        session = open_session(str(model))
    check_session(session, model)  # and make sure of it (vision.kernels), once per model
    return session


def one_blas_thread() -> None:
    """Limit numpy's BLAS (OpenBLAS in numpy's wheels) to one thread in this process
    (threadpoolctl; process-wide, as BLAS's own setting is). The pipeline's matrix products
    are small (a crop map's few thousand entries, a felt grid): BLAS threads gain nothing on
    them and keep other cores busy. Measured in the thirty-sixth session (two cores,
    ``models/cards_v5.md``): the same reads of 960 frames; a frame on one core in the same
    time (paired ratio 0.997); ``recognize`` of 480 frames in the same wall time with 34 s
    of CPU instead of 60 (a second core had been kept busy); ``vision-eval --workers 2``
    1.77 times one process's frames a second, against 1.11 with two BLAS threads in each
    worker."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


def softmax(logits: np.ndarray) -> np.ndarray:
    """Each row of a model's logits as probabilities.

    >>> softmax(np.array([[0.0, np.log(3.0)]])).round(3).tolist()
    [[0.25, 0.75]]
    """
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _softmax(session, crops: np.ndarray) -> np.ndarray:  # noqa: ANN001
    if len(crops) == 0:
        return np.zeros((0, len(CLASSES)), np.float32)
    return softmax(session.run(None, {"crops": crops})[0])


class Recognizer:
    """ONNX sessions (single-threaded by default) reused for every frame. Made with
    ``threads`` 1, it also limits numpy's BLAS to one thread in this process
    (:func:`one_blas_thread`): a frame is read on one core.

    ``model`` is the reader; its metadata (``<model>.json``: class list, operating threshold,
    ``"gate"``: the gate model's file name beside it) name the gate, or ``gate`` does. Without
    a gate the reader looks at every candidate. A refusal carries the card's rank and colour
    where they are sure at ``"rank_colour_threshold"`` (:mod:`vision.rankcolour`), or at
    ``rank_colour_threshold``; never with ``rank_colour`` False or without either.
    ``extra_bar``: read with the extra walks at that bar (:data:`EXTRA_BAR`; 0: without),
    whatever the model's ``"extra_bar"`` says.
    """

    #: (a class default too: the merge's tests make recognisers without a model)
    rank_colour_threshold: float | None = None
    walk_splits: tuple[int, ...] | None = None
    opposite_anchors: bool | None = None
    lone_anchors: bool | str | None = None
    extra_bar: float | None = None
    width_steps: WidthSteps | None = None
    model_width_steps: WidthSteps | None = None

    def __init__(self, model: str | Path = DEFAULT_MODEL, threshold: float | None = None,
                 threads: int = 1, gate: str | Path | None = None,
                 rank_colour_threshold: float | None = None, rank_colour: bool = True,
                 extra_bar: float | None = None) -> None:
        model = Path(model)
        self.threads = threads
        if threads == 1:  # one core: numpy's BLAS on it too (one_blas_thread)
            one_blas_thread()
        self.session = _session(model, threads)
        meta_path = model.with_suffix(".json")
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        if list(meta.get("classes", CLASSES)) != list(CLASSES):
            raise ValueError(f"{model}: class list does not match vision.codes.CLASSES")
        self.threshold = float(threshold if threshold is not None
                               else meta.get("threshold", 0.9))
        #: The model's own operating threshold, whatever ``threshold`` says: the extra walks
        #: choose their places by the cards reported at it (:data:`EXTRA_OFF_CARDS`), so that
        #: a sweep, which reads at a threshold of 0.5 to score every one, reads them as
        #: :meth:`recognize` does.
        self.model_threshold = float(meta.get("threshold", 0.9))
        #: The threshold the rule picked on the training designs alone (``vision.calibrate``
        #: ``--unseen-sweep``; the operating one holds on designs the reader never saw too)
        self.seen_threshold = float(meta.get("seen_threshold", self.threshold))
        #: Where a card's code is below the threshold, its rank and colour are reported at
        #: this one (:mod:`vision.rankcolour`, chosen by the same rule); ``None``: never.
        # (``rank_colour_threshold`` instead of the model's; ``rank_colour`` False: never)
        rc = (rank_colour_threshold if rank_colour_threshold is not None
              else meta.get("rank_colour_threshold"))
        self.rank_colour_threshold = None if rc is None or not rank_colour else float(rc)
        #: The threshold for reads at a calibrated table's card sizes (:meth:`recognize` with
        #: ``table``), where the model's ``.json`` names one: enrollment writes it where such
        #: reads keep the misread rule and read more than the frame's own sizes do
        #: (:mod:`vision.enroll`), and the table's camera then reads so
        #: (:meth:`table_for`); ``threshold`` sets both where the model has one (a threshold
        #: alone does not make a reader read calibrated tables so).
        ct = meta.get("calibrated_threshold")
        self.calibrated_threshold = (None if ct is None
                                     else float(threshold if threshold is not None else ct))
        #: The model's operating threshold by the card's width, where its ``.json`` names
        #: ``"threshold_by_width"`` (:mod:`vision.widthbar`), whatever ``threshold`` says
        #: (a sweep scores it beside every flat threshold); ``None``: flat.
        steps = meta.get("threshold_by_width")
        self.model_width_steps = (None if steps is None else
                                  WidthSteps.parse(steps, f"{meta_path}: threshold_by_width"))
        #: The threshold by width that :meth:`merge` holds cards to: the model's, unless a
        #: ``threshold`` was given (which then holds for every card).
        self.width_steps = self.model_width_steps if threshold is None else None
        if gate is None and meta.get("gate"):
            gate = model.parent / meta["gate"]
        # the files read, named by what the reads of this recogniser came from (vision.readsfile)
        self.model_path = model
        self.gate_path = Path(gate) if gate is not None else None
        self.look_scales = tuple(float(v) for v in meta.get("look_scales", LOOK_SCALES))
        if (len(self.look_scales) < 3 or 1.0 not in self.look_scales
                or list(self.look_scales) != sorted(set(self.look_scales))):
            raise ValueError(f"{meta_path}: look_scales must be 3 or more increasing scales "
                             f"including 1.0, not {list(self.look_scales)}")
        self.gate_session = _session(Path(gate), threads) if gate is not None else None
        self.hand_walks = int(meta.get("hand_walks", HAND_WALKS))
        if self.hand_walks < 0:
            raise ValueError(f"{meta_path}: hand_walks must be 0 or more, not "
                             f"{self.hand_walks}")
        #: The first walk's extra places (:func:`vision.handwalk.hand_walk`), where the model's
        #: ``"walk_splits"`` / ``"opposite_anchors"`` name them (an enrolled deck's, chosen
        #: with them: ``enroll-deck --walk-splits``); ``None``: the module's defaults (none).
        splits = meta.get("walk_splits")
        if splits is not None and (not isinstance(splits, list)
                                   or not all(isinstance(k, int) and k >= 3 for k in splits)):
            raise ValueError(f"{meta_path}: walk_splits must be a list of whole numbers of "
                             f"3 or more (hand steps between two anchors), not {splits!r}")
        self.walk_splits = None if splits is None else tuple(splits)
        opposite = meta.get("opposite_anchors")
        if opposite is not None and not isinstance(opposite, bool):
            raise ValueError(f"{meta_path}: opposite_anchors must be true or false, not "
                             f"{opposite!r}")
        self.opposite_anchors = opposite
        #: Whether the hands of which one corner was read are looked around on a grid of hand
        #: steps before the walks (:func:`vision.handwalk.lone_walk`), where the model's
        #: ``"lone_anchors"`` says so (``enroll-deck --lone-anchors``): ``true`` always,
        #: ``"calibrated"`` only for reads at a calibrated table's card sizes (where three
        #: enrolled decks read more with them and kept the rule; at the frame's own sizes one
        #: of them did not, ``models/cards_v5.md``, thirty-fourth session); ``None``: the
        #: module's default (no).
        lone = meta.get("lone_anchors")
        if lone is not None and not isinstance(lone, bool) and lone != "calibrated":
            raise ValueError(f"{meta_path}: lone_anchors must be true, false or "
                             f"\"calibrated\", not {lone!r}")
        self.lone_anchors = lone
        bar = meta.get("extra_bar") if extra_bar is None else extra_bar
        if bar is not None and (isinstance(bar, bool) or not isinstance(bar, (int, float))
                                or not (bar == 0 or 0.5 <= bar <= 1.0)):
            raise ValueError(f"{meta_path if extra_bar is None else 'extra_bar'}: extra_bar "
                             f"must be a probability from 0.5 to 1, or 0 for no extra walks, "
                             f"not {bar!r}")
        #: The extra walks' bar (:data:`EXTRA_BAR`; 0: none): ``extra_bar``, else the
        #: model's ``"extra_bar"``; ``None``: the module's setting.
        self.extra_bar = None if bar is None else float(bar)
        # "burst": the threshold, and the frames that must agree, at which fused reports of
        # bursts of up to "frames" frames keep the misread rule (chosen on calibration
        # bursts); without it only single frames are calibrated
        burst = meta.get("burst", {})
        self.burst_frames = int(burst.get("frames", 1))
        # (without a burst threshold, each frame's cards are kept as the frame reported them:
        # at the operating threshold, or at that of their width, which the fused cards' would
        # undo; a burst threshold was chosen flat, and holds as chosen)
        if "threshold" in burst:
            self.burst_threshold = max(self.threshold, float(burst["threshold"]))
        else:
            self.burst_threshold = 0.0 if self.width_steps is not None else self.threshold
        self.burst_min_frames = int(burst.get("min_frames", 1))

    def __getstate__(self) -> dict:
        """Everything but the onnxruntime sessions, which do not pickle: a copy in another
        process (:mod:`vision.parallel`) opens them again from :attr:`model_path` and
        :attr:`gate_path`, as this one did, and reads alike, settings changed after
        construction included."""
        state = dict(self.__dict__)
        state.pop("session", None)
        state.pop("gate_session", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if self.threads == 1:
            one_blas_thread()
        self.session = _session(self.model_path, self.threads)
        self.gate_session = (_session(self.gate_path, self.threads)
                             if self.gate_path is not None else None)

    def classify(self, crops: np.ndarray) -> np.ndarray:
        """The reader's softmax probabilities ``(N, len(CLASSES))`` for canonical crops."""
        return _softmax(self.session, crops)

    def first_look(self, crops: np.ndarray) -> np.ndarray:
        """Probabilities for every candidate: the gate's, replaced by the reader's wherever
        the gate puts at least :data:`GATE_CODE_MASS` on the card codes."""
        if self.gate_session is None:
            return self.classify(crops)
        probs = _softmax(self.gate_session, crops)
        sel = np.flatnonzero(probs[:, :52].sum(1) >= GATE_CODE_MASS)
        if len(sel):
            probs[sel] = self.classify(crops[sel])
        return probs

    def second_look(self, img: np.ndarray, frames: list[IndexFrame],
                    probs: np.ndarray, floor: float = SECOND_LOOK_FLOOR) -> np.ndarray:
        """``probs`` with every candidate read as a card code (at least
        :data:`SECOND_LOOK_MASS` on the codes, its best code at least ``floor``) replaced by
        the mean of three neighbouring look scales (:attr:`look_scales`): the three whose mean
        puts the most on one code (:func:`best_window`)."""
        # A candidate whose first look is below SECOND_LOOK_FLOOR on every code cannot reach
        # the pair floor of any operating threshold above 0.95 after averaging three looks
        # (3 x 0.78 - 2 = 0.34); with a search it could, but on the validation frames a floor
        # of 0.15 found no more cards than 0.35. One at SECOND_LOOK_CEILING or more is kept as
        # read: neither is worth the reader runs of the other scales.
        best = probs[:, :52].max(1)
        again = np.flatnonzero((probs[:, :52].sum(1) >= SECOND_LOOK_MASS)
                               & (best >= floor) & (best < SECOND_LOOK_CEILING))
        if not len(again):
            return probs
        others = [s for s in self.look_scales if s != 1.0]
        looks = [IndexFrame(f.point, f.x_axis, f.y_axis, f.width * s, f.height * s, f.direct)
                 for s in others for f in (frames[i] for i in again)]
        more = list(self.classify(extract_crops(img, looks)).reshape(len(others),
                                                                     len(again), -1))
        more.insert(self.look_scales.index(1.0), probs[again])
        out = probs.copy()
        out[again] = best_window(np.stack(more), codes=52)
        return out

    def second_look_floor(self) -> float:
        """The least first-look probability of a candidate's best card code at which
        :meth:`recognize` gives it a second look: the highest floor under which no second
        look can change a card it reports, a face-down card or a walk.

        A second look replaces a candidate's probabilities by the mean of three looks, its
        first among them (with three look scales: one window), so no code's probability can
        end above ``(2 + p) / 3`` for a first look ``p`` on every code. Below the read floor
        of the lowest threshold :meth:`recognize` merges at (:func:`vision.merge.read_floor`:
        the operating threshold, :attr:`seen_threshold` for the mirror check's count, a
        calibrated table's) a read changes no card, and below
        :data:`vision.handwalk.ANCHOR_FLOOR` it anchors no walk: for thresholds of 0.99 or
        more both are 0.9, so candidates under 0.7 need no second look. (Nor can it make a
        face-down card: that needs 0.9 on the back, and a candidate looked at again has at
        least :data:`SECOND_LOOK_MASS` on the codes, at most 0.7 on the back, so the mean
        reaches 0.9 only with both other looks sure backs.) What such a look
        could still change is a plain refusal's marker (its best class and code mass), so the
        saving changes some markers; the sweeps that choose thresholds read every candidate
        from :data:`SECOND_LOOK_FLOOR` (:meth:`read`), at whatever threshold. A reader that
        reports rank and colour (whose probabilities add two codes) or has more than three
        look scales (a window without the first look) keeps :data:`SECOND_LOOK_FLOOR`.

        >>> rec = Recognizer.__new__(Recognizer)   # the settings alone, without a model
        >>> rec.look_scales, rec.calibrated_threshold = (0.93, 1.0, 1.07), None
        >>> rec.threshold, rec.seen_threshold = 0.997, 0.993
        >>> round(rec.second_look_floor(), 4)
        0.6999
        >>> rec.seen_threshold = 0.98                 # pair floor 1 - sqrt(0.02) = 0.859
        >>> round(rec.second_look_floor(), 4)
        0.5756
        >>> rec.rank_colour_threshold = 0.9995
        >>> rec.seen_threshold = 0.993
        >>> rec.second_look_floor() == SECOND_LOOK_FLOOR
        True
        """
        if self.rank_colour_threshold is not None or len(self.look_scales) != 3:
            return SECOND_LOOK_FLOOR
        steps = self.width_steps.lowest if self.width_steps is not None else None
        lowest = min(t for t in (self.threshold, self.seen_threshold, self.calibrated_threshold,
                                 steps) if t is not None)
        reach = min(read_floor(lowest), ANCHOR_FLOOR)
        # (a hair under the bound: the mean of three float32 looks is rounded)
        return max(SECOND_LOOK_FLOOR, 3 * reach - 2 - 1e-4)

    def recognize(self, img: np.ndarray, table: TableSize | None = None) -> dict:
        """Cards in a frame (BGR; greyscale, BGRA and 16-bit frames are converted); see the
        module docstring for the shape of the result. In a frame without colour, or whose
        colour follows its brightness alone (a tinted monochrome picture; :mod:`vision.frames`),
        or one that reads at most :data:`MIRROR_CHECK_CARDS` cards and :meth:`looks_mirrored`,
        every face-up card is refused and the result carries a ``"warning"`` saying why. A
        frame larger than 1080p is read at 1080p and reported in its own pixels
        (:mod:`vision.framesize`); a dim one is brightened first (:mod:`vision.exposure`).
        ``table``: the card sizes of a calibrated table (:mod:`vision.tablesize`) instead of
        those estimated in the frame, the cards kept at :attr:`calibrated_threshold` where
        the model has one (and then without rank and colour: not calibrated for such
        reads), else at the operating threshold: more cards, but for the bundled reader the
        misread rule on designs it never saw asks 0.999 of such reads, not its 0.997, so it
        has no calibrated threshold and the table's camera does not read so
        (``models/cards_v5.md``, twenty-eighth session); an enrolled deck
        may (twenty-ninth session)."""
        t0 = time.perf_counter()
        img = as_bgr(img)
        level = stock_level(img)
        img, gain = brightened(img, level)  # a dim frame (vision.exposure)
        size = reading_size(img.shape)
        if size is not None:  # larger than 1080p: read at 1080p (vision.framesize)
            fx, fy = size[0] / img.shape[1], size[1] / img.shape[0]
            img = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
            table = None if table is None else table.scaled(fx, fy)
        reads, found, looks, own = self._read(img, table, self.second_look_floor())
        if table is not None and self.calibrated_threshold is not None:
            result = merge_reads(reads, self.calibrated_threshold)
        else:
            result = self.merge(reads, own=own)
        if not has_colour(img) or (result["cards"] and colour_follows_brightness(img)):
            result = refuse_codes(result)
        elif self.few_cards(reads, result) and self.looks_mirrored(img, found, looks):
            result = refuse_codes(result, MIRRORED)
        result["quality"] = with_colour(with_exposure(
            measure(img, found, card_width(result["cards"])).to_json(), level, gain),
            stock_colour(img, result["cards"]))
        if size is not None:
            result = to_frame_pixels(result, fx, fy)
        result["elapsed_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        return result

    def recognize_burst(self, frames: Sequence[np.ndarray],
                        table: TableSize | None = None) -> dict:
        """The cards of a still layout from several frames of it, one after another
        (:mod:`vision.burst`): each frame recognised, the reports fused and kept at
        :attr:`burst_threshold` when :attr:`burst_min_frames` frames read them. Refused
        (``ValueError``) for more frames than the model's burst threshold was chosen for
        (:attr:`burst_frames`): more frames are more chances to misread. ``table`` as for
        :meth:`recognize`."""
        if not 1 <= len(frames) <= self.burst_frames:
            raise ValueError(f"this model is calibrated for bursts of 1 to {self.burst_frames} "
                             f"frames, not {len(frames)}")
        return fuse([self.recognize(f, table) for f in frames], self.burst_threshold,
                    self.burst_min_frames)

    def table_for(self, calibration) -> TableSize | None:  # noqa: ANN001 - TableCalibration
        """The card sizes :meth:`recognize` should read a frame of a calibrated table at:
        those of ``calibration`` (a :class:`vision.calibration.TableCalibration`, or ``None``
        for a frame that could not be calibrated) where this reader has a
        :attr:`calibrated_threshold`, else ``None`` (the frame's own sizes)."""
        if calibration is None or self.calibrated_threshold is None:
            return None
        return TableSize.from_calibration(calibration)

    def few_cards(self, reads: list[_Read], result: dict) -> bool:
        """Whether a frame reads at most :data:`MIRROR_CHECK_CARDS` cards, counted at the lower
        of the operating threshold (``result``: :meth:`merge` of ``reads``) and
        :attr:`seen_threshold`, at which that count was chosen."""
        if len(result["cards"]) > MIRROR_CHECK_CARDS:
            return False
        if self.seen_threshold >= self.threshold:
            return True
        return len(self.merge(reads, self.seen_threshold)["cards"]) <= MIRROR_CHECK_CARDS

    def looks_mirrored(self, img: np.ndarray, found: Outline | None = None,
                       looks: list[np.ndarray] | None = None) -> bool:
        """Whether ``img`` is a mirror image of the table: its outline corners, cut as index
        corners, read surely (:data:`SIZE_SURE`) at least :data:`MIRROR_MIN_SURE` times and
        :data:`MIRROR_FACTOR` times as often in the picture flipped left to right as in the
        picture itself. A mirrored index reads as almost nothing (a few mirror-symmetric
        glyphs, placed on the wrong card), so a mirrored camera would otherwise show only as
        a table with no cards, or few. :meth:`recognize` asks this of a frame that reports at
        most :data:`MIRROR_CHECK_CARDS` cards: an outline pass of the flipped picture and a
        few dozen crops more (28 ms a 720p frame, median of the 10 such frames of 80 of
        `valb`), which decide alone unless the flipped picture reads at least
        :data:`MIRROR_MIN_SURE` corners. Then ``img``'s own count is needed: from the outline
        (``found``) and first looks at its corners (``looks``, one per size hypothesis) that
        :meth:`read` made, when passed, instead of a second outline pass."""
        def sure(frame: np.ndarray, found: Outline | None = None,
                 looks: list[np.ndarray] | None = None) -> int:
            found = outline(frame) if found is None else found
            if not found.sizes:
                return 0
            if not looks:
                looks = [self.first_look(extract_crops(frame, index_frames(
                    found.corners, size, direct_only=True))) for size in found.sizes]
            return max(_sure_counts(looks))

        flipped = sure(cv2.flip(img, 1))
        return flipped >= MIRROR_MIN_SURE and flipped >= MIRROR_FACTOR * sure(img, found, looks)

    def read(self, img: np.ndarray, table: TableSize | None = None) -> list[_Read]:
        """Every candidate index corner with its best class and probability (no threshold);
        with ``table``, the card sizes of a calibrated table (:mod:`vision.tablesize`). A dim
        frame is brightened first, as :meth:`recognize` reads it (:mod:`vision.exposure`):
        the threshold sweeps (:mod:`vision.sweep`, :mod:`vision.calibrate`) read through
        here, and must measure what the table's camera does. Every candidate from
        :data:`SECOND_LOOK_FLOOR` is looked at again, so that any threshold can be scored;
        :meth:`recognize` skips the second looks that cannot change a card at its own
        thresholds (:meth:`second_look_floor`): the same cards, some refusals apart."""
        return self._read(brightened(as_bgr(img))[0], table)[0]

    def _read(self, img: np.ndarray, table: TableSize | None = None,
              floor: float = SECOND_LOOK_FLOOR
              ) -> tuple[list[_Read], Outline, list[np.ndarray], dict | None]:
        """:meth:`read`, with the frame's outline, :meth:`_pick_size`'s first looks at its
        corners (for :meth:`looks_mirrored`; none with ``table``, which leaves no card size
        to choose) and, where the extra walks chose their places by them, the own reads'
        merge at the operating threshold (:func:`vision.merge.merge_own`; ``None`` where
        there are no extra walks or the threshold is not the model's);
        ``floor``: :meth:`second_look`'s."""
        found = outline(img)
        if not found.sizes:  # no card outline: no candidate, and no gradients to make
            return [], found, [], None
        size, direct = self._pick_size(img, found) if table is None else (0, [])
        grads = gradients(img)
        frames = propose(img, found=found, size=size, grads=grads, table=table)
        # the outline corners come first among the frames, as pick_size cut and read them
        known = direct[size] if direct else np.zeros((0, len(CLASSES)), np.float32)
        probs = np.concatenate([known,
                                self.first_look(extract_crops(img, frames[len(known):]))])
        probs = self.second_look(img, frames, probs, floor)

        def look_grid(walked: list[IndexFrame]) -> tuple[list[IndexFrame], np.ndarray]:
            if not walked:
                return walked, np.zeros((0, len(CLASSES)), np.float32)
            # (a grid's points lie closer together than the refinement moves a copy). The
            # walks' candidates are looked at again like the proposals: read by one look
            # (and the gate's code mass at 0.3) they saved 9 % of a frame's time but made 39
            # misreads of the held-out typefaces at 0.997 instead of 27 (models/cards_v7.md,
            # forty-third session): one look is surer than three, and wrong more often
            return walked, self.second_look(img, walked,
                                            self.first_look(extract_crops(img, walked)), floor)

        def look(walked: list[IndexFrame]) -> tuple[list[IndexFrame], np.ndarray]:
            # their moved copies are kept even within 0.1 card widths of a candidate:
            # dropping those (as the proposals do) read 0.45 points fewer cards of the
            # calibration frames, saving 1.6 ms
            return look_grid(walked + refine(img, walked, grads))

        frames, probs = walk(frames, probs, look, self.hand_walks if HAND_WALK else 0,
                             splits=self.walk_splits, opposite=self.opposite_anchors,
                             lone=self.lone_walk(table is not None), lone_look=look_grid)
        # a table's card sizes are not a hand's outline: cards are placed at them
        place = placement_scale(found, size, direct) if table is None else 1.0
        reads = _reads(frames, probs, place)
        bar = self.extra_walk_bar()
        if bar is None or not HAND_WALK:
            return reads, found, direct, None
        # no place is read whose card lies over a card the own reads report at the model's
        # operating threshold: merge_reads would not add it there (EXTRA_OFF_CARDS); their
        # merge is kept for recognize, which makes it again otherwise
        mine = merge_own(reads, self.model_threshold) if EXTRA_OFF_CARDS else None
        cards = mine["cards"] if mine is not None else []
        if self.threshold != self.model_threshold or self.width_steps is not None:
            # (not the merge recognize makes; by width, the places are still chosen by the
            # cards of the flat threshold, so that the reads, and a sweep's replay of them
            # at any threshold, do not depend on the steps)
            mine = None

        def clear(walked: list[IndexFrame]) -> list[IndexFrame]:
            over = over_cards(walked, cards, place)
            return [f for f, o in zip(walked, over, strict=True) if not o]

        def look_extra(walked: list[IndexFrame]) -> tuple[list[IndexFrame], np.ndarray]:
            return look_grid(clear(walked + refine(img, walked, grads)))

        own = len(frames)  # the reads after these are the extra walks' (extra_bar set)
        frames, probs = walk(frames, probs, look_extra, EXTRA_WALKS, splits=EXTRA_SPLITS,
                             opposite=EXTRA_OPPOSITE, lone=EXTRA_LONE, lone_look=look_grid)
        return reads + _reads(frames[own:], probs[own:], place, bar), found, direct, mine

    def extra_walk_bar(self) -> float | None:
        """The extra walks' bar (:data:`EXTRA_BAR`): this recogniser's (``extra_bar``, else
        its model's ``"extra_bar"``), else the module's; ``None``: no extra walks."""
        bar = self.extra_bar if self.extra_bar is not None else EXTRA_BAR
        return bar or None

    def lone_walk(self, calibrated: bool) -> bool | None:
        """Whether reads at the frame's own card sizes (or, ``calibrated``, at a calibrated
        table's) look around the hands of one read corner (:attr:`lone_anchors`); ``None``:
        as :data:`vision.handwalk.LONE_ANCHORS` says."""
        if self.lone_anchors == "calibrated":
            return calibrated
        return self.lone_anchors

    def pick_size(self, img: np.ndarray, found: Outline) -> int:
        """Which card-size hypothesis of ``found`` to read the frame at (index into
        ``found.sizes``, best supported first).

        Every outline corner is cut as an index corner under each hypothesis, and the first
        look counts the cuts it reads at :data:`SIZE_SURE` or more. Another hypothesis wins
        with at least :data:`SIZE_WIN_FACTOR` times the first's count plus
        :data:`SIZE_WIN_MARGIN`, or, among those nearly as well supported as the first
        (:data:`SIZE_CLOSE_SUPPORT`), with the highest count (ties go to the better
        supported): a hand's outline and a card often tie on support.

        The reader is trained on corners cut at the card's size; a corner cut at the size of
        a hand of two cards (1.5 times a card) shows a small glyph off centre, which it reads
        less often. The choice is made once for the whole frame on all its corners, so no card
        picks its own scale. The margin against weaker rivals is wide because corners cut at
        0.6-0.7 times the card's size read about as well as at its size (the glyph is only
        larger). The sum of the probabilities instead of a count of sure reads chose worse
        than the measurements' support alone."""
        return self._pick_size(img, found)[0]

    def _pick_size(self, img: np.ndarray, found: Outline) -> tuple[int, list[np.ndarray]]:
        """:meth:`pick_size`, and the first look at the outline corners under each
        hypothesis (none with one hypothesis: there is nothing to choose)."""
        if len(found.sizes) < 2:
            return 0, []
        looks = [self.first_look(extract_crops(img, index_frames(found.corners, size,
                                                                 direct_only=True)))
                 for size in found.sizes]
        counts = _sure_counts(looks)
        top = int(np.argmax(counts))
        if counts[top] >= SIZE_WIN_FACTOR * counts[0] + SIZE_WIN_MARGIN:
            return top, looks
        close = [i for i, size in enumerate(found.sizes)
                 if size.support >= SIZE_CLOSE_SUPPORT * found.sizes[0].support]
        return max(close, key=lambda i: (counts[i], -i)), looks

    def operating_threshold(self) -> Threshold:
        """What :meth:`merge` holds a card to: :attr:`width_steps` where the model has them,
        else :attr:`threshold`."""
        return self.width_steps if self.width_steps is not None else self.threshold

    def merge(self, reads: list[_Read], threshold: Threshold | None = None,
              rank_colour_threshold: float | None = None, own: dict | None = None) -> dict:
        """Cards, face-down cards and refusals from :meth:`read`'s output
        (:func:`vision.merge.merge_reads` at the operating threshold, or ``threshold``); the
        refusals of cards whose rank and colour are sure at the reader's
        :attr:`rank_colour_threshold` (or ``rank_colour_threshold``) carry them
        (:func:`vision.rankcolour.with_rank_colour`); ``merge_reads`` alone gives the codes
        without them. ``own``: the own reads' merge at the operating threshold, where
        :meth:`_read` made it. The operating threshold goes by the card's width where the
        model's ``.json`` says so (:attr:`width_steps`)."""
        result = (merge_reads(reads, self.operating_threshold(), own) if threshold is None
                  else merge_reads(reads, threshold))
        rc = (self.rank_colour_threshold if rank_colour_threshold is None
              else rank_colour_threshold)
        return result if rc is None else with_rank_colour(result, reads, rc)


def _reads(frames: list[IndexFrame], probs: np.ndarray, place: float,
           bar: float = 0.0) -> list[_Read]:
    """The reads of ``frames`` (``probs``: their class probabilities) placed at ``place``,
    each carrying ``bar`` (the extra walks'; 0: the pipeline's own)."""
    # the best class, its probability and the code mass of every candidate in three numpy
    # calls, not three a candidate (the same numbers: each row summed alike)
    best, mass = probs.max(1).tolist(), probs[:, :52].sum(1).tolist()
    rc = rank_colour_probs(probs)
    return [_Read(c, p, m, f, place, k, q, bar) for c, p, m, f, k, q in zip(
        probs.argmax(1).tolist(), best, mass, frames, rc.argmax(1).tolist(),
        rc.max(1).tolist(), strict=True)]


def placement_scale(found: Outline, size: int, looks: list[np.ndarray]) -> float:
    """The scale of the chosen card-size hypothesis ``size`` at which cards read at one index
    corner only are placed: that of a smaller hypothesis (at most :data:`PLACE_RATIO` of its
    height) under which the outline corners read nearly as often
    (:data:`PLACE_COUNT` of the sure reads, :meth:`Recognizer.pick_size`'s ``looks``), else 1.

    A hypothesis of a hand's outline (1.5-2 times a card) often ties with the card's own on
    sure reads: corners cut too large still read. Read at it, a card's index corner is right
    but its centre, half a hand's diagonal away, lands on a neighbour (8 of the 25 misreads
    left on 4320 rendered calibration frames at 0.993). Placed at the smaller size the centre
    stays on the card either way: too small, it moves towards the index corner, within the
    card. Reading and grouping keep the chosen size.

    >>> import numpy as np
    >>> from vision.proposals import CardSize, Outline
    >>> def size(h): return CardSize(h, 1.45, np.zeros((0, 2)), np.zeros((0, 2)), 5.0)
    >>> found = Outline([], [size(150.0), size(90.0)], [])
    >>> def sure(n): return np.tile(np.eye(54)[0], (n, 1))   # n reads of AS at 1.0
    >>> placement_scale(found, 0, [sure(6), sure(6)])
    0.6
    >>> placement_scale(found, 0, [sure(6), sure(3)])      # the smaller one reads worse
    1.0
    """
    if not looks:
        return 1.0
    counts = _sure_counts(looks)
    chosen = found.sizes[size].height
    smaller = [i for i, s in enumerate(found.sizes)
               if s.height <= PLACE_RATIO * chosen and counts[i] > 0
               and counts[i] >= PLACE_COUNT * counts[size]]
    if not smaller:
        return 1.0
    best = max(smaller, key=lambda i: (counts[i], found.sizes[i].height))
    return found.sizes[best].height / chosen


def _sure_counts(looks: list[np.ndarray]) -> list[int]:
    """Per look (probabilities of the outline corners cut under one card-size hypothesis),
    how many of them read a card code at :data:`SIZE_SURE` or more."""
    return [int((p[:, :52].max(1, initial=0.0) >= SIZE_SURE).sum()) for p in looks]


def best_window(looks: np.ndarray, codes: int) -> np.ndarray:
    """Per candidate, the mean of three neighbouring looks (``looks``: ``(scales, N, C)``,
    scales increasing) whose highest probability among the first ``codes`` classes is the
    largest: ``(N, C)``.

    >>> import numpy as np
    >>> looks = np.array([[0.2, 0.8], [0.1, 0.9], [0.6, 0.4], [0.9, 0.1]])  # 4 scales, 1 crop
    >>> best_window(looks[:, None, :], codes=2).round(3).tolist()
    [[0.3, 0.7]]
    """
    means = (looks[:-2] + looks[1:-1] + looks[2:]) / 3.0
    pick = means[:, :, :codes].max(2).argmax(0)
    return means[pick, np.arange(looks.shape[1])]


_DEFAULT: Recognizer | None = None


def recognize_image(image: str | Path | np.ndarray, recognizer: Recognizer | None = None) -> dict:
    """Recognise one image (a path or a BGR array) with a shared default :class:`Recognizer`."""
    global _DEFAULT
    if recognizer is None:
        if _DEFAULT is None:
            _DEFAULT = Recognizer()
        recognizer = _DEFAULT
    img = load_image(image) if not isinstance(image, np.ndarray) else image
    return recognizer.recognize(img)
