"""Train the index-corner classifier on synthetic scenes and export it to ONNX.

Reproducible (seeded) and CPU-only; data first (each work directory holds its chunks and
one calibration chunk), then training on several work directories::

    python -m vision.train --work W1 --scenes 1000 --chunks 4 --seed 5 --data-only
    python -m vision.train --work W2 --scenes 2400 --chunks 8 --seed 6 --train-from W1 \\
        --epochs 8 --out models/cards_v1.onnx

(the exact commands of the committed model are in its model card).

Training data are the crops the runtime pipeline itself proposes (:mod:`vision.proposals`) on
rendered scenes of the *training* designs only, labelled from the scene geometry: a crop whose
frame sits on a card's index corner (within 0.12 card widths, axes within ~25 degrees) and whose
index is at least 85 % visible gets the card's code; on a face-down card's corner,
``face_down``; anything else ``reject``. Frames near an index that is 50-85 % visible, or 0.12-0.2
card widths off, are left out as ambiguous. Two more frames per index corner are taken on the
true corner with the proposals' typical errors (position, size +-20 %, angle), so that every
card contributes positives. Half the reject crops are dropped. Needs ``torch`` and ``onnx``
(the ``train`` extra) and ``rsvg-convert`` for the aisleriot sheets.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.codes import CLASS_INDEX, CLASSES, FACE_DOWN_INDEX, REJECT_INDEX
from vision.conditions import changed, random_condition
from vision.crops import CROP_H, CROP_W, V1, extract_crops
from vision.designs import LEGACY_TRAIN_AISLERIOT, TRAIN_AISLERIOT
from vision.indexsuit import suit_span
from vision.procedural import (
    EXTRA_TTF_FAMILIES,
    HELD_IN_EXTRA_FAMILIES,
    MORE_TTF_FAMILIES,
    TRAIN_FAMILIES,
    TTF_FAMILIES,
)
from vision.proposals import IndexFrame, propose
from vision.settings import applied, split_reader
from vision.synth import random_deal, render_table

#: A frame labelled with a card code is *illegible* (:func:`label_frames` with
#: ``legibility``) when its index may not show the suit: less of the card's index region
#: visible than this (a later card may cover the suit under the rank) ...
LEGIBLE_VISIBLE = 0.99
#: ... a frame smaller than this share of the card (its crop may cut the suit off) ...
LEGIBLE_SCALE = 0.9
#: ... or the scene blurred by more than this share of the card width (Gaussian sigma, or a
#: third of the motion-blur length): 1.25 px on a 50 px card, where the suit is 5-8 px.
LEGIBLE_BLUR = 0.025
#: The *suit* rule (``legibility="suit"``, twenty-first session) instead asks of each card
#: code crop whether the suit symbol under its rank can show, from where the design prints
#: that symbol (:mod:`vision.indexsuit`): illegible when the symbol is under this many image
#: pixels tall (a heart and a diamond of 4 px differ by a pixel or two) ...
SUIT_MIN_PX = 5.0
#: ... or when the scene's blur (:func:`scene_blur_px`) exceeds this share of the symbol's
#: height (and as :func:`suit_illegible` says).
SUIT_BLUR_SHARE = 0.25
#: The rules :func:`label_frames` knows.
LEGIBILITY_RULES = ("scene", "suit")


def scene_blur_px(labels: dict) -> float:
    """The blur of a rendered scene in pixels (0 for a clean one), from its labels."""
    applied = labels.get("photometric", {})
    return max(float(applied.get("gaussian_blur", 0.0)),
               float(applied.get("motion_blur_px", 0)) / 3.0)


def suit_illegible(span: tuple[float, float], card_w: float, frame_w: float,
                   visible: float, blur: float) -> bool:
    """The suit rule (:data:`SUIT_MIN_PX`): whether a crop of frame width ``frame_w`` on a
    card ``card_w`` pixels wide whose design prints its index suit at ``span`` (top,
    bottom in card widths; NaN when unknown: illegible), ``visible`` of its index region
    showing, in a scene blurred by ``blur`` pixels, may not show the suit: the symbol is
    under :data:`SUIT_MIN_PX` tall, blurred by more than :data:`SUIT_BLUR_SHARE` of its
    height, its middle below the crop's reach (:data:`vision.crops.V1` of the frame width),
    or less of the index region visible than :data:`LEGIBLE_VISIBLE` (as the scene rule).

    >>> suit_illegible((0.25, 0.36), 60.0, 60.0, 1.0, 0.0)   # 6.6 px, sharp
    False
    >>> suit_illegible((0.25, 0.33), 50.0, 50.0, 1.0, 0.0)   # 4 px
    True
    >>> suit_illegible((0.25, 0.36), 60.0, 60.0, 1.0, 2.0)   # blurred by 2 px
    True
    >>> suit_illegible((0.25, 0.36), 60.0, 36.0, 1.0, 0.0)   # the crop stops at 0.29
    True
    """
    top, bottom = span
    if not np.isfinite(top) or not np.isfinite(bottom):
        return True
    height_px = (bottom - top) * card_w
    reach = V1 * frame_w / card_w  # how far down the card the crop reaches, card widths
    return bool(height_px < SUIT_MIN_PX or blur > SUIT_BLUR_SHARE * height_px
                or (top + bottom) / 2 > reach or visible < LEGIBLE_VISIBLE)


def label_frames(frames: list[IndexFrame], labels: dict,
                 legibility: bool | str = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Class index per frame (``-1`` = ambiguous, leave out), from scene labels; with
    ``legibility`` also, per frame, whether a card-code frame is illegible: by the scene
    rule (``True`` or ``"scene"``, :data:`LEGIBLE_VISIBLE`) or the suit rule (``"suit"``,
    :func:`suit_illegible`)."""
    rule = "scene" if legibility is True else legibility or None
    if rule is not None and rule not in LEGIBILITY_RULES:
        raise ValueError(f"unknown legibility rule {legibility!r}")
    out = np.full(len(frames), REJECT_INDEX, np.int64)
    illegible = np.zeros(len(frames), bool)
    blur = scene_blur_px(labels)
    if rule == "suit":
        span = suit_span(labels["design"])
    cards = labels["cards"]
    for i, f in enumerate(frames):
        for card in cards:
            q = np.array(card["corners"], np.float64)
            w = card["card_width_px"]
            if card["code"] == "face_down":
                d = np.min(np.linalg.norm(q - f.point, axis=1))
                inside_top = _covered(f.point + (f.x_axis + f.y_axis) * 0.1 * w, cards, card)
                if d < 0.15 * w and not inside_top:
                    out[i] = FACE_DOWN_INDEX
                continue
            for corner, (a, b, vis) in enumerate(((q[0], q[1], card["index_visible"][0]),
                                                  (q[2], q[3], card["index_visible"][1]))):
                del corner
                x_dir = (b - a) / max(np.linalg.norm(b - a), 1e-9)
                d = float(np.linalg.norm(a - f.point))
                aligned = float(np.dot(x_dir, f.x_axis)) > 0.9
                if not aligned or d > 0.2 * w:
                    continue
                if d > 0.12 * w or 0.5 <= vis < 0.85:
                    out[i] = -1
                elif vis >= 0.85:
                    out[i] = CLASS_INDEX[card["code"]]
                    illegible[i] = (
                        suit_illegible(span, w, f.width, vis, blur) if rule == "suit" else
                        vis < LEGIBLE_VISIBLE or f.width < LEGIBLE_SCALE * w
                        or blur > LEGIBLE_BLUR * w)
    return (out, illegible) if rule is not None else out


