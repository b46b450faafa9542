"""Score recognition against a labelled directory.

Directory format: every image ``NAME.jpg`` (or ``.png``, any of
:data:`vision.imagefiles.IMAGE_SUFFIXES`) has a label file ``NAME.json`` beside it, in the
format written by :func:`vision.synth.render_table` (see :mod:`vision.synth`); a suite may
keep its frames in subdirectories (``recursive``). Only ``cards[*].code`` (a code or
``"face_down"``), ``center``, ``card_width_px`` and ``readable`` are used for the scores, and
every label is checked for them before a frame is read (:func:`read_labels`): a right read
of a card labelled ``"10H"`` would otherwise count as a misread without a word, and a card
without its width would stop the suite halfway. ``table_to_image`` (optional: the
table-to-image homography) says how far the camera is tilted at a card
(:func:`camera_tilt`, for the breakdowns of ``benchmarks/vision_misses.py``). A frame whose
image cannot be read is not scored, and is listed (``Score.unread``); the others are.

Matching: a reported card matches an unmatched labelled card of the same code whose centre is
within :data:`CODE_RADIUS` (0.6) card widths if there is one (the read is right, the position
rough), otherwise the nearest labelled card within :data:`MATCH_RADIUS` (0.3) card widths (a
different code there is a misread); face-down cards match within 0.5 card widths. The share of
right reads whose centre is within 0.3 card widths is reported as ``centre_within_0.3``.
Metrics:

* **recall**: readable face-up cards reported with the right code / readable face-up cards;
* **misread rate**: reported cards whose code is wrong for the card they sit on / reported cards;
* **false positives**: reported cards that sit on no labelled card, or on one already matched,
  or on a face-down card;
* face-down recall, unreadable reports, and milliseconds per frame (median);
* where refusals carry a rank and colour (:mod:`vision.rankcolour`), matched as the cards are
  (by rank and colour, to labelled cards no reported card matched): **rank-and-colour
  recall**, readable face-up cards reported by their code or by their rank and colour /
  readable face-up cards, the **rank-and-colour misread rate** (such refusals on a face-up
  card of another rank or colour / such refusals) and their false positives.

A *burst* (several frames of one still scene, :mod:`vision.burst`) is ``NAME.jpg`` with its
label, followed by ``NAME.b1.jpg``, ``NAME.b2.jpg``, ...; scored as bursts, each scene's
frames are read and fused into one result, and its time is the whole burst's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from vision.calibration import homography_jacobian
from vision.codes import CARD_CODES, FACE_DOWN
from vision.imagefiles import files_in

MATCH_RADIUS = 0.3
CODE_RADIUS = 0.6
BACK_RADIUS = 0.5


@dataclass
class Score:
    """Counts over a set of frames; the rates are properties."""

    frames: int = 0
    readable: int = 0
    correct: int = 0
    reported: int = 0
    misread: int = 0
    false_positive: int = 0
    face_down: int = 0
    face_down_found: int = 0
    face_down_false: int = 0
    unreadable_reports: int = 0
    centre_close: int = 0
    #: Refusals with a rank and colour: all, those right on a readable card no reported card
    #: matched, wrong (another rank or colour), and on no card (or a face-down or taken one).
    rc_reported: int = 0
    rc_correct: int = 0
    rc_misread: int = 0
    rc_false_positive: int = 0
    elapsed_ms: list[float] = field(default_factory=list)
    confusions: list[str] = field(default_factory=list)
    #: Frames whose image could not be read, each as its error (the file named): not scored.
    unread: list[str] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.correct / self.readable if self.readable else 0.0

    @property
    def misread_rate(self) -> float:
        return self.misread / self.reported if self.reported else 0.0

    @property
    def rank_colour_recall(self) -> float:
        return (self.correct + self.rc_correct) / self.readable if self.readable else 0.0

    @property
    def rc_misread_rate(self) -> float:
        return self.rc_misread / self.rc_reported if self.rc_reported else 0.0

    @property
    def ms_median(self) -> float:
        return float(np.median(self.elapsed_ms)) if self.elapsed_ms else 0.0

    def add(self, other: Score) -> None:
        for k, v in asdict(other).items():
            if isinstance(v, list):
                getattr(self, k).extend(v)
            else:
                setattr(self, k, getattr(self, k) + v)

    def summary(self) -> dict:
        return {
            "frames": self.frames, "readable_cards": self.readable, "correct": self.correct,
            "recall": round(self.recall, 5), "reported": self.reported, "misread": self.misread,
            "misread_rate": round(self.misread_rate, 5), "false_positives": self.false_positive,
            "face_down": self.face_down, "face_down_found": self.face_down_found,
            "face_down_false": self.face_down_false,
            "unreadable_reports": self.unreadable_reports,
            "centre_within_0.3": round(self.centre_close / self.correct, 4) if self.correct
            else 0.0,
            "ms_per_frame_median": round(self.ms_median, 1),
            "rank_colour_recall": round(self.rank_colour_recall, 5),
            "rc_reported": self.rc_reported, "rc_correct": self.rc_correct,
            "rc_misread": self.rc_misread, "rc_false_positives": self.rc_false_positive,
            "unread_frames": len(self.unread),
        }

    def report(self) -> str:
        s = self.summary()
        return (f"frames {s['frames']}  readable face-up cards {s['readable_cards']}\n"
                f"recall {100 * self.recall:.2f}% ({self.correct}/{self.readable})\n"
                f"misread rate {100 * self.misread_rate:.3f}% ({self.misread}/{self.reported})\n"
                f"false positives {self.false_positive}\n"
                f"face down found {self.face_down_found}/{self.face_down}"
                f" (false {self.face_down_false})  unreadable reports {self.unreadable_reports}\n"
                f"centre within 0.3 card widths for {100 * s['centre_within_0.3']:.1f}% of right"
                f" reads\n"
                + (f"rank and colour: recall {100 * self.rank_colour_recall:.2f}% "
                   f"({self.correct + self.rc_correct}/{self.readable}: {self.rc_correct} more "
                   f"by rank and colour)  misread rate {100 * self.rc_misread_rate:.3f}% "
                   f"({self.rc_misread}/{self.rc_reported})  false positives "
                   f"{self.rc_false_positive}\n" if self.rc_reported else "")
                + f"ms/frame median {self.ms_median:.1f}"
                + (f"\nframes not read {len(self.unread)} (not scored)" if self.unread else ""))

    def line(self) -> str:
        """The main counts on one line (a row of a per-design table)."""
        return (f"recall {100 * self.recall:.2f}% ({self.correct}/{self.readable})  "
                f"misreads {self.misread}/{self.reported}  false positives "
                f"{self.false_positive}  face down {self.face_down_found}/{self.face_down} "
                f"(false {self.face_down_false})  frames {self.frames}"
                + (f" ({len(self.unread)} not read)" if self.unread else ""))


def match_reports(cards: list[dict], truth: list[dict]) -> list[tuple[int | None, float]]:
    """Per reported card (in order), the index of the labelled card it is matched to (module
    docstring; ``None`` for a false positive) and its distance from it in card widths.

    >>> truth = [{"code": "6S", "center": [0, 0], "card_width_px": 50.0},
    ...          {"code": "KD", "center": [40, 0], "card_width_px": 50.0}]
    >>> reports = [{"code": "KD", "center": [35, 0]}, {"code": "TS", "center": [5, 0]},
    ...            {"code": "QH", "center": [400, 0]}, {"code": "6S", "center": [0, 5]}]
    >>> [(i, round(d, 2)) for i, d in match_reports(reports, truth)]
    [(1, 0.1), (0, 0.1), (None, 7.2), (None, 0.1)]

    (The first right, the second a misread, the third on no card, the fourth on a card already
    matched.)
    """
    return _match([c["code"] for c in cards], [c["center"] for c in cards], truth,
                  [t["code"] for t in truth], set())


def _match(keys: list, centres: list, truth: list[dict], truth_keys: list,
           used: set[int]) -> list[tuple[int | None, float]]:
    """:func:`match_reports` of reports by ``keys`` (codes, or ranks and colours) at
    ``centres`` against ``truth`` by ``truth_keys``; ``used``: labelled cards already taken
    (updated)."""
    out: list[tuple[int | None, float]] = []
    for key, centre in zip(keys, centres, strict=True):
        p = np.array(centre, float)
        dist = [np.linalg.norm(p - np.array(t["center"])) / t["card_width_px"] for t in truth]
        same = [i for i, t in enumerate(truth_keys) if t == key and i not in used
                and dist[i] < CODE_RADIUS]
        near = [i for i in range(len(truth)) if dist[i] < MATCH_RADIUS]
        best = min(same, key=lambda i: dist[i]) if same else (
            min(near, key=lambda i: dist[i]) if near else None)
        if best is None or best in used or truth[best]["code"] == "face_down":
            out.append((None, float(min(dist, default=np.inf))))
            continue
        used.add(best)
        out.append((best, float(dist[best])))
    return out


def score_frame(result: dict, labels: dict) -> Score:
    """Score one recognition result against its labels."""
    sc = Score(frames=1, elapsed_ms=[float(result.get("elapsed_ms", 0.0))])
    truth = labels["cards"]
    up = [c for c in truth if c["code"] != "face_down"]
    down = [c for c in truth if c["code"] == "face_down"]
    sc.readable = sum(1 for c in up if c.get("readable", True))
    sc.face_down = len(down)
    matches = match_reports(result["cards"], truth)
    for card, (best, dist) in zip(result["cards"], matches, strict=True):
        sc.reported += 1
        if best is None:
            sc.false_positive += 1
            continue
        t = truth[best]
        if t["code"] != card["code"]:
            sc.misread += 1
            sc.confusions.append(f"{t['code']}->{card['code']}")
        elif t.get("readable", True):
            sc.correct += 1
            sc.centre_close += int(dist < MATCH_RADIUS)
    taken: set[int] = set()
    for fd in result["face_down"]:
        p = np.array(fd["center"], float)
        hit = None
        for i, t in enumerate(down):
            if i not in taken and (np.linalg.norm(p - np.array(t["center"]))
                                   < BACK_RADIUS * t["card_width_px"]):
                hit = i
                break
        if hit is None:
            sc.face_down_false += 1
        else:
            taken.add(hit)
    sc.face_down_found = len(taken)
    sc.unreadable_reports = len(result["unreadable"])
    _score_rank_colour(sc, result, truth, {best for best, _ in matches if best is not None})
    return sc


def frame_report(result: dict, labels: dict) -> dict:
    """What one frame's result got right and wrong, card by card, matched as
    :func:`score_frame` matches (``vision-eval --frames-out``: a lab looks up the frames a
    suite's misreads and misses came from): ``missed_cards``, the readable face-up cards not
    reported with their code (a misread card among them); ``misread_cards``, the reported
    cards whose code is another than the card's they sit on (``code`` the card's, ``read``
    the report's); ``false_positive_cards``, the reported cards on no card (or on one
    already matched, or on a face-down card).

    >>> truth = [{"code": "6S", "center": [0, 0], "card_width_px": 50.0},
    ...          {"code": "KD", "center": [100, 0], "card_width_px": 50.0},
    ...          {"code": "2C", "center": [200, 0], "card_width_px": 50.0}]
    >>> result = {"cards": [{"code": "6S", "center": [1, 0], "confidence": 0.999},
    ...                     {"code": "KH", "center": [101, 0], "confidence": 0.998},
    ...                     {"code": "QH", "center": [900, 0], "confidence": 0.999}],
    ...           "face_down": [], "unreadable": []}
    >>> r = frame_report(result, {"cards": truth})
    >>> [m["code"] for m in r["missed_cards"]], r["misread_cards"][0]["read"]
    (['KD', '2C'], 'KH')
    >>> r["false_positive_cards"]
    [{'read': 'QH', 'confidence': 0.999, 'center': [900, 0]}]
    """
    truth = labels["cards"]
    right: set[int] = set()
    misread, false = [], []
    for card, (best, _) in zip(result["cards"], match_reports(result["cards"], truth),
                               strict=True):
        if best is None:
            false.append({"read": card["code"], "confidence": card["confidence"],
                          "center": card["center"]})
        elif truth[best]["code"] != card["code"]:
            misread.append({"code": truth[best]["code"], "read": card["code"],
                            "confidence": card["confidence"], "center": card["center"]})
        else:
            right.add(best)
    missed = [{"code": t["code"], "center": t["center"]} for i, t in enumerate(truth)
              if t["code"] != "face_down" and t.get("readable", True) and i not in right]
    return {"missed_cards": missed, "misread_cards": misread, "false_positive_cards": false}


def _score_rank_colour(sc: Score, result: dict, truth: list[dict], taken: set[int]) -> None:
    """Add the refusals that carry a rank and colour to ``sc`` (module docstring); ``taken``:
    the labelled cards the reported cards matched.

    >>> truth = [{"code": "QH", "center": [0, 0], "card_width_px": 50.0},
    ...          {"code": "7C", "center": [100, 0], "card_width_px": 50.0}]
    >>> result = {"cards": [], "face_down": [], "unreadable": [
    ...     {"center": [2, 0], "rank": "Q", "color": "red"},
    ...     {"center": [100, 3], "rank": "7", "color": "red"}, {"center": [400, 0]}]}
    >>> s = score_frame(result, {"cards": truth})
    >>> s.rc_reported, s.rc_correct, s.rc_misread, s.rc_false_positive, s.rank_colour_recall
    (2, 1, 1, 0, 0.5)
    """
    from vision.rankcolour import of_code

    entries = [u for u in result["unreadable"] if "rank" in u]
    if not entries:
        return
    keys = [of_code(t["code"]) if t["code"] != "face_down" else None for t in truth]
    for entry, (best, _) in zip(entries, _match([(u["rank"], u["color"]) for u in entries],
                                               [u["center"] for u in entries], truth, keys,
                                               taken), strict=True):
        sc.rc_reported += 1
        if best is None:
            sc.rc_false_positive += 1
        elif keys[best] != (entry["rank"], entry["color"]):
            sc.rc_misread += 1
        elif truth[best].get("readable", True):
            sc.rc_correct += 1


def camera_tilt(table_to_image: list, point: list) -> float:
    """The camera's tilt (degrees) as seen at image ``point``, from the labels' table-to-image
    homography: the table's foreshortening there, ``arccos`` of the ratio of its two local
    scales (the singular values of the map's Jacobian; a plane seen at angle t is shortened by
    cos t across the tilt and not along it). At the image centre it is the camera's tilt;
    away from it the line of sight slants more or less, as the card appears.

    >>> straight = [[2.0, 0.0, 10.0], [0.0, 2.0, 5.0], [0.0, 0.0, 1.0]]
    >>> round(camera_tilt(straight, [40.0, 30.0]), 1)
    0.0
    >>> tilted = [[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]   # half as tall
    >>> round(camera_tilt(tilted, [40.0, 30.0]), 1)
    60.0
    """
    h = np.asarray(table_to_image, float)
    table = np.linalg.solve(h, np.array([point[0], point[1], 1.0]))
    s = np.linalg.svd(homography_jacobian(h, table[:2] / table[2]), compute_uv=False)
    return float(np.degrees(np.arccos(np.clip(s[1] / s[0], 0.0, 1.0))))


def label_tilt(labels: dict, point: list) -> float | None:
    """:func:`camera_tilt` at ``point`` where the labels carry a usable homography (a lab's
    own labels may have none, or a singular one), else None."""
    h = labels.get("table_to_image")
    if h is None:
        return None
    try:
        tilt = camera_tilt(h, point)
    except (np.linalg.LinAlgError, ValueError):
        return None
    return tilt if np.isfinite(tilt) else None


def labelled_images(directory: Path, recursive: bool = False) -> list[tuple[Path, Path]]:
    """(image, label) pairs in ``directory`` (with ``recursive``, in its subdirectories too),
    sorted by path: the images (:func:`vision.imagefiles.files_in`) with ``NAME.json``
    beside them."""
    return [(img, img.with_suffix(".json")) for img in files_in(Path(directory),
                                                                  recursive=recursive)
            if img.with_suffix(".json").is_file()]


class LabelError(ValueError):
    """A label file that is not JSON or not the labels' format; the message names the file,
    the card, and what is wrong."""


def read_labels(path: Path) -> dict:
    """The labels in ``path``, checked for what the scores use (module docstring).

    >>> import tempfile, textwrap
    >>> path = Path(tempfile.mkdtemp()) / "frame.json"
    >>> def error(path):
    ...     try:
    ...         read_labels(path)
    ...     except LabelError as exc:
    ...         return textwrap.fill(str(exc).replace(str(path), "FILE"), 88)
    >>> card = {"code": "QH", "center": [100, 80], "card_width_px": 55.0}
    >>> _ = path.write_text(json.dumps({"cards": [card, {**card, "code": "10H"}]}))
    >>> print(error(path))
    FILE: card 2: "10H" is not a card code (a rank of A23456789TJQK and a suit of SHDC, a
    ten as T: "TH"), nor "face_down"
    >>> _ = path.write_text(json.dumps({"cards": [{**card, "card_width_px": 0}]}))
    >>> print(error(path))
    FILE: card 1: "card_width_px" must be a number above 0, not 0
    >>> _ = path.write_text('{"cards": [')
    >>> print(error(path))
    FILE: not JSON (Expecting value: line 1 column 12 (char 11))
    >>> _ = path.write_text(json.dumps({"cards": [card]}))
    >>> read_labels(path)["cards"][0]["code"]
    'QH'
    """
    try:
        labels = json.loads(path.read_text())
    except OSError as exc:
        raise LabelError(f"{path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LabelError(f"{path}: not JSON ({exc})") from None
    if not isinstance(labels, dict) or not isinstance(labels.get("cards"), list):
        raise LabelError(f'{path}: not labels: an object with a list of "cards" is expected')
    if not isinstance(labels.get("design", ""), str):
        raise LabelError(f'{path}: "design" must be a string')
    for k, card in enumerate(labels["cards"], 1):
        problem = _card_problem(card)
        if problem:
            raise LabelError(f"{path}: card {k}: {problem}")
    return labels


def _card_problem(card: object) -> str | None:
    """What is wrong with one labelled card, or None."""
    if not isinstance(card, dict):
        return "not an object"
    code = card.get("code")
    if code != FACE_DOWN and code not in CARD_CODES:
        hint = ""
        if isinstance(code, str) and code.upper().replace("10", "T", 1) in CARD_CODES:
            hint = f': "{code.upper().replace("10", "T", 1)}"'
        return (f"{json.dumps(code)} is not a card code (a rank of A23456789TJQK and a suit of "
                f'SHDC, a ten as T{hint}), nor "{FACE_DOWN}"')
    centre = card.get("center")
    if not (isinstance(centre, list) and len(centre) == 2 and all(_finite(v) for v in centre)):
        return f'"center" must be [x, y] in image pixels, not {json.dumps(centre)}'
    width = card.get("card_width_px")
    if not (_finite(width) and width > 0):
        return f'"card_width_px" must be a number above 0, not {json.dumps(width)}'
    if not isinstance(card.get("readable", True), bool):
        return f'"readable" must be true or false, not {json.dumps(card["readable"])}'
    return None


def _finite(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and bool(np.isfinite(v))


def burst_frames(image: Path) -> list[Path]:
    """``image`` and the later frames of its burst (``NAME.b1.jpg``, ``NAME.b2.jpg``, ... as
    long as they go on), in order."""
    frames = [image]
    while (nxt := image.with_name(f"{image.stem}.b{len(frames)}{image.suffix}")).exists():
        frames.append(nxt)
    return frames


def score_by_design(directory: str | Path, recognizer=None,  # noqa: ANN001
                    progress: Callable[[Iterable, int], Iterable] | None = None,
                    burst: bool = False, calibrated: bool = False, workers: int = 1,
                    on_frame: Callable[[Path, dict, Score, dict], None] | None = None,
                    recursive: bool = False) -> dict[str, Score]:
    """Recognise every labelled image in ``directory`` (with ``recursive``, in its
    subdirectories too); the scores per card design (the label's ``"design"``, ``""`` where a
    label names none), in name order. A lab's suite of several decks sees which deck the
    misses and misreads come from. Every label is read and checked first
    (:func:`read_labels`; :class:`LabelError` before any frame is read). A frame whose image
    cannot be read counts in its design's ``unread``, and the rest are read. With ``burst``,
    each labelled image is read with the rest of its burst (module docstring) and the reads
    fused (:func:`vision.burst.fuse`, at the recogniser's burst threshold and agreement,
    whatever the burst's length); a directory without bursts is refused. With
    ``calibrated``, each frame is read with its table's card sizes
    (:func:`vision.tablesize.from_labels`: the labels' homography and card millimetres;
    labels without a homography are refused). ``workers``: frames read by that many
    processes (:mod:`vision.parallel`), the same scores; ``progress(reads, frames)`` wraps
    the stream of frames read (a progress bar); ``on_frame(image, labels, score, result)`` is
    told of each frame as it is scored (``result`` ``{"error": ...}`` for one not read)."""
    from vision.parallel import read_in_order
    from vision.recognize import Recognizer
    directory = Path(directory)
    pairs = labelled_images(directory, recursive)
    if not pairs:
        below = [] if recursive else labelled_images(directory, recursive=True)
        raise FileNotFoundError(
            f"no labelled images (NAME.jpg + NAME.json) in {directory}"
            + (" or its subdirectories" if recursive else "")
            + (f"; its subdirectories hold {len(below)}: --recursive scores them"
               if below else ""))
    if burst and not any(len(burst_frames(img)) > 1 for img, _ in pairs):
        raise FileNotFoundError(f"no bursts (NAME.jpg followed by NAME.b1.jpg) in {directory}")
    labels = [read_labels(lab) for _, lab in pairs]
    # each frame's table made once, here, so that a label that cannot give one is refused
    # before any frame is read
    jobs = [(img, burst, _label_table(lab, one) if calibrated else None)
            for (img, lab), one in zip(pairs, labels, strict=True)]
    reads = read_in_order(_read_labelled, jobs, recognizer or Recognizer(), workers)
    scores: dict[str, Score] = {}
    try:
        for (img, _, _), one, result in zip(
                jobs, labels, progress(reads, len(jobs)) if progress else reads, strict=True):
            score = Score(unread=[result["error"]]) if "error" in result else \
                score_frame(result, one)
            scores.setdefault(str(one.get("design", "")), Score()).add(score)
            if on_frame is not None:
                on_frame(img, one, score, result)
    finally:
        reads.close()
    return dict(sorted(scores.items()))


def _label_table(path: Path, labels: dict):  # noqa: ANN202 - vision.tablesize.TableSize
    """The calibrated table of the frame ``labels`` (from ``path``) describe
    (:func:`vision.tablesize.from_labels`), or :class:`LabelError` saying why it has none."""
    from vision.tablesize import from_labels

    try:
        return from_labels(labels)
    except (KeyError, TypeError, IndexError):
        problem = "its cards' \"corners\" are not four [x, y] points each"
    except ValueError as exc:  # (numpy's LinAlgError for a singular homography too)
        problem = str(exc)
    raise LabelError(f"{path}: {problem}: it cannot be read as a calibrated table's frame")


def _read_labelled(rec, job: tuple[Path, bool, object]) -> dict:  # noqa: ANN001
    """One labelled frame (or burst) read as :func:`score_by_design` says, at its table's
    card sizes where it has one: the recogniser's result, or ``{"error": ...}`` for an
    image that cannot be read."""
    from vision.burst import fuse
    from vision.recognize import ImageError, load_image

    img_path, burst, table = job
    try:
        if burst:
            return fuse([rec.recognize(load_image(f), table) for f in burst_frames(img_path)],
                        rec.burst_threshold, rec.burst_min_frames)
        return rec.recognize(load_image(img_path), table)
    except ImageError as exc:
        return {"error": str(exc)}


def total(scores: Iterable[Score]) -> Score:
    """The scores summed.

    >>> total([Score(frames=1, readable=3, correct=2), Score(frames=2, readable=4)]).recall
    0.2857142857142857
    """
    out = Score()
    for s in scores:
        out.add(s)
    return out


def evaluate_dir(directory: str | Path, recognizer=None,  # noqa: ANN001
                 progress: Callable[[Iterable, int], Iterable] | None = None,
                 burst: bool = False, calibrated: bool = False, workers: int = 1,
                 recursive: bool = False) -> Score:
    """Recognise every labelled image (or burst) in ``directory`` and score the lot."""
    return total(score_by_design(directory, recognizer, progress, burst, calibrated,
                                 workers, recursive=recursive).values())
