"""Pilot (thirty-seventh session, dropped): can a card's body (its pips, its artwork) veto a
wrong index suit on the top card of a hand?

    python benchmarks/body_suit_pilot.py make train.npz TRAIN_DIR [TRAIN_DIR ...]
    python benchmarks/body_suit_pilot.py train train.npz net.pt
    monster-match recognize --json --threshold 0.99 HELD_OUT_DIR > reads.jsonl
    python benchmarks/body_suit_pilot.py check net.pt reads.jsonl

``make`` cuts the body of the top (last dealt) face-up card of every layout spot of labelled
frames (the card's own quad from its labels, the middle 64 % of its width and 84 % of its
height, warped to 40 x 52 px: the index corners left out) with its suit. ``train`` fits a
small network (three double-convolution blocks, seeded, PyTorch from the ``train`` extra) to
them. ``check`` cuts the body of every card ``recognize`` reported (its reported corners),
matched to the labels as ``vision-eval`` matches, and counts, per threshold, the misreads the
body would veto (the probability it gives the read suit under 0.02 / 0.05 / 0.1 / 0.2) among
those on top cards (known from the labels: an oracle the table would not have), and the right
reads of top cards it would refuse. Measured in ``models/cards_v5.md``, thirty-seventh
session: on 1280 frames of the strict held-out typefaces at 0.99, 3 of 17 misreads caught at
best, for 92 right reads refused.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.evaluate import labelled_images, match_reports  # noqa: E402

SUITS = "SHDC"
WIDTH, HEIGHT = 40, 52
#: The body: this share of the card's width and height (left, right, top, bottom).
REGION = (0.18, 0.82, 0.08, 0.92)


def body_crop(img: np.ndarray, corners: list) -> np.ndarray:
    """The card's body (:data:`REGION` of the quad ``corners``: its own top-left, top-right,
    bottom-right, bottom-left), warped upright to ``WIDTH`` x ``HEIGHT``."""
    c = np.asarray(corners, np.float32)
    x0, x1, y0, y1 = REGION

    def at(u: float, v: float) -> np.ndarray:
        top, bottom = c[0] + u * (c[1] - c[0]), c[3] + u * (c[2] - c[3])
        return top + v * (bottom - top)

    src = np.float32([at(x0, y0), at(x1, y0), at(x1, y1), at(x0, y1)])
    dst = np.float32([[0, 0], [WIDTH - 1, 0], [WIDTH - 1, HEIGHT - 1], [0, HEIGHT - 1]])
    return cv2.warpPerspective(img, cv2.getPerspectiveTransform(src, dst), (WIDTH, HEIGHT),
                               flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


def top_cards(labels: dict) -> list[dict]:
    """The last dealt card of each spot, where it is face up: the one whose body shows."""
    spots: dict[str, list[dict]] = {}
    for card in labels["cards"]:
        spots.setdefault(card["spot"], []).append(card)
    return [cards[-1] for cards in spots.values() if cards[-1]["code"] != "face_down"]


def make(out: Path, directories: list[Path]) -> None:
    crops, suits = [], []
    for directory in directories:
        for img_path, lab_path in labelled_images(directory):
            labels = json.loads(lab_path.read_text())
            img = cv2.imread(str(img_path))
            for card in top_cards(labels):
                crops.append(body_crop(img, card["corners"]))
                suits.append(SUITS.index(card["code"][1]))
    np.savez_compressed(out, X=np.stack(crops), y=np.array(suits))
    print(f"{len(crops)} bodies, by suit {np.bincount(suits, minlength=4).tolist()}")


def network():  # noqa: ANN201 - torch is imported here
    from torch import nn

    def block(i: int, o: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                             nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                             nn.MaxPool2d(2))
    return nn.Sequential(block(3, 16), block(16, 32), block(32, 64), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, 4))


def train(data: Path, out: Path, epochs: int = 25, seed: int = 7) -> None:
    import torch
    from torch import nn

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    d = np.load(data)
    x = torch.tensor(d["X"]).permute(0, 3, 1, 2).float() / 255
    y = torch.tensor(d["y"])
    order = rng.permutation(len(x))
    held, fit = order[:400], order[400:]
    model = network()
    opt = torch.optim.AdamW(model.parameters(), 2e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3,
                                                total_steps=epochs * (len(fit) // 64 + 1))

    def augment(b: torch.Tensor) -> torch.Tensor:  # light, white balance, shift, blur, noise
        n = b.shape[0]
        b = b * torch.empty(n, 1, 1, 1).uniform_(0.6, 1.3) + torch.empty(n, 1, 1, 1).uniform_(
            -0.15, 0.15)
        b = b * torch.empty(n, 3, 1, 1).uniform_(0.85, 1.15)
        dx, dy = (int(v) for v in rng.integers(-3, 4, 2))
        b = torch.roll(b, (dy, dx), (2, 3))
        if rng.random() < 0.3:
            k = torch.tensor([1.0, 2.0, 1.0]) / 4
            b = nn.functional.conv2d(b, (k[:, None] * k[None]).expand(3, 1, 3, 3), padding=1,
                                     groups=3)
        return (b + torch.randn_like(b) * 0.02).clamp(0, 1)

    for epoch in range(epochs):
        model.train()
        batches = rng.permutation(fit)
        for i in range(0, len(batches), 64):
            b = batches[i:i + 64]
            loss = nn.functional.cross_entropy(model(augment(x[b])), y[b], label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        if epoch % 5 == 4 or epoch == epochs - 1:
            model.eval()
            with torch.no_grad():
                acc = (model(x[held]).argmax(1) == y[held]).float().mean().item()
            print(f"epoch {epoch + 1}: held-back accuracy {acc:.4f}", flush=True)
    torch.save(model.state_dict(), out)


def check(net: Path, reads: Path) -> None:
    import torch

    model = network()
    model.load_state_dict(torch.load(net))
    model.eval()
    rows = []
    for line in reads.read_text().splitlines():
        r = json.loads(line)
        if "cards" not in r:
            continue
        path = os.path.realpath(r["image"])
        labels = json.loads(Path(path).with_suffix(".json").read_text())
        img = cv2.imread(path)
        tops = {id(c) for c in top_cards(labels)}
        for card, (i, _) in zip(r["cards"], match_reports(r["cards"], labels["cards"]),
                                strict=True):
            if i is None:
                continue
            truth = labels["cards"][i]
            x = torch.tensor(body_crop(img, card["corners"])).permute(2, 0, 1)[None].float()
            with torch.no_grad():
                p = torch.softmax(model(x / 255), 1)[0].numpy()
            rows.append((card["code"], truth["code"], card["confidence"], id(truth) in tops,
                         float(p[SUITS.index(card["code"][1])])))
    for thr in (0.99, 0.993, 0.995, 0.997):
        sel = [r for r in rows if r[2] >= thr]
        wrong = [r for r in sel if r[0] != r[1]]
        right_top = [r for r in sel if r[0] == r[1] and r[3]]
        print(f"threshold {thr}: {len(sel)} reports, {len(wrong)} misreads "
              f"({sum(r[3] for r in wrong)} on top cards)")
        for veto in (0.02, 0.05, 0.1, 0.2):
            caught = sum(1 for r in wrong if r[3] and r[4] < veto)
            lost = sum(1 for r in right_top if r[4] < veto)
            print(f"  veto under {veto}: {caught} misreads caught; {lost} of {len(right_top)} "
                  "right reads of top cards refused")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="step", required=True)
    p = sub.add_parser("make")
    p.add_argument("out", type=Path)
    p.add_argument("directories", type=Path, nargs="+")
    p = sub.add_parser("train")
    p.add_argument("data", type=Path)
    p.add_argument("out", type=Path)
    p = sub.add_parser("check")
    p.add_argument("net", type=Path)
    p.add_argument("reads", type=Path)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    if args.step == "make":
        make(args.out, args.directories)
    elif args.step == "train":
        try:
            train(args.data, args.out)
        except ImportError:
            print("needs PyTorch: pip install -e '.[train]'", file=sys.stderr)
            return 2
    else:
        check(args.net, args.reads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