def jittered_truth_frames(labels: dict, rng: np.random.Generator,
                          per_corner: int = 2) -> list[IndexFrame]:
    """Frames on the true index corners with the position/size/angle errors of the proposals."""
    out = []
    for card in labels["cards"]:
        q = np.array(card["corners"], np.float64)
        w = card["card_width_px"]
        for a, b, c in ((q[0], q[1], q[3]), (q[2], q[3], q[1])):
            x = (b - a) / max(np.linalg.norm(b - a), 1e-9)
            y = (c - a) / max(np.linalg.norm(c - a), 1e-9)
            h = float(np.linalg.norm(c - a))
            for _ in range(per_corner):
                ang = rng.normal(0, 0.05)
                rot = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
                scale = rng.uniform(0.8, 1.2)
                p = a + rng.normal(0, 0.035, 2).clip(-0.09, 0.09) * w
                out.append(IndexFrame(p, rot @ x, rot @ y, w * scale, h * scale, False))
    return out


def _covered(p: np.ndarray, cards: list[dict], card: dict) -> bool:
    """Whether point ``p`` lies under a card dealt after ``card``."""
    import cv2

    later = cards[cards.index(card) + 1:]
    return any(cv2.pointPolygonTest(np.array(c["corners"], np.float32),
                                    (float(p[0]), float(p[1])), False) > 0 for c in later)


