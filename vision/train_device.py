"""Make training data on many cores and train a classifier on an accelerator.

The same crops, labels, classes and export as :mod:`vision.train` (read its docstring), for a
machine with many cores and a GPU: the scenes are rendered by ``--workers`` processes (one
seeded chunk each, so the data do not depend on how many run at once), the whole data set
sits on the device as ``uint8``, and the augmentation (brightness, contrast, colour, noise,
random scale / turn / shift about the index corner, blur) runs there too. Also runs on the
CPU (``--device cpu``), which is how the tests try it. Example (the committed ``cards_v3``'s
exact command is in its model card)::

    python -m vision.train_device --work /tmp/w --scenes 9600 --chunks 48 --seed 11 \\
        --workers 16 --data-deadline 270 --arch reader_wide --train-seconds 200 \\
        --device cuda --out /tmp/w/cards_v3.onnx

``--data-deadline`` stops rendering after that many seconds: chunks not finished by then are
left out and named in the summary (rerun with ``--chunks``/``--only-chunks`` to get the same
set). ``--train-seconds`` runs the learning-rate schedule on the wall clock and stops when
it is spent (the steps taken are logged; pass ``--epochs`` for a schedule by steps instead).
GPU kernels are not bit-for-bit reproducible; the data are. ``--init`` fine-tunes an
exported model instead of training from scratch. ``--legibility`` flags, as the chunks are
rendered, the card-code crops whose suit may not show; ``--soft-illegible`` trains those
towards their rank with the suits alike and ``--drop-illegible`` leaves them out
(``models/cards_v4.md``, ninth session, for what each did). ``--suit-legibility`` flags them
by where each design prints its index suit instead (:func:`vision.train.suit_illegible`), and
``--soft-colour`` trains them towards their rank in their colour: half on the code, half on the
other suit of its colour (``models/cards_v5.md``, twenty-first session). ``--read-with READER``
renders chunks whose crops are every place that reader's whole pipeline reads in each scene
(``PATH@module.NAME=VALUE`` for pipeline settings, :mod:`vision.settings`): the places the
hand walks put, which the proposals' crops never hold (``models/cards_v7.md``,
fifty-seventh session); train on them beside plain chunks by putting both in one work
directory.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import numpy as np

from vision.codes import CLASSES, REJECT_INDEX
from vision.crops import CROP_H, CROP_W, U0, U1, V0, V1
from vision.fakequant import QMAX, bake, fake_quantize_weights
from vision.settings import split_reader
from vision.train import (
    ARCHITECTURES,
    DesignMix,
    add_design_arguments,
    add_precision_argument,
    build_model,
    export_onnx,
    freeze_batchnorm,
    generate,
    load_onnx_weights,
    training_precision,
)


def _render_chunk(job: tuple[int, int, str, DesignMix, bool | str, str | None]
                  ) -> tuple[str, float]:
    """Worker: render one seeded chunk into ``path`` (written whole, then renamed)."""
    import cv2

    cv2.setNumThreads(1)
    scenes, seed, path, mix, legibility, read_with = job  # legibility: False, True or a rule
    t0 = time.time()
    out = Path(path)
    if not out.exists():
        tmp = out.with_name(out.stem + ".part.npz")
        generate(scenes, seed, tmp, mix, legibility, read_with=read_with)
        tmp.rename(out)
    return path, time.time() - t0


def make_data(work: Path, scenes: int, chunks: int, seed: int, workers: int,
              deadline: float | None, cal_scenes: int, mix: DesignMix | None = None,
              legibility: bool | str = False, read_with: str | None = None) -> dict:
    """Render the calibration chunk and ``chunks`` training chunks of ``scenes / chunks``
    (with ``read_with``, each scene's crops are the places that reader's pipeline reads:
    :func:`vision.train.generate`).

    Chunk ``k`` is seeded ``seed * 100 + k`` (calibration: ``k = chunks``), as in
    :func:`vision.train.chunk_files`. Returns the files made and the chunks left out. The
    renderers are forked from a fork server (a fresh process of one thread), not from the
    caller: a fork of a process with other threads running (a test suite's, a table's)
    copies locks they may hold, and a renderer forked so once hung on one for good.
    """
    work.mkdir(parents=True, exist_ok=True)
    mix = mix or DesignMix()
    per = scenes // chunks
    cal = (cal_scenes, seed * 100 + chunks, str(work / "cal.npz"), mix, legibility, read_with)
    jobs = [cal] + [(per, seed * 100 + k, str(work / f"data{k}.npz"), mix, legibility,
                     read_with) for k in range(chunks)]
    t0 = time.time()
    done: list[str] = []
    with mp.get_context("forkserver").Pool(workers) as pool:
        pending = pool.imap_unordered(_render_chunk, jobs)
        for _ in jobs:
            left = None if deadline is None else deadline - (time.time() - t0)
            if left is not None and left <= 0:
                break
            try:
                path, secs = pending.next(timeout=left)
            except mp.TimeoutError:
                break
            done.append(path)
            print(f"chunk {Path(path).name} in {secs:.0f} s ({len(done)}/{len(jobs)})", flush=True)
        pool.terminate()
    if cal[2] not in done:
        raise RuntimeError("the calibration chunk was not finished before the deadline")
    train_files = sorted((p for p in done if p != cal[2]),
                         key=lambda p: int(Path(p).stem[4:]))
    missing = [k for k in range(chunks) if str(work / f"data{k}.npz") not in done]
    return {"train": train_files, "cal": cal[2], "missing_chunks": missing,
            "data_seconds": time.time() - t0}


def existing_data(work: Path) -> dict:
    """The chunks already rendered in ``work`` (for a second model trained on the same data)."""
    train_files = sorted((str(p) for p in work.glob("data*.npz") if ".part" not in p.name),
                         key=lambda p: int(Path(p).stem[4:]))
    cal = work / "cal.npz"
    if not cal.exists() or not train_files:
        raise FileNotFoundError(f"no rendered chunks in {work}")
    return {"train": train_files, "cal": str(cal), "missing_chunks": [], "data_seconds": 0.0}


def _load(files: list[str], legibility: bool = False) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray | None]:
    """Crops, labels and (with ``legibility``) the ``illegible`` flags of ``files``."""
    from concurrent.futures import ThreadPoolExecutor

    def read(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        with np.load(path) as z:  # zlib lets go of the GIL: the files decompress in parallel
            if legibility and "illegible" not in z:
                raise ValueError(f"{path} has no illegible flags: render it with --legibility "
                                 "or --suit-legibility")
            return z["x"], z["y"], z["illegible"] if legibility else None

    with ThreadPoolExecutor(max(1, min(16, len(files)))) as pool:
        parts = list(pool.map(read, files))
    flags = np.concatenate([p[2] for p in parts]) if legibility else None
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), flags)


def _warp_about_corner(x, a00, a01, a10, a11, tx, ty):  # noqa: ANN001, ANN202 - torch tensors
    """Each crop of ``x`` ``(N, 3, H, W)`` resampled so that its input pixel for output pixel
    ``p`` is ``A (p - c) + c + t``: ``A`` = [[a00, a01], [a10, a11]] and ``t`` = (tx, ty)
    per crop, ``c`` the frame's corner point; bilinear, the border replicated."""
    import torch
    import torch.nn.functional as F

    h, w = CROP_H, CROP_W
    cx, cy = -U0 / (U1 - U0) * w, -V0 / (V1 - V0) * h
    # grid_sample wants the map in [-1, 1] units (align_corners=False: n = 2 (p + .5) / size - 1)
    sx, sy = 2.0 / w, 2.0 / h
    theta = torch.empty(len(x), 2, 3, device=x.device)
    theta[:, 0, 0], theta[:, 0, 1] = a00, a01 * sx / sy
    theta[:, 1, 0], theta[:, 1, 1] = a10 * sy / sx, a11
    # offset: input_norm at output_norm 0, i.e. at output pixel p0 = (size - 1) / 2
    p0x, p0y = (w - 1) / 2, (h - 1) / 2
    inx = a00 * (p0x - cx) + a01 * (p0y - cy) + cx + tx
    iny = a10 * (p0x - cx) + a11 * (p0y - cy) + cy + ty
    theta[:, 0, 2] = sx * (inx + 0.5) - 1
    theta[:, 1, 2] = sy * (iny + 0.5) - 1
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def _augment(x, gen):  # noqa: ANN001, ANN202 - torch tensors; torch is a training-only dependency
    """Random geometry, blur and light on a float batch ``(N, 3, H, W)`` in [0, 1], on its device.

    The geometry is that of :func:`vision.train._geometric` (scale 0.92-1.08, turn +-4 degrees
    about the frame's corner point, shift +-1.5 px, replicated border; 30 % blurred, sigma
    0.3-0.8 px), the light that of :func:`vision.train._augment`.
    """
    import torch
    import torch.nn.functional as F

    n, dev = len(x), x.device

    def uni(lo: float, hi: float, *shape: int):  # noqa: ANN202
        return torch.rand(*shape, generator=gen, device=dev) * (hi - lo) + lo

    h, w = CROP_H, CROP_W
    ang = uni(-4, 4, n) * (math.pi / 180)
    s = uni(0.92, 1.08, n)
    tx, ty = uni(-1.5, 1.5, n), uni(-1.5, 1.5, n)
    x = _warp_about_corner(x, s * torch.cos(ang), -s * torch.sin(ang),
                           s * torch.sin(ang), s * torch.cos(ang), tx, ty)
    blurred = torch.rand(n, generator=gen, device=dev) < 0.3
    if blurred.any():
        sig = uni(0.3, 0.8, int(blurred.sum()))
        k = torch.arange(-2, 3, device=dev, dtype=x.dtype)
        kern = torch.exp(-(k[None, :] ** 2) / (2 * sig[:, None] ** 2))
        kern = kern / kern.sum(1, keepdim=True)  # (m, 5), one separable kernel per crop
        xb = x[blurred]
        m = len(xb)
        flat = xb.reshape(1, m * 3, h, w)
        kx = kern.repeat_interleave(3, 0).reshape(m * 3, 1, 1, 5)
        ky = kern.repeat_interleave(3, 0).reshape(m * 3, 1, 5, 1)
        flat = F.conv2d(F.pad(flat, (2, 2, 0, 0), mode="replicate"), kx, groups=m * 3)
        flat = F.conv2d(F.pad(flat, (0, 0, 2, 2), mode="replicate"), ky, groups=m * 3)
        x = x.clone()
        x[blurred] = flat.reshape(m, 3, h, w)
    gain = uni(0.75, 1.25, n, 1, 1, 1) * uni(0.92, 1.08, n, 3, 1, 1)
    x = x * gain + uni(-0.1, 0.1, n, 1, 1, 1)
    noise = torch.randn(x.shape, generator=gen, device=dev)
    x = x + noise * uni(0, 0.03, n, 1, 1, 1)
    return x.clamp(0, 1)


