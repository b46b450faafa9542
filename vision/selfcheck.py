"""Does this install read frames as the one whose figures the model card gives?

    monster-match vision-check [--json] [--reference FILE] [--write-reference]

The recogniser's output depends on more than the model files: onnxruntime's integer kernels
differ by CPU (saturating on x86 CPUs without VNNI until the twenty-third session), and
OpenCV 4.11 reads frames otherwise than OpenCV 5 (``models/cards_v5.md``). This check reads
the committed frames of ``sample_images/`` with the bundled models and compares every
result with ``sample_images/reference.jsonl``, written on the install the figures were
measured on: the same cards, face-down cards and refusals, each card's code, confidence
(within :data:`CONFIDENCE_SLACK`) and corners (within :data:`PIXEL_SLACK`). It reports the
libraries, the CPU's int8 flags, the models' sha256 and each model's kernel check
(`vision.kernels`), then every difference.
"""

from __future__ import annotations

import hashlib
import json
import platform
from pathlib import Path

from vision.kernels import cpu_flags, cpu_model, needs_exact_kernels

#: Reported confidences are rounded to 4 decimals; a last-bit difference in a float sum on
#: another CPU may move one by a few steps of that.
CONFIDENCE_SLACK = 0.002
#: Reported points are rounded to 0.1 px; a corner inferred otherwise moves by several pixels
#: (OpenCV 4.11 against 5: two cards' corners moved by up to 17 px on the samples).
PIXEL_SLACK = 2.0

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"
REFERENCE = SAMPLES / "reference.jsonl"
#: What the reference's first line names, and a reader must match before its reads are compared.
HEAD_KEYS = ("model", "model_sha256", "gate", "gate_sha256", "threshold", "rank_colour_threshold",
             "extra_bar", "threshold_by_width")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def environment() -> dict:
    """Versions of what reads the frames, and the CPU's int8 instruction flags."""
    import cv2
    import numpy as np
    import onnxruntime as ort

    flags = cpu_flags()
    return {"cpu": cpu_model(), "python": platform.python_version(),
            "machine": platform.machine(),
            "numpy": np.__version__, "opencv": cv2.__version__,
            "onnxruntime": ort.__version__,
            "cpu_int8_flags": sorted(f for f in flags
                                     if "vnni" in f or f in ("avx2", "amx_int8", "asimddp")),
            "exact_kernels_asked": needs_exact_kernels(flags)}


def describe(env: dict) -> str:
    """:func:`environment` in one line.

    >>> describe({"cpu": "AMD EPYC", "machine": "x86_64", "python": "3.11.7",
    ...           "numpy": "2.4.6", "opencv": "5.0.0", "onnxruntime": "1.32.0",
    ...           "cpu_int8_flags": ["avx2"], "exact_kernels_asked": True}).split("; ")
    ... # doctest: +NORMALIZE_WHITESPACE
    ['AMD EPYC (x86_64)', 'int8 flags avx2, exact kernels asked for: yes',
     'python 3.11.7, numpy 2.4.6, opencv 5.0.0, onnxruntime 1.32.0']
    """
    return (f"{env['cpu']} ({env['machine']}); int8 flags "
            f"{' '.join(env['cpu_int8_flags']) or 'none'}, exact kernels asked for: "
            f"{'yes' if env['exact_kernels_asked'] else 'no'}; python {env['python']}, numpy "
            f"{env['numpy']}, opencv {env['opencv']}, onnxruntime {env['onnxruntime']}")


def read_samples(rec, samples: Path = SAMPLES) -> list[dict]:  # noqa: ANN001
    """``rec``'s result for every labelled frame of ``samples`` (sorted by name), without the
    elapsed time, with the frame's file name."""
    from vision.evaluate import labelled_images
    from vision.recognize import load_image

    out = []
    for image, _ in labelled_images(samples):
        result = rec.recognize(load_image(image))
        result.pop("elapsed_ms", None)
        out.append({"image": image.name, **result})
    return out


def _close(a: list, b: list, slack: float) -> bool:
    return len(a) == len(b) and all(
        _close(x, y, slack) if isinstance(x, list) else abs(x - y) <= slack
        for x, y in zip(a, b, strict=True))


def _card_key(card: dict) -> tuple:
    return card["code"], card["center"]


def _rank_colour(refusal: dict) -> str:
    return f"{refusal['rank']} {refusal['color']}" if "rank" in refusal else "-"