def training_designs(rng: np.random.Generator, ttf_share: float = 0.0,
                     legacy_designs: bool = False, extra_fonts: bool = False,
                     aisleriot: bool = True, varied_suits: float = 0.0,
                     hold_out_fonts: bool = False, more_fonts: bool = False) -> str:
    """A random training design name (aisleriot or procedural). ``ttf_share`` of the
    procedural decks use a TrueType index font (:data:`vision.procedural.TTF_FAMILIES`); at 0
    the draws are those of the data made before TrueType decks existed. ``legacy_designs``
    draws from the aisleriot list of the data made before ``tango_nuevo`` was excluded
    (:data:`vision.designs.LEGACY_TRAIN_AISLERIOT`), to remake those data exactly.
    ``extra_fonts`` adds :data:`vision.procedural.EXTRA_TTF_FAMILIES` to the TrueType decks
    (data made since 2026-11-30, eighth session). Without ``aisleriot`` (a machine that cannot
    draw them) every design is procedural. ``varied_suits`` of the procedural decks draw
    suit symbols of their own proportions (``proc:<family>:<seed>:suits``, eleventh session;
    at 0 no draw is made for it, so older data are remade exactly). ``hold_out_fonts`` draws
    the extra typefaces without :data:`vision.procedural.HELD_OUT_EXTRA_FONTS` (nineteenth
    session). ``more_fonts`` adds :data:`vision.procedural.MORE_TTF_FAMILIES` to the TrueType
    decks (twentieth session; the draws are otherwise the same, so without it older data are
    remade exactly)."""
    if aisleriot and rng.random() < 0.55:
        return str(rng.choice(LEGACY_TRAIN_AISLERIOT if legacy_designs else TRAIN_AISLERIOT))
    if ttf_share > 0 and rng.random() < ttf_share:
        extra = HELD_IN_EXTRA_FAMILIES if hold_out_fonts else EXTRA_TTF_FAMILIES
        families = (*TTF_FAMILIES, *extra) if extra_fonts else TTF_FAMILIES
        if more_fonts:
            families = (*families, *MORE_TTF_FAMILIES)
        name = f"proc:{int(rng.choice(families))}:{int(rng.integers(0, 400))}"
    else:
        name = f"proc:{int(rng.choice(TRAIN_FAMILIES))}:{int(rng.integers(0, 400))}"
    if varied_suits > 0 and rng.random() < varied_suits:
        name += ":suits"
    return name


@dataclass(frozen=True)
class DesignMix:
    """Which training designs a data set draws, and how often (:func:`training_designs`);
    ``camera_share`` of its scenes are seen through a badly set camera
    (:func:`vision.conditions.random_condition`; at 0 nothing is drawn for it, so older data
    are remade exactly).

    >>> import numpy as np
    >>> DesignMix().draw(np.random.default_rng(0)) == training_designs(np.random.default_rng(0))
    True
    >>> mix = DesignMix(varied_suits=1.0, aisleriot=False)
    >>> mix.draw(np.random.default_rng(0)).endswith(":suits")
    True
    """

    ttf_share: float = 0.0
    legacy_designs: bool = False
    extra_fonts: bool = False
    varied_suits: float = 0.0
    aisleriot: bool = True
    hold_out_fonts: bool = False
    more_fonts: bool = False
    camera_share: float = 0.0

    def draw(self, rng: np.random.Generator) -> str:
        """One scene's design name."""
        return training_designs(rng, self.ttf_share, self.legacy_designs, self.extra_fonts,
                                self.aisleriot, self.varied_suits, self.hold_out_fonts,
                                self.more_fonts)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> DesignMix:
        """The mix named by :func:`add_design_arguments`' options."""
        if args.hold_out_fonts and not args.extra_fonts:
            raise SystemExit("--hold-out-fonts holds some of --extra-fonts out: give both")
        return cls(args.ttf_share, args.legacy_designs, args.extra_fonts, args.varied_suits,
                   hold_out_fonts=args.hold_out_fonts, more_fonts=args.more_fonts,
                   camera_share=args.camera_share)