#: :func:`_shape_jitter`'s ranges: the glyphs' width and slant (shear), about the frame's
#: corner point.
SHAPE_WIDTH = (0.85, 1.15)
SHAPE_SLANT = 0.2


def _shape_jitter(x, gen, share: float):  # noqa: ANN001, ANN202 - torch tensors
    """Another typeface's shapes for a ``share`` of a float batch ``(N, 3, H, W)`` in
    [0, 1]: each chosen crop drawn :data:`SHAPE_WIDTH` wider or narrower and slanted by up to
    :data:`SHAPE_SLANT` about the frame's corner point, and its ink a half pixel thicker or
    thinner (a grey minimum or maximum over two pixels at twice the resolution). Nothing is
    drawn from ``gen`` when ``share`` is 0, so a run without it is the run it was."""
    import torch
    import torch.nn.functional as F

    if share <= 0:
        return x
    n, dev = len(x), x.device
    chosen = torch.rand(n, generator=gen, device=dev) < share
    m = int(chosen.sum())
    if m == 0:
        return x
    width = torch.rand(m, generator=gen, device=dev) * (SHAPE_WIDTH[1] - SHAPE_WIDTH[0]) \
        + SHAPE_WIDTH[0]
    slant = (torch.rand(m, generator=gen, device=dev) * 2 - 1) * SHAPE_SLANT
    thicker = torch.rand(m, generator=gen, device=dev) < 0.5
    # input pixel = A (out - c) + c with A = [[1/width, slant], [0, 1]]
    zero, one = torch.zeros(m, device=dev), torch.ones(m, device=dev)
    xb = _warp_about_corner(x[chosen], 1 / width, slant, zero, one, zero, zero)
    big = F.pad(F.interpolate(xb, scale_factor=2, mode="bilinear", align_corners=False),
                (0, 1, 0, 1), mode="replicate")
    lighter = F.max_pool2d(big, 2, stride=1)  # the card grows into the ink: thinner strokes
    darker = -F.max_pool2d(-big, 2, stride=1)  # the ink grows: thicker strokes
    big = torch.where(thicker[:, None, None, None], darker, lighter)
    xb = F.avg_pool2d(big, 2)
    x = x.clone()
    x[chosen] = xb
    return x


