"""Average the weights of readers of one architecture (a "model soup").

    python -m vision.soup OUT.onnx A.onnx B.onnx [C.onnx ...] --arch reader_wide
    python -m vision.quantize OUT.onnx OUT_int8.onnx --data CAL.npz

Short fine-tunes of one reader on a CPU drift: each run learns a little and forgets a little,
differently (``models/cards_v5.md``, fortieth session). Fine-tunes from the same start lie in
one basin of the loss, so the mean of their weights is a reader too, and often reads unseen
data better than any of them (Wortsman et al., "Model soups", 2022; with the start itself
among them, "WiSE-FT"). Every input is loaded as :func:`vision.train.load_onnx_weights` loads
an ``--init`` (an int8 reader's weights turned back into floats; each BatchNorm folded into
its convolution), so float and quantised readers mix; the mean of every weight is exported
as a float ONNX reader, to be quantised like any trained one. Needs the ``train`` extra.
The bundled ``cards_v7`` is such a soup (``models/cards_v7.md``).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def soup(paths: list[Path], out: Path, arch: str) -> None:
    """Write to ``out`` the float reader whose every weight is the mean of that weight in the
    readers ``paths`` (all of ``arch``, :func:`vision.train.build_model`).

    (Tested in ``tests/test_soup.py``, where torch is installed.)
    """
    import torch

    from vision.train import build_model, export_onnx, load_onnx_weights

    if len(paths) < 2:
        raise ValueError("a soup needs two readers or more")
    states = []
    for path in paths:
        model = build_model(arch)
        load_onnx_weights(model, path)
        states.append(model.state_dict())
    mean = {}
    for name, first in states[0].items():
        if first.is_floating_point():
            mean[name] = torch.stack([s[name] for s in states]).mean(0)
        else:  # (BatchNorm's batch counter: not a weight)
            mean[name] = first
    model = build_model(arch)
    model.load_state_dict(mean)
    export_onnx(model, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("readers", type=Path, nargs="+")
    ap.add_argument("--arch", default="reader_wide")
    args = ap.parse_args(argv)
    missing = [str(p) for p in args.readers if not p.is_file()]
    if missing:
        ap.error(f"no such reader: {', '.join(missing)}")
    try:
        soup(args.readers, args.out, args.arch)
    except ValueError as e:  # one reader, or one whose layers are not those of --arch
        ap.error(str(e))
    print(f"{args.out}: the mean of {len(args.readers)} readers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