def generate(n_scenes: int, seed: int, out: Path, mix: DesignMix = DesignMix(),
             legibility: bool | str = False,
             pick: Callable[[np.random.Generator], str] | None = None,
             read_with: str | None = None) -> None:
    """Render ``n_scenes`` training scenes and save their labelled crops to ``out`` (npz:
    ``x``, ``y``, and with ``legibility`` a boolean ``illegible`` per crop and the rule that
    made it, ``legibility_rule``, see :func:`label_frames`; the scenes and crops are the same
    either way). Each scene's design
    is drawn from ``mix``, or by ``pick`` (a house deck's enrollment).

    With ``read_with`` (a reader, ``PATH[@module.NAME=VALUE...]`` as :mod:`vision.settings`
    names one) the crops are instead every place that reader's whole pipeline reads in the
    scene (:meth:`vision.recognize.Recognizer.read`: the proposals at the frame's chosen card
    size, the hand walks' places and their refined copies), labelled alike: the places a
    walk puts, which the proposals never make, taught as they are (the same scenes draw
    other crops, so such data are their own chunks)."""
    from tqdm import tqdm

    rng = np.random.default_rng(seed)
    xs, ys, ills = [], [], []
    reader, settings = None, ()
    if read_with is not None:
        # (here: training without it needs no onnxruntime session)
        from vision.recognize import Recognizer

        path, settings = split_reader(read_with)
        reader = Recognizer(path)
    with applied(settings):  # (none: nothing set)
        for _ in tqdm(range(n_scenes), desc="scenes", mininterval=30):
            design = pick(rng) if pick is not None else mix.draw(rng)
            size = (1280, 720) if rng.random() < 0.7 else (1920, 1080)
            img, labels = render_table(random_deal(rng), rng, design=design, size=size)
            if mix.camera_share > 0 and rng.random() < mix.camera_share:
                img = changed(img, random_condition(rng), rng)
            frames = (propose(img) + jittered_truth_frames(labels, rng) if reader is None
                      else [r.frame for r in reader.read(img)])
            if not frames:
                continue
            y, illegible = label_frames(frames, labels, legibility=legibility or True)
            keep = y >= 0
            rej = y == REJECT_INDEX
            keep &= ~rej | (rng.random(len(y)) < 0.5)
            if keep.any():
                crops = extract_crops(img, [f for f, k in zip(frames, keep, strict=True) if k])
                xs.append((crops * 255).astype(np.uint8))
                ys.append(y[keep])
                ills.append(illegible[keep])
    arrays = {"x": np.concatenate(xs), "y": np.concatenate(ys)}
    if legibility:
        arrays["illegible"] = np.concatenate(ills)
        arrays["legibility_rule"] = np.array("scene" if legibility is True else legibility)
    np.savez_compressed(out, **arrays)


ARCHITECTURES = ("gate", "gate_half", "reader", "reader_wide", "reader_large")

#: Precisions of a training run: ``fp32``; ``bf16``, under bfloat16 autocast with channels-last
#: tensors (the weights and their updates stay float32); ``auto``, bf16 on a GPU and fp32 on a
#: CPU. On a CPU with native bfloat16 (Intel AMX; forty-fifth session, ``models/cards_v7.md``)
#: bf16 fine-tuned ``cards_v7`` in 0.43 of fp32's time an epoch and that reader ranked as many
#: held-out crops, but of four enrollments fine-tuned both ways the bf16 one read 0.3 to 2.5
#: points fewer of its deck's fresh frames each time (1.0 on average), so a CPU asks for it by
#: name. Without native bfloat16 (no ``amx_bf16`` or ``avx512_bf16`` flag) PyTorch emulates
#: it, slower than float32.
PRECISIONS = ("auto", "fp32", "bf16")


