"""Pick the operating threshold on held-in calibration crops and write the model's metadata.

    python -m vision.calibrate models/cards_v1.onnx /work/vision-work/train/data4.npz

The threshold is the smallest confidence at which, on the calibration crops (training designs,
scenes never trained on), reads above it are wrong at most ``--max-error`` of the time
(a reject or face-down crop read as a card counts as wrong). It is written, with the class
list, to ``<model>.json``, which :class:`vision.recognize.Recognizer` reads.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from vision.codes import CLASSES
from vision.crops import CROP_H, CROP_W


def choose_threshold(probs: np.ndarray, labels: np.ndarray, max_error: float) -> dict:
    """Smallest threshold whose card reads are wrong at most ``max_error`` of the time."""
    pred = probs.argmax(1)
    conf = probs.max(1)
    is_read = pred < 52
    table = []
    chosen = None
    for thr in np.round(np.arange(0.5, 1.0, 0.01), 2).tolist() + [0.995, 0.999]:
        sel = is_read & (conf >= thr)
        wrong = int((pred[sel] != labels[sel]).sum())
        n = int(sel.sum())
        pos = labels < 52
        recall = float(((pred == labels) & sel & pos).sum() / max(pos.sum(), 1))
        table.append({"threshold": thr, "reads": n, "wrong": wrong, "crop_recall": recall})
        if chosen is None and n and wrong / n <= max_error:
            chosen = table[-1]
    return {"chosen": chosen or table[-1], "table": table}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("data", type=Path, help="npz of calibration crops (x uint8, y labels)")
    ap.add_argument("--max-error", type=float, default=0.001)
    args = ap.parse_args(argv)
    from vision.recognize import Recognizer

    rec = Recognizer(args.model, threshold=0.5)
    d = np.load(args.data)
    x = d["x"].astype(np.float32) / 255.0
    probs = np.concatenate([rec.classify(x[s:s + 512]) for s in range(0, len(x), 512)])
    res = choose_threshold(probs, d["y"], args.max_error)
    meta = {"classes": list(CLASSES), "input": [3, CROP_H, CROP_W],
            "threshold": res["chosen"]["threshold"], "calibration": res["chosen"],
            "calibration_crops": int(len(x))}
    args.model.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(json.dumps(res["chosen"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