def _evaluate(model, x, y) -> dict:  # noqa: ANN001
    """Accuracy on all crops, and on card-code crops: right, and right/wrong at p >= 0.99."""
    import torch

    model.eval()
    probs = []
    with torch.no_grad():
        for s in range(0, len(x), 8192):
            probs.append(torch.softmax(model(x[s:s + 8192].float() / 255).float(), 1))
    p = torch.cat(probs)
    conf, pred = p.max(1)
    right = pred == y
    card = y < 52
    sure = conf >= 0.99
    return {"cal_acc": float(right.float().mean()),
            "card_acc": float(right[card].float().mean()),
            "card_sure_right": float((right & sure)[card].float().mean()),
            "card_sure_wrong": int((~right & sure)[card].sum())}


def train(files: list[str], cal: str, out: Path, log: Path, arch: str, seed: int,
          device: str, epochs: int | None, train_seconds: float | None, batch: int,
          max_lr: float, reject_fraction: float, init: Path | None = None,
          label_smoothing: float = 0.0, soft_illegible: bool = False,
          drop_illegible: bool = False, soft_colour: bool = False,
          precision: str = "auto", shape_jitter: float = 0.0,
          weight_bits: int | None = None, distil: bool = False) -> dict:
    """Train ``arch`` on ``files``; export ONNX to ``out`` after every epoch.

    From scratch, or with ``init`` (an exported ONNX model of ``arch``) fine-tuned as
    :func:`vision.train.train` does it: its weights loaded, its BatchNorms frozen, and the
    learning rate peaking at 10 % of the steps rather than 25 %. With ``soft_illegible`` (data
    rendered with ``--legibility``) a card-code crop flagged illegible is trained towards its
    rank with the four suits equally likely (:func:`soft_targets`; ``soft_colour``: the two of
    its colour), not towards its exact code; with ``drop_illegible`` such crops are left out of
    training. ``precision``: :data:`vision.train.PRECISIONS`. ``shape_jitter``: the share of
    crops drawn as another typeface might draw them (:func:`_shape_jitter`). ``weight_bits``
    (7 or 8): every weight trained on the integer grid :mod:`vision.quantize` will put it on
    (:mod:`vision.fakequant`), and exported on it. ``distil``: trained towards ``init``'s own
    output distribution on each augmented crop (KL divergence, a frozen copy of ``init`` as
    loaded) instead of the labels: with ``weight_bits``, the reader kept as it reads while its
    weights move onto the grid.
    """
    import copy

    import torch
    from torch import nn

    torch.manual_seed(seed)
    dev = torch.device(device)
    x_np, y_np, ill_np = _load(files, soft_illegible or drop_illegible or soft_colour)
    if drop_illegible:
        legible = ~(ill_np & (y_np < 52))
        x_np, y_np, ill_np = x_np[legible], y_np[legible], None
    x_tr = torch.from_numpy(x_np).to(dev)
    y_tr = torch.from_numpy(y_np).to(dev)
    ill_tr = torch.from_numpy(ill_np).to(dev) if ill_np is not None else None
    del x_np, y_np, ill_np
    xc_np, yc_np, _ = _load([cal])
    x_cal, y_cal = torch.from_numpy(xc_np).to(dev), torch.from_numpy(yc_np).to(dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed)
    model = build_model(arch)
    if init is not None:
        load_onnx_weights(model, init)
    teacher = None
    if distil:
        if init is None:
            raise ValueError("distil needs init: the model to keep")
        teacher = copy.deepcopy(model).eval().to(dev).to(memory_format=torch.channels_last)
        teacher.requires_grad_(False)
    if weight_bits is not None:
        fake_quantize_weights(model, weight_bits)
    model = model.to(dev).to(memory_format=torch.channels_last)

    def train_mode() -> None:
        model.train()
        if init is not None:
            freeze_batchnorm(model)  # the folded statistics of init stay

    is_reject = y_tr == REJECT_INDEX
    per_epoch = int((~is_reject).sum()) + round(reject_fraction * int(is_reject.sum()))
    steps_per_epoch = per_epoch // batch + 1
    precision = training_precision(precision, dev.type)
    amp = precision == "bf16"
    lossf = nn.CrossEntropyLoss(label_smoothing=label_smoothing)

    def step(opt, idx) -> float:  # noqa: ANN001
        xb = _shape_jitter(x_tr[idx].float() / 255, gen, shape_jitter)
        xb = _augment(xb, gen).contiguous(memory_format=torch.channels_last)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp):
            logits = model(xb).float()
            if teacher is not None:
                with torch.no_grad():
                    want = torch.softmax(teacher(xb).float(), 1)
                loss = nn.functional.kl_div(torch.log_softmax(logits, 1), want,
                                            reduction="batchmean")
            else:
                target = (y_tr[idx] if ill_tr is None
                          else soft_targets(y_tr[idx], ill_tr[idx], len(CLASSES), soft_colour))
                loss = lossf(logits, target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return float(loss.detach())  # waits for the step: the clock below sees real time

    # One cycle (as torch's OneCycleLR: up from max_lr / 25, cosine down to 1e4 times less),
    # over the steps of ``epochs`` or else over ``train_seconds`` of wall-clock time, so that
    # a time budget holds however busy the device is (other runs on it, say).
    peak_at = 0.1 if init is not None else 0.25
    total_steps = epochs * steps_per_epoch if epochs is not None else None
    opt = torch.optim.AdamW(model.parameters(), lr=max_lr / 25, weight_decay=1e-4)
    history = []
    if init is not None:
        history.append({"epoch": -1, **_evaluate(model, x_cal, y_cal)})
        print(json.dumps(history[-1]), flush=True)
    t_start, steps_done, ep, frac = time.time(), 0, 0, 0.0
    with log.open("a") as lf:
        while frac < 1.0:
            train_mode()
            t0 = time.time()
            keep = ~is_reject | (torch.rand(len(y_tr), generator=gen, device=dev)
                                 < reject_fraction)
            order = torch.nonzero(keep).flatten()
            order = order[torch.randperm(len(order), generator=gen, device=dev)]
            order = order[:steps_per_epoch * batch]
            tot, n = 0.0, 0
            for s in range(0, len(order), batch):
                frac = (steps_done / total_steps if total_steps is not None
                        else (time.time() - t_start) / train_seconds)
                if frac >= 1.0:
                    break
                for group in opt.param_groups:
                    group["lr"] = one_cycle_lr(frac, max_lr, peak_at)
                idx = order[s:s + batch]
                tot += step(opt, idx) * len(idx)
                n += len(idx)
                steps_done += 1
            if epochs is not None and ep + 1 >= epochs:
                # by steps, the run is the epochs asked for: a reject draw that leaves an epoch
                # a step short must not add a further epoch at the schedule's tail
                frac = 1.0
            if n == 0:  # the budget ran out as this epoch began: the last one is the model
                break
            rec = {"epoch": ep, "loss": tot / n, "steps": steps_done,
                   "seconds": round(time.time() - t0, 1), **_evaluate(model, x_cal, y_cal)}
            history.append(rec)
            lf.write(json.dumps(rec) + "\n")
            lf.flush()
            print(json.dumps(rec), flush=True)
            _export(model, out)
            ep += 1
    return {"history": history, "epochs": ep, "steps": steps_done, "n_train": len(y_tr),
            "n_cal": len(y_cal), "batch": batch, "max_lr": max_lr,
            "reject_fraction": reject_fraction, "precision": precision,
            "weight_bits": weight_bits, "distil": distil}


def soft_targets(y, illegible, n_classes: int,  # noqa: ANN001, ANN201 - torch tensors
                 colour: bool = False):
    """Target distributions: one-hot, except for the ``illegible`` card codes, whose four
    suits of the rank share it (the classes run ``AS AH AD AC 2S ...``: a rank's four are
    consecutive), or with ``colour`` the two suits of its colour (spades and clubs, hearts
    and diamonds: suit ``s`` of a rank and suit ``3 - s``) half each: a small suit symbol
    still shows its ink's colour. Tested in ``tests/test_vision_units.py`` (torch is a
    training extra)."""
    import torch

    t = torch.nn.functional.one_hot(y, n_classes).float()
    soft = illegible & (y < 52)
    if bool(soft.any()):
        first = (y[soft] // 4) * 4
        rows = torch.zeros(len(first), n_classes, device=y.device)
        if colour:
            partner = first + 3 - y[soft] % 4
            rows.scatter_(1, torch.stack([y[soft], partner], 1), 0.5)
        else:
            rows.scatter_(1, first[:, None] + torch.arange(4, device=y.device)[None], 0.25)
        t[soft] = rows
    return t


def one_cycle_lr(frac: float, max_lr: float, peak_at: float) -> float:
    """The learning rate at ``frac`` (0-1) of a one-cycle schedule peaking at ``peak_at``.

    >>> one_cycle_lr(0.0, 1.0, 0.25), one_cycle_lr(0.25, 1.0, 0.25)
    (0.04, 1.0)
    >>> one_cycle_lr(1.0, 1.0, 0.25)
    4e-06
    """
    start, final = max_lr / 25, max_lr / 25 / 1e4
    if frac < peak_at:
        return start + (max_lr - start) * (1 - math.cos(math.pi * frac / peak_at)) / 2
    down = min(1.0, (frac - peak_at) / (1 - peak_at))
    return final + (max_lr - final) * (1 + math.cos(math.pi * down)) / 2


def _export(model, out: Path) -> None:  # noqa: ANN001
    """Export a CPU float32 copy, its weights on their grid where they were trained on one
    (the training copy stays where it is)."""
    import copy

    import torch

    cpu = copy.deepcopy(model).float().cpu().to(memory_format=torch.contiguous_format)
    bake(cpu)
    tmp = out.with_name(out.stem + ".part.onnx")
    export_onnx(cpu, tmp)
    os.replace(tmp, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True, help="data directory (not the repo)")
    ap.add_argument("--scenes", type=int, default=9600)
    ap.add_argument("--chunks", type=int, default=48)
    ap.add_argument("--cal-scenes", type=int, default=300)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--data-deadline", type=float, default=None,
                    help="seconds; chunks not rendered by then are left out")
    add_design_arguments(ap)
    ap.add_argument("--use-existing", action="store_true",
                    help="render nothing: train on the chunks already in --work")
    ap.add_argument("--data-only", action="store_true", help="render the chunks, do not train")
    ap.add_argument("--read-with", metavar="READER", default=None,
                    help="crops at every place this reader's pipeline reads (PATH, or "
                         "PATH@module.NAME=VALUE... with pipeline settings) instead of the "
                         "proposals and jittered true corners")
    ap.add_argument("--arch", choices=ARCHITECTURES, default="reader_wide")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--train-seconds", type=float, default=200.0,
                    help="wall-clock budget of the schedule when --epochs is not given")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--max-lr", type=float, default=4e-3)
    ap.add_argument("--reject-fraction", type=float, default=0.35)
    ap.add_argument("--init", type=Path, default=None,
                    help="an exported ONNX model of --arch to fine-tune (default: from scratch)")
    ap.add_argument("--label-smoothing", type=float, default=0.0)
    ap.add_argument("--legibility", action="store_true",
                    help="render: store which card-code crops are illegible (vision.train."
                         "label_frames)")
    ap.add_argument("--soft-illegible", action="store_true",
                    help="train illegible card-code crops towards their rank, suits alike "
                         "(data rendered with a legibility rule)")
    ap.add_argument("--suit-legibility", action="store_true",
                    help="render: store which card-code crops are illegible by the suit rule "
                         "(vision.train.suit_illegible)")
    ap.add_argument("--soft-colour", action="store_true",
                    help="train illegible card-code crops towards their rank in their colour, "
                         "half on each suit of it (data rendered with a legibility rule)")
    ap.add_argument("--drop-illegible", action="store_true",
                    help="leave illegible card-code crops out of training (data rendered with "
                         "a legibility rule)")
    ap.add_argument("--shape-jitter", type=float, default=0.0, metavar="P",
                    help="draw a share P of the crops wider or narrower, slanted, their ink "
                         "thicker or thinner, as another typeface might (default 0)")
    ap.add_argument("--weight-bits", type=int, choices=sorted(QMAX), default=None,
                    help="train the weights on the int8 grid of this many bits (7: the "
                         "grid vision.quantize --weight-bits 7 puts them on); default: in float")
    ap.add_argument("--distil", action="store_true",
                    help="train towards --init's own output on each crop instead of the "
                         "labels (with --weight-bits: keep its reads on the coarser grid)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--log-dir", type=Path, default=None)
    add_precision_argument(ap)
    args = ap.parse_args(argv)
    if args.distil and args.init is None:
        ap.error("--distil needs --init: the model whose output is kept")
    if sum((args.soft_illegible, args.drop_illegible, args.soft_colour)) > 1:
        ap.error("--soft-illegible, --soft-colour and --drop-illegible exclude each other")
    if args.legibility and args.suit_legibility:
        ap.error("--legibility and --suit-legibility are two rules: pick one")
    if args.read_with is not None and args.use_existing:
        ap.error("--read-with renders chunks: not with --use-existing")
    if args.read_with is not None:  # refused here, not in every renderer process
        try:
            reader, _ = split_reader(args.read_with)
        except ValueError as e:
            ap.error(f"--read-with: {e}")
        if not Path(reader).is_file():
            ap.error(f"--read-with: no reader {reader}")
    if args.use_existing:
        data = existing_data(args.work)
    else:
        data = make_data(args.work, args.scenes, args.chunks, args.seed, args.workers,
                         args.data_deadline, args.cal_scenes, DesignMix.from_args(args),
                         "suit" if args.suit_legibility else args.legibility, args.read_with)
    print(json.dumps({"chunks": len(data["train"]),
                      **{k: v for k, v in data.items() if k != "train"}}), flush=True)
    if args.data_only:
        return 0
    log_dir = args.log_dir or args.out.parent
    log_dir.mkdir(parents=True, exist_ok=True)
    info = train(data["train"], data["cal"], args.out, log_dir / "train_log.jsonl", args.arch,
                 args.seed, args.device, args.epochs, args.train_seconds, args.batch,
                 args.max_lr, args.reject_fraction, args.init, args.label_smoothing,
                 args.soft_illegible, args.drop_illegible, args.soft_colour, args.precision,
                 args.shape_jitter, args.weight_bits, args.distil)
    info.update(data)
    info["argv"] = argv if argv is not None else sys.argv[1:]
    (log_dir / "train_summary.json").write_text(json.dumps(info, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