def training_precision(precision: str, device_type: str = "cpu") -> str:
    """The arithmetic, ``"bf16"`` (bfloat16 autocast) or ``"fp32"``, of a training run asked
    for ``precision`` on ``device_type`` ("cpu", "cuda").

    >>> training_precision("auto", "cpu"), training_precision("bf16", "cpu")
    ('fp32', 'bf16')
    >>> training_precision("auto", "cuda"), training_precision("fp32", "cuda")
    ('bf16', 'fp32')
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; known: {', '.join(PRECISIONS)}")
    if precision == "auto":
        return "bf16" if device_type == "cuda" else "fp32"
    return precision


def build_model(arch: str = "gate"):  # noqa: ANN201 - torch is a training-only dependency
    """One of the two classifiers (same input, same classes).

    ``gate`` (``cards_v1``, 166k parameters, ~3.4 M multiply-adds a crop): four conv blocks
    and two dense layers; cheap enough to run on every candidate of a frame.
    ``gate_half``: the gate's layout on the crop averaged down to half its size (18 x 14
    pixels), one pooling stage fewer (129k parameters, ~0.7 M multiply-adds): a gate decides
    whether a candidate shows a card index at all, not which, and the full-size gate took a
    quarter of a 720p frame's time (12 ms for ~340 candidates).
    ``reader`` (``cards_v2``, 389k parameters, ~16 M multiply-adds): two convolutions at each
    of the two coarser scales, so that the small index glyphs (suit shapes at 5-8 px) get
    more capacity; run only on candidates the gate does not reject.
    ``reader_wide`` (``cards_v3``): the reader's layout with a third more channels and a wider
    dense layer (~29 M multiply-adds), trained on an accelerator (:mod:`vision.train_device`).
    ``reader_large``: the same layout with a quarter more channels again (~45 M multiply-adds,
    1.55 times ``reader_wide``): about what the 720p time budget's spare leaves room for
    (estimated from the reader's share of a frame, 6-20 ms; not adopted, ``cards_v4.md``).
    """
    from torch import nn

    def block(cin: int, cout: int, pool: bool = True) -> list:
        layers = [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                  nn.ReLU(inplace=True)]
        return [*layers, nn.MaxPool2d(2)] if pool else layers

    cells = (CROP_H // 8) * (CROP_W // 8)
    if arch == "gate":
        return nn.Sequential(
            *block(3, 16), *block(16, 32), *block(32, 64), *block(64, 64, pool=False),
            nn.Flatten(), nn.Dropout(0.2),
            nn.Linear(64 * cells, 128), nn.ReLU(inplace=True),
            nn.Linear(128, len(CLASSES)),
        )
    if arch == "gate_half":
        return nn.Sequential(
            nn.AvgPool2d(2), *block(3, 16), *block(16, 32), *block(32, 64, pool=False),
            nn.Flatten(), nn.Dropout(0.2),
            nn.Linear(64 * cells, 128), nn.ReLU(inplace=True),
            nn.Linear(128, len(CLASSES)),
        )
    if arch == "reader":
        return nn.Sequential(
            *block(3, 24), *block(24, 48, pool=False), *block(48, 48),
            *block(48, 96, pool=False), *block(96, 96),
            nn.Flatten(), nn.Dropout(0.2),
            nn.Linear(96 * cells, 192), nn.ReLU(inplace=True),
            nn.Linear(192, len(CLASSES)),
        )
    if arch == "reader_wide":
        return nn.Sequential(
            *block(3, 32), *block(32, 64, pool=False), *block(64, 64),
            *block(64, 128, pool=False), *block(128, 128),
            nn.Flatten(), nn.Dropout(0.2),
            nn.Linear(128 * cells, 256), nn.ReLU(inplace=True),
            nn.Linear(256, len(CLASSES)),
        )
    if arch == "reader_large":
        return nn.Sequential(
            *block(3, 40), *block(40, 80, pool=False), *block(80, 80),
            *block(80, 160, pool=False), *block(160, 160),
            nn.Flatten(), nn.Dropout(0.2),
            nn.Linear(160 * cells, 320), nn.ReLU(inplace=True),
            nn.Linear(320, len(CLASSES)),
        )
    raise ValueError(f"unknown architecture {arch!r}; known: {', '.join(ARCHITECTURES)}")


def load_onnx_weights(model, path: Path) -> None:  # noqa: ANN001
    """Initialise :func:`build_model` from an exported ONNX model of the same shape, float or
    quantised by :mod:`vision.quantize` (its integer weights are turned back into floats).

    The exporter folds each BatchNorm into the convolution before it; the folded kernel goes to
    the convolution and the folded bias to the BatchNorm, whose statistics become the identity
    (mean 0, variance 1 - eps, scale 1). Fine-tune such a model with its BatchNorms frozen
    (:func:`freeze_batchnorm`), or the batch statistics replace the folded ones.
    """
    import torch
    from torch import nn

    graph, weights = onnx_weights(path)
    convs = [n for n in graph.node if n.op_type == "Conv"]
    gemms = [n for n in graph.node if n.op_type == "Gemm"]
    mods = list(model)
    conv_mods = [m for m in mods if isinstance(m, nn.Conv2d)]
    bn_mods = [m for m in mods if isinstance(m, nn.BatchNorm2d)]
    lin_mods = [m for m in mods if isinstance(m, nn.Linear)]
    if (len(convs), len(gemms)) != (len(conv_mods), len(lin_mods)):
        raise ValueError(f"{path}: layers do not match the model")
    with torch.no_grad():
        for node, conv, bn in zip(convs, conv_mods, bn_mods, strict=True):
            conv.weight.copy_(torch.from_numpy(np.array(weights[node.input[1]])))
            bn.bias.copy_(torch.from_numpy(np.array(weights[node.input[2]])))
            bn.weight.fill_(1.0)
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        for node, lin in zip(gemms, lin_mods, strict=True):
            lin.weight.copy_(torch.from_numpy(np.array(weights[node.input[1]])))
            lin.bias.copy_(torch.from_numpy(np.array(weights[node.input[2]])))


def onnx_weights(path: Path) -> tuple:
    """An ONNX model's graph and its constant tensors by name, a quantised model's integer
    weights and biases turned back into floats (:func:`_dequantized`)."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    weights = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    weights.update(_dequantized(graph, weights))
    _trim_padded_input(graph, weights)
    return graph, weights


def _trim_padded_input(graph, weights: dict[str, np.ndarray]) -> None:  # noqa: ANN001
    """The first convolution's kernel in ``weights`` cut back to the model input's channels:
    :func:`vision.quantize.pad_first_conv` pads a reader's input with channels of zeros,
    read by zero weights, which a model built by :func:`build_model` does not have."""
    channels = graph.input[0].type.tensor_type.shape.dim[1].dim_value
    first = next((n for n in graph.node if n.op_type == "Conv"), None)
    if first is None or not channels:
        return
    kernel = weights[first.input[1]]
    if kernel.shape[1] > channels:
        if np.any(kernel[:, channels:]):
            raise ValueError(f"{first.name}: input channels beyond {channels} carry weights")
        weights[first.input[1]] = kernel[:, :channels]


def _dequantized(graph, weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:  # noqa: ANN001
    """The float value of every ``DequantizeLinear`` of constant inputs in ``graph``: a model
    quantised by :mod:`vision.quantize` (QDQ) keeps its kernels and biases as integers and
    scales, ``(q - zero_point) * scale`` per output channel."""
    out = {}
    for node in graph.node:
        if node.op_type != "DequantizeLinear" or not all(i in weights for i in node.input):
            continue
        q = weights[node.input[0]].astype(np.float64)
        scale = weights[node.input[1]].astype(np.float64)
        zero = (weights[node.input[2]].astype(np.float64) if len(node.input) > 2
                else np.zeros_like(scale))
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
        if scale.ndim == 1 and q.ndim > 1:  # per channel along ``axis``
            shape = [1] * q.ndim
            shape[axis] = -1
            scale, zero = scale.reshape(shape), zero.reshape(shape)
        out[node.output[0]] = ((q - zero) * scale).astype(np.float32)
    return out


def freeze_batchnorm(model) -> None:  # noqa: ANN001
    """Put every BatchNorm in eval mode (running statistics, not batch statistics)."""
    from torch import nn

    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()


def train(data: list[Path], cal: list[Path], epochs: int, seed: int, out: Path,
          log: Path, init: Path | None = None, max_lr: float = 3e-3, arch: str = "gate",
          label_smoothing: float = 0.02, reject_fraction: float = 1.0,
          threads: int = 1, geometric: bool = False, precision: str = "auto") -> dict:
    """Train on the npz files ``data``, report accuracy on ``cal`` each epoch; export ONNX.

    With ``init`` (an ONNX model), fine-tune it: its weights are loaded, its BatchNorms stay
    frozen, and the learning rate peaks early (10 % of the steps) at ``max_lr``. Each epoch
    uses every card and face-down crop and a fresh random ``reject_fraction`` of the rejects.
    ``geometric`` adds random scale, turn, shift and blur to each crop (:func:`_geometric`).
    ``precision``: :data:`PRECISIONS` (the one used is returned as ``"precision"``).
    """
    import torch
    from torch import nn

    precision = training_precision(precision, "cpu")
    bf16 = precision == "bf16"
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    rng = np.random.default_rng(seed)
    parts = [np.load(p) for p in data]
    x_tr = np.concatenate([p["x"] for p in parts])
    y_tr = np.concatenate([p["y"] for p in parts])
    del parts
    cals = [np.load(p) for p in cal]
    x_cal = np.concatenate([p["x"] for p in cals])
    y_cal = np.concatenate([p["y"] for p in cals])
    model = build_model(arch)
    if init is not None:
        load_onnx_weights(model, init)
    if bf16:  # oneDNN's bfloat16 convolutions are fastest on channels-last tensors
        model = model.to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    is_reject = y_tr == REJECT_INDEX
    per_epoch = int((~is_reject).sum() + round(reject_fraction * is_reject.sum()))
    # + margin: the reject draw varies by epoch; at least 20 steps, or the one-cycle schedule
    # of a tiny run (a test's) has an empty warm-up and divides by zero
    steps = max(20, epochs * (per_epoch // 256 + 8))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max_lr, total_steps=steps,
                                                pct_start=0.1 if init is not None else 0.3)
    lossf = nn.CrossEntropyLoss(label_smoothing=label_smoothing)
    history = []
    if init is not None:
        history.append({"epoch": -1, "cal_acc": _accuracy(model, x_cal, y_cal)})
    with log.open("a") as lf:
        for ep in range(epochs):
            model.train()
            if init is not None:
                freeze_batchnorm(model)
            if reject_fraction < 1.0:
                keep = ~is_reject | (rng.random(len(y_tr)) < reject_fraction)
                order = rng.permutation(np.flatnonzero(keep))
            else:
                order = rng.permutation(len(x_tr))
            t0, tot, n = time.time(), 0.0, 0
            for s in range(0, len(order), 256):
                idx = order[s:s + 256]
                xb = x_tr[idx]
                if geometric:
                    xb = _geometric(xb, rng)
                xb = torch.from_numpy(_augment(xb, rng))
                if bf16:
                    xb = xb.contiguous(memory_format=torch.channels_last)
                yb = torch.from_numpy(y_tr[idx])
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    loss = lossf(model(xb).float(), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                tot += loss.item() * len(idx)
                n += len(idx)
            acc = _accuracy(model, x_cal, y_cal)
            history.append({"epoch": ep, "loss": tot / n, "cal_acc": acc,
                            "seconds": time.time() - t0})
            lf.write(json.dumps(history[-1]) + "\n")
            lf.flush()
            export_onnx(model, out.with_name(f"{out.stem}.epoch{ep}.onnx"))
    export_onnx(model, out)
    return {"history": history, "n_train": len(x_tr), "n_cal": len(x_cal),
            "precision": precision}


def export_onnx(model, out: Path) -> None:  # noqa: ANN001
    """Export ``model`` (in eval mode) to ONNX with a dynamic batch size."""
    import torch

    model.eval()
    dummy = torch.zeros(1, 3, CROP_H, CROP_W)
    torch.onnx.export(model, dummy, str(out), input_names=["crops"], output_names=["logits"],
                      dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}}, opset_version=17,
                      dynamo=False)


def _geometric(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per crop: scale 0.92-1.08 and turn +-4 degrees about the frame's corner point, shift
    +-1.5 px (the proposals' errors, beyond those in the stored crops), and for 30 % a
    Gaussian blur of sigma up to 0.8 px. ``x`` is uint8 ``(N, 3, H, W)``; so is the result."""
    import cv2

    from vision.crops import U0, U1, V0, V1

    out = np.empty_like(x)
    h, w = x.shape[2:]
    corner = (-U0 / (U1 - U0) * w, -V0 / (V1 - V0) * h)
    for i in range(len(x)):
        m = cv2.getRotationMatrix2D(corner, rng.uniform(-4, 4), rng.uniform(0.92, 1.08))
        m[:, 2] += rng.uniform(-1.5, 1.5, 2)
        img = cv2.warpAffine(np.ascontiguousarray(x[i].transpose(1, 2, 0)), m, (w, h),
                             flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        if rng.random() < 0.3:
            img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 0.8))
        out[i] = img.transpose(2, 0, 1)
    return out


def _augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Brightness, contrast, colour and noise jitter on a uint8 batch; returns float32."""
    xf = x.astype(np.float32) / 255.0
    n = len(xf)
    gain = rng.uniform(0.75, 1.25, (n, 1, 1, 1)) * rng.uniform(0.92, 1.08, (n, 3, 1, 1))
    bias = rng.uniform(-0.1, 0.1, (n, 1, 1, 1))
    xf = xf * gain + bias
    xf += rng.normal(0, 1, xf.shape) * rng.uniform(0, 0.03, (n, 1, 1, 1))
    return np.clip(xf, 0, 1).astype(np.float32)


def _accuracy(model, x: np.ndarray, y: np.ndarray) -> float:  # noqa: ANN001
    import torch

    model.eval()
    with torch.no_grad():
        pred = np.concatenate([model(torch.from_numpy(x[s:s + 1024].astype(np.float32) / 255))
                               .argmax(1).numpy() for s in range(0, len(x), 1024)])
    return float((pred == y).mean())


def chunk_files(work: Path, scenes: int, chunks: int, seed: int,
                mix: DesignMix = DesignMix()) -> tuple[list[Path], Path]:
    """Generate (once) ``chunks`` training files and one calibration file in ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    files = []
    per = scenes // chunks
    for k in range(chunks + 1):
        path = work / f"data{k}.npz"
        if not path.exists():
            generate(per if k < chunks else max(per // 3, 20), seed * 100 + k, path, mix)
        files.append(path)
    return files[:-1], files[-1]


def add_design_arguments(ap: argparse.ArgumentParser) -> None:
    """``--ttf-share``, ``--legacy-designs``, ``--extra-fonts``, ``--hold-out-fonts``,
    ``--more-fonts``, ``--varied-suits`` and ``--camera-share`` (:class:`DesignMix`), for
    every command that renders training data."""
    ap.add_argument("--ttf-share", type=float, default=0.0,
                    help="share of the procedural decks with a TrueType index font (needs Pillow)")
    ap.add_argument("--legacy-designs", action="store_true",
                    help="draw aisleriot designs as the data made before 2026-11-30 did "
                         "(with tango_nuevo): to remake the data of cards_v1..cards_v3")
    ap.add_argument("--extra-fonts", action="store_true",
                    help="draw the TrueType decks from vision.procedural.EXTRA_TTF_FONTS too "
                         "(data made since the eighth session; needs those font packages)")
    ap.add_argument("--hold-out-fonts", action="store_true",
                    help="with --extra-fonts, leave vision.procedural.HELD_OUT_EXTRA_FONTS out "
                         "(the unseen yardstick vision.sweep --designs fonts-held-out reads)")
    ap.add_argument("--more-fonts", action="store_true",
                    help="draw the TrueType decks from vision.procedural.MORE_TTF_FONTS too "
                         "(data made since the twentieth session; needs those font packages)")
    ap.add_argument("--camera-share", type=float, default=0.0,
                    help="share of the scenes seen through a badly set camera "
                         "(vision.conditions.random_condition; data made since the fortieth "
                         "session)")
    ap.add_argument("--varied-suits", type=float, default=0.0,
                    help="share of the procedural decks whose suit symbols take proportions "
                         "of their own (vision.suits; data made since the eleventh session)")


def add_precision_argument(ap: argparse.ArgumentParser) -> None:
    """``--precision`` (:data:`PRECISIONS`), as every training command takes it."""
    ap.add_argument("--precision", choices=PRECISIONS, default="auto",
                    help="arithmetic of the training steps: bf16 autocast or fp32; auto: bf16 "
                         "on a GPU, fp32 on a CPU (bf16 on a CPU with AMX: 0.43 of the time "
                         "an epoch, measured; vision.train.PRECISIONS) (default %(default)s)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True, help="data/log directory (not the repo)")
    ap.add_argument("--scenes", type=int, default=1400)
    ap.add_argument("--chunks", type=int, default=4, help="training data files (+1 calibration)")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path("models/cards_v1.onnx"))
    ap.add_argument("--data-only", action="store_true", help="generate the data, do not train")
    ap.add_argument("--train-from", type=Path, nargs="*", default=[],
                    help="also train on the data files already in these work directories")
    ap.add_argument("--init", type=Path, default=None,
                    help="fine-tune this ONNX model (same architecture) instead of starting afresh")
    ap.add_argument("--max-lr", type=float, default=3e-3, help="peak of the one-cycle schedule")
    ap.add_argument("--arch", choices=ARCHITECTURES, default="gate")
    ap.add_argument("--label-smoothing", type=float, default=0.02)
    ap.add_argument("--reject-fraction", type=float, default=1.0,
                    help="share of the reject crops drawn afresh for each epoch")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--geometric", action="store_true",
                    help="random scale / turn / shift / blur of each crop while training")
    ap.add_argument("--log-dir", type=Path, default=None,
                    help="where train_log.jsonl and train_summary.json go (default: --work)")
    add_precision_argument(ap)
    add_design_arguments(ap)
    args = ap.parse_args(argv)
    train_files, cal = chunk_files(args.work, args.scenes, args.chunks, args.seed,
                                   DesignMix.from_args(args))
    cal_files = [cal]
    for extra in args.train_from:
        found = sorted(extra.glob("data*.npz"), key=lambda p: int(p.stem[4:]))
        train_files += found[:-1]
        cal_files.append(found[-1])
    if args.data_only:
        return 0
    log_dir = args.log_dir or args.work
    log_dir.mkdir(parents=True, exist_ok=True)
    info = train(train_files, cal_files, args.epochs, args.seed, args.out,
                 log_dir / "train_log.jsonl", init=args.init, max_lr=args.max_lr,
                 arch=args.arch, label_smoothing=args.label_smoothing,
                 reject_fraction=args.reject_fraction, threads=args.threads,
                 geometric=args.geometric, precision=args.precision)
    info["data"] = [str(p) for p in train_files]
    info["calibration"] = [str(p) for p in cal_files]
    info["init"] = str(args.init) if args.init else None
    (log_dir / "train_summary.json").write_text(json.dumps(info, indent=1))
    print(json.dumps(info["history"][-1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
