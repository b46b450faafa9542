"""A badly set camera, applied to a frame: over- and underexposure, haze, a contrast curve, a
white balance set for another light, hard JPEG, sensor noise, a softer lens, vignetting, a
camera turned a quarter.

A condition is a short string, ``KIND:ARG``:

* ``exposure:K``: every level times K, saturating;
* ``haze:A``: each level drawn a share A of the way to grey 170 (a fogged dome, flare);
* ``gamma:G``: levels through a power G (a camera's contrast curve);
* ``cast:NAME`` or ``cast:B,G,R``: channels scaled as a white balance set for another light
  would (:data:`CASTS` names five);
* ``jpeg:Q``: JPEG at quality Q; ``noise:S``: Gaussian noise of sigma S levels;
* ``soft:S``: the frame sampled down to S of its size and up again (a softer lens);
* ``vignette:V``: the corners darkened by V; ``rotate:90``: the camera turned a quarter;
* ``none``: the frame as it is.

``benchmarks/camera_conditions.py`` reads labelled frames under fixed conditions;
:func:`random_condition` draws one for a training scene (``vision.train --camera-share``).
"""

from __future__ import annotations

import cv2
import numpy as np

#: White balances set for another light: the (B, G, R) factors.
CASTS = {
    "tungsten": (0.55, 0.8, 1.0),    # tungsten light, daylight balance
    "warm": (0.7, 0.95, 1.1),
    "cool": (1.15, 1.0, 0.7),
    "cool2": (1.0, 0.9, 0.6),
    "green": (0.8, 1.0, 0.8),        # fluorescent
}


def _cast_factors(arg: str) -> tuple[float, float, float]:
    if arg in CASTS:
        return CASTS[arg]
    parts = arg.split(",")
    if len(parts) != 3:
        raise ValueError(f"unknown cast {arg!r}: a name of CASTS or B,G,R factors")
    b, g, r = (float(p) for p in parts)
    return b, g, r


def changed(img: np.ndarray, condition: str, rng: np.random.Generator | None = None
            ) -> np.ndarray:
    """``img`` (BGR, uint8) under ``condition`` (module docstring); ``noise`` draws from
    ``rng`` (by default a generator seeded 0, so that a benchmark's frames are the same on
    every run).

    >>> img = np.full((4, 4, 3), 100, np.uint8)
    >>> changed(img, "exposure:1.5")[0, 0].tolist(), changed(img, "cast:tungsten")[0, 0].tolist()
    ([150, 150, 150], [55, 80, 100])
    >>> changed(img, "haze:0.5")[0, 0].tolist(), changed(img, "none") is img
    ([135, 135, 135], True)
    >>> changed(img, "cast:0.5,1,1.2")[0, 0].tolist()
    [50, 100, 120]
    """
    kind, _, arg = condition.partition(":")
    if kind == "none":
        return img
    f = img.astype(np.float32)
    if kind == "exposure":
        out = f * float(arg)
    elif kind == "haze":
        out = f * (1 - float(arg)) + 170 * float(arg)
    elif kind == "gamma":
        out = 255 * (f / 255) ** float(arg)
    elif kind == "cast":
        out = f * np.array(_cast_factors(arg), np.float32)
    elif kind == "noise":
        out = f + (rng or np.random.default_rng(0)).normal(0, float(arg), f.shape)
    elif kind == "vignette":
        h, w = img.shape[:2]
        y, x = np.mgrid[0:h, 0:w]
        r = ((x - w / 2) ** 2 + (y - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
        out = f * (1 - float(arg) * r)[..., None]
    elif kind == "jpeg":
        _, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(arg)])
        return cv2.imdecode(buf, cv2.IMREAD_COLOR)
    elif kind == "soft":
        h, w = img.shape[:2]
        small = cv2.resize(img, (round(w * float(arg)), round(h * float(arg))),
                           interpolation=cv2.INTER_AREA)
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    elif kind == "rotate" and arg == "90":
        return cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
    else:
        raise ValueError(f"unknown condition {condition!r}")
    return np.clip(out, 0, 255).astype(np.uint8)


#: What :func:`random_condition` draws from, each kind equally often. Ranges reach past the
#: renderer's own camera (exposure 0.6-1.2, white balance 0.85-1.15 a channel, JPEG 35-95,
#: noise 0-7), to about where the fixed conditions of ``benchmarks/camera_conditions.py``
#: cost the bundled reader 5-26 points.
RANDOM_KINDS = ("exposure", "haze", "gamma", "cast", "jpeg", "noise", "soft")


def random_condition(rng: np.random.Generator) -> str:
    """A camera condition for one training scene: one of :data:`RANDOM_KINDS`, its strength
    drawn (a cast: each channel 0.55-1 of the brightest, so up to 1.8 between channels).

    >>> import numpy as np
    >>> c = random_condition(np.random.default_rng(3))
    >>> c.partition(":")[0] in RANDOM_KINDS
    True
    >>> changed(np.zeros((2, 2, 3), np.uint8), c).shape
    (2, 2, 3)
    """
    kind = str(rng.choice(RANDOM_KINDS))
    if kind == "exposure":
        return f"exposure:{rng.uniform(1.15, 1.9):.3f}"
    if kind == "haze":
        return f"haze:{rng.uniform(0.15, 0.55):.3f}"
    if kind == "gamma":
        g = rng.uniform(0.55, 0.8) if rng.random() < 0.5 else rng.uniform(1.3, 1.7)
        return f"gamma:{g:.3f}"
    if kind == "cast":
        f = rng.uniform(0.55, 1.0, 3)
        f /= f.max()
        return "cast:" + ",".join(f"{v:.3f}" for v in f)
    if kind == "jpeg":
        return f"jpeg:{int(rng.integers(12, 36))}"
    if kind == "noise":
        return f"noise:{rng.uniform(7, 14):.2f}"
    return f"soft:{rng.uniform(0.55, 0.8):.3f}"