def compare(want: list[dict], got: list[dict]) -> list[str]:
    """Every difference between two lists of frame results, one line each (empty: the same).

    >>> card = {"code": "QH", "confidence": 0.9991, "center": [10.0, 20.0],
    ...         "corners": [[0, 0], [1, 0], [1, 1], [0, 1]]}
    >>> frame = {"image": "a.jpg", "cards": [card], "face_down": [], "unreadable": []}
    >>> compare([frame], [frame])
    []
    >>> moved = {**frame, "cards": [{**card, "confidence": 0.9981}]}
    >>> compare([frame], [moved])
    []
    >>> other = {**frame, "cards": [{**card, "code": "QD"}]}
    >>> compare([frame], [other])
    ['a.jpg: cards QH here QD']
    >>> two = {**frame, "cards": [card, {**card, "code": "2C", "center": [50.0, 5.0]}]}
    >>> compare([two], [{**two, "cards": two["cards"][::-1]}])
    []
    >>> named = {**frame, "unreadable": [{"center": [5.0, 5.0], "rank": "Q", "color": "red"}]}
    >>> compare([named], [{**named, "unreadable": [{"center": [5.0, 5.0]}]}])
    ["a.jpg: ranks and colours ['Q red'] here ['-']"]
    """
    diffs: list[str] = []
    got_by_name = {g["image"]: g for g in got}
    for w in want:
        name = w["image"]
        g = got_by_name.pop(name, None)
        if g is None:
            diffs.append(f"{name}: not read")
            continue
        # the order of a frame's cards means nothing: by code, then place
        cards_w = sorted(w["cards"], key=_card_key)
        cards_g = sorted(g["cards"], key=_card_key)
        codes_w = [c["code"] for c in cards_w]
        codes_g = [c["code"] for c in cards_g]
        if codes_w != codes_g:
            diffs.append(f"{name}: cards {' '.join(codes_w) or '-'} here "
                         f"{' '.join(codes_g) or '-'}")
        else:
            for cw, cg in zip(cards_w, cards_g, strict=True):
                if abs(cw["confidence"] - cg["confidence"]) > CONFIDENCE_SLACK:
                    diffs.append(f"{name}: {cw['code']} confidence {cw['confidence']} here "
                                 f"{cg['confidence']}")
                if not _close(cw["corners"], cg["corners"], PIXEL_SLACK):
                    diffs.append(f"{name}: {cw['code']} corners {cw['corners']} here "
                                 f"{cg['corners']}")
        for key in ("face_down", "unreadable"):
            pw = [m["center"] for m in w[key]]
            pg = [m["center"] for m in g[key]]
            if not _close(pw, pg, PIXEL_SLACK):
                diffs.append(f"{name}: {key.replace('_', ' ')} at {pw} here {pg}")
        # the ranks and colours the refusals name (vision.rankcolour), in order
        named_w = [_rank_colour(m) for m in w["unreadable"]]
        named_g = [_rank_colour(m) for m in g["unreadable"]]
        if len(named_w) == len(named_g) and named_w != named_g:  # else said above
            diffs.append(f"{name}: ranks and colours {named_w} here {named_g}")
    diffs += [f"{name}: not in the reference" for name in got_by_name]
    return diffs


def identity(rec) -> dict:  # noqa: ANN001
    """What reads the frames: the models' files and sha256, the thresholds (the calibrated
    one ``None`` where the reader reads calibrated tables at the frame's own sizes), the
    extra walks' bar (:data:`vision.recognize.EXTRA_BAR`; ``None``: without them), the
    libraries, the CPU's int8 flags, each model's kernel check (`vision.kernels`, in
    quantisation steps) and whether the reader's deeper convolutions run on onnxruntime's
    QGEMM path here. The table records it when its camera starts, so that the record says
    what read its cards.
    """
    from vision.kernels import check_session
    from vision.recognize import on_qgemm

    kernels = {"model": check_session(rec.session, rec.model_path)}
    if rec.gate_session is not None:
        kernels["gate"] = check_session(rec.gate_session, rec.gate_path)
    return {"model": rec.model_path.name, "model_sha256": sha256(rec.model_path),
            "gate": rec.gate_path.name if rec.gate_path else None,
            "gate_sha256": sha256(rec.gate_path) if rec.gate_path else None,
            "threshold": rec.threshold, "rank_colour_threshold": rec.rank_colour_threshold,
            "calibrated_threshold": rec.calibrated_threshold,
            # the extra walks' bar (None: without them); a reference written without them
            # has no such key, which reads as None
            "extra_bar": rec.extra_walk_bar(),
            # the threshold by card width (vision.widthbar; None: flat), likewise
            "threshold_by_width": (rec.width_steps.to_json() if rec.width_steps is not None
                                   else None),
            "environment": environment(), "kernel_steps": kernels,
            # the same arithmetic either way; which kernels ran (vision.kernels.gemm_pays)
            "model_on_qgemm": on_qgemm(rec.model_path)}


def write_reference(rec, path: Path = REFERENCE, samples: Path = SAMPLES) -> int:  # noqa: ANN001
    """Write ``rec``'s reads of ``samples`` to ``path``: a first line naming the models and
    the environment, then a frame a line. Returns the number of frames."""
    frames = read_samples(rec, samples)
    ident = identity(rec)
    head = {key: ident[key] for key in HEAD_KEYS}
    head["written_with"] = ident["environment"]
    path.write_text("".join(json.dumps(x) + "\n" for x in [head, *frames]))
    return len(frames)


def load_reference(path: Path = REFERENCE) -> tuple[dict, list[dict]]:
    """The reference's head and its frames."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not lines or "model_sha256" not in lines[0]:
        raise ValueError(f"{path}: not a reference written by vision.selfcheck")
    return lines[0], lines[1:]


def check(rec, reference: Path = REFERENCE, samples: Path = SAMPLES) -> dict:  # noqa: ANN001
    """The report: environment, models, kernel checks, and the differences from
    ``reference`` (``"same": True`` when there are none)."""
    head, want = load_reference(reference)
    ident = identity(rec)
    diffs = [f"{key}: reference {head.get(key)}, here {ident[key]}" for key in HEAD_KEYS
             if head.get(key) != ident[key]]
    if not diffs:  # other models read otherwise anyway: say that alone
        diffs = compare(want, read_samples(rec, samples))
    return {**ident, "reference": str(reference),
            "reference_written_with": head.get("written_with"),
            "frames": len(want), "same": not diffs, "differences": diffs}
