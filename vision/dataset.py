"""Write labelled synthetic frames (``NAME.jpg`` + ``NAME.json``) for evaluation and tests.

    python -m vision.dataset OUT_DIR --frames 40 --seed 7 --designs val

``--designs val`` means the validation designs (aisleriot designs and the procedural family
never used in training); ``train`` the training ones; ``fonts`` the procedural decks of the
index typefaces that the committed reader and gate never saw (:data:`UNSEEN_FONTS`); or give
names separated by commas (``proc:5:3`` for a procedural deck). ``--burst K`` writes each scene
as a burst of ``K`` frames of a still camera (:func:`vision.synth.render_burst`): ``NAME.jpg``
and its label as ever, then ``NAME.b1.jpg`` .. ``NAME.b<K-1>.jpg``; the scenes, and the first
frames, are those of the same command without ``--burst``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from vision.designs import TRAIN_AISLERIOT, VAL_AISLERIOT
from vision.procedural import (
    EXTRA_TTF_FAMILIES,
    HELD_OUT_EXTRA_FAMILIES,
    STRICT_HELD_OUT_FAMILIES,
    TRAIN_FAMILIES,
    VAL_FAMILIES,
)
from vision.synth import random_deal, render_burst

#: ``fonts``: one procedural deck per typeface of :data:`vision.procedural.EXTRA_TTF_FONTS`.
#: ``cards_v4`` and ``gate_v2`` were trained before those typefaces were added (eighth
#: session), so these decks are designs they never saw, like the validation designs, yet not
#: the validation designs: a threshold or a pipeline setting may be chosen on them. Only the
#: index typeface is new (the suit symbols and the card layout are the procedural decks' of
#: training), and a reader trained with ``--extra-fonts`` has seen them: ``cards_v5`` saw 21
#: of them, so only :data:`HELD_OUT_FONTS` are unseen designs for it.
UNSEEN_FONTS = "fonts"
#: ``fonts-held-out``: the decks of :data:`UNSEEN_FONTS` whose typefaces data made with
#: ``--hold-out-fonts`` leave out (:data:`vision.procedural.HELD_OUT_EXTRA_FONTS`): unseen by
#: ``cards_v4`` and by a reader trained on the other extra typefaces alike, so the two may be
#: compared on them (nineteenth session). Same names, so the same frames, as in ``fonts``.
HELD_OUT_FONTS = "fonts-held-out"
#: ``fonts-held-out-strict``: :data:`HELD_OUT_FONTS` without the decks whose typeface is a
#: near copy of one drawn in training (:data:`vision.procedural.LOOKALIKE_HELD_OUT_FONTS`:
#: Lato, whose glyphs Carlito shares), found in the twentieth session: the yardstick the
#: operating threshold has been held to since. Same names, so the same frames.
STRICT_HELD_OUT_FONTS = "fonts-held-out-strict"


def design_list(spec: str, seed: int) -> list[str]:
    """Expand ``val`` / ``train`` / ``fonts`` / ``fonts-held-out`` / ``fonts-held-out-strict``
    / a comma list into design names.

    >>> design_list("fonts", 31)[:2]
    ['proc:200:1031', 'proc:201:1031']
    >>> design_list("fonts-held-out", 31)[:4]
    ['proc:200:1031', 'proc:201:1031', 'proc:202:1031', 'proc:212:1031']
    >>> len(design_list("fonts-held-out-strict", 31))
    16
    >>> design_list("proc:5:3,plastic", 0)
    ['proc:5:3', 'plastic']
    """
    decks = {UNSEEN_FONTS: ((), EXTRA_TTF_FAMILIES),
             HELD_OUT_FONTS: ((), HELD_OUT_EXTRA_FAMILIES),
             STRICT_HELD_OUT_FONTS: ((), STRICT_HELD_OUT_FAMILIES),
             "val": (VAL_AISLERIOT, VAL_FAMILIES), "train": (TRAIN_AISLERIOT, TRAIN_FAMILIES)}
    if spec in decks:
        aisleriot, families = decks[spec]
        # one procedural deck per family, its seed the set's
        return [*aisleriot, *(f"proc:{f}:{1000 + seed}" for f in families)]
    return [s for s in spec.split(",") if s]


def write_labelled_set(out: Path, designs: list[str], frames_per_design: int, seed: int,
                       size: tuple[int, int] = (1280, 720), quality: int = 90,
                       clean: bool = False, pitch_jitter: float = 0.0, burst: int = 1,
                       identical_pairs: float = 0.0, tilt_max: float = 40.0) -> int:
    """Render ``frames_per_design`` frames per design into ``out``; returns the frame count.

    ``clean`` renders without glare, blur, noise or JPEG damage (saved at ``quality``), to
    separate what image quality costs from what geometry and design cost; ``pitch_jitter``
    makes the hands' steps uneven (:func:`vision.synth.render_table`); ``burst`` frames are
    written of each scene (module docstring); ``identical_pairs``: the share of hands with two
    identical cards side by side (:func:`vision.synth.random_deal`); ``tilt_max``: the camera's
    largest tilt from straight down (degrees; the same random draws at any value, so a set
    made with a smaller one holds the very scenes of the default set, seen straighter)."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    # the later frames' noise has a stream of its own: the scenes are those made without bursts
    noise_rng = np.random.default_rng([seed, 1])
    n = 0
    for design in designs:
        for k in range(frames_per_design):
            deal = random_deal(rng, identical_pairs=identical_pairs)
            frames, labels = render_burst(deal, rng, burst, noise_rng,
                                          design=design, size=size, clean=clean,
                                          pitch_jitter=pitch_jitter, tilt_max=tilt_max)
            stem = f"{design.replace(':', '-')}_{k:03d}"
            for i, img in enumerate(frames):
                name = f"{stem}.jpg" if i == 0 else f"{stem}.b{i}.jpg"
                cv2.imwrite(str(out / name), img, [cv2.IMWRITE_JPEG_QUALITY, quality])
            (out / f"{stem}.json").write_text(json.dumps(labels) + "\n")
            n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--frames", type=int, default=40, help="frames per design")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--designs", default="val")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("--clean", action="store_true",
                    help="no glare, blur, noise or JPEG damage in the rendering")
    ap.add_argument("--pitch-jitter", type=float, default=0.0,
                    help="uneven steps within a hand (standard deviation, share of the step)")
    ap.add_argument("--burst", type=int, default=1, metavar="K",
                    help="frames of a still camera per scene (fresh sensor noise in each)")
    ap.add_argument("--identical-pairs", type=float, default=0.0, metavar="P",
                    help="share of hands with two identical cards side by side (a multi-deck "
                         "shoe's; 0: one deck, no two cards alike)")
    ap.add_argument("--tilt-max", type=float, default=40.0, metavar="DEG",
                    help="the camera's largest tilt from straight down (degrees; default 40)")
    args = ap.parse_args(argv)
    if not 0.0 <= args.tilt_max <= 60.0:
        ap.error("--tilt-max must be within [0, 60] degrees")
    if not 0.0 <= args.identical_pairs <= 1.0:
        ap.error("--identical-pairs must be within [0, 1]")
    if args.burst < 1:
        ap.error("--burst must be at least 1")
    w, h = (int(v) for v in args.size.split("x"))
    n = write_labelled_set(args.out, design_list(args.designs, args.seed), args.frames,
                           args.seed, (w, h), args.quality, args.clean, args.pitch_jitter,
                           args.burst, args.identical_pairs, args.tilt_max)
    print(f"wrote {n} frames to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
