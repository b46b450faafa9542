"""Suit symbols of random geometry, for procedural decks that do not all share one shape.

:func:`vision.procedural.draw_suit` draws one fixed shape per suit (only its width varies),
while printed decks differ in exactly what separates a club from a spade and a heart from a
diamond: lobe size and spacing, concave or bulging sides, thin or flared stems, pointed or
blunt tips. :class:`SuitShapes` draws those proportions once per deck; each suit is the union
of a few filled outlines (circles, quadratic curves), normalised to the height asked for.

>>> import numpy as np
>>> shapes = SuitShapes.random(np.random.default_rng(0))
>>> img = np.full((40, 40, 3), 255, np.uint8)
>>> shapes.draw(img, "H", 20, 20, 30, (0, 0, 200))
>>> ys, xs = np.nonzero(img[..., 2] < 255)     # ink: red lowers the blue channel
>>> int(ys.max() - ys.min()) in range(28, 33)  # 30 px tall, whatever the proportions
True
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

_CIRCLE = np.stack([np.cos(np.linspace(0, 2 * np.pi, 48, endpoint=False)),
                    np.sin(np.linspace(0, 2 * np.pi, 48, endpoint=False))], 1)


def _circle(cx: float, cy: float, r: float) -> np.ndarray:
    return _CIRCLE * r + (cx, cy)


def _curve(p0: tuple[float, float], ctrl: tuple[float, float], p1: tuple[float, float],
           n: int = 16) -> np.ndarray:
    """A quadratic Bezier curve from ``p0`` to ``p1`` (``n`` points, both ends included)."""
    t = np.linspace(0.0, 1.0, n)[:, None]
    a, c, b = (np.asarray(v, np.float64) for v in (p0, ctrl, p1))
    return (1 - t) ** 2 * a + 2 * (1 - t) * t * c + t ** 2 * b


def _bulged(p0: tuple[float, float], p1: tuple[float, float], bulge: float) -> np.ndarray:
    """The side from ``p0`` to ``p1`` bowed ``bulge`` (times its length) to its left as
    drawn from ``p0`` (negative: to its right)."""
    a, b = np.asarray(p0, np.float64), np.asarray(p1, np.float64)
    d = b - a
    ctrl = (a + b) / 2 + bulge * np.array([d[1], -d[0]])
    return _curve(tuple(a), tuple(ctrl), tuple(b))


@dataclass(frozen=True)
class SuitShapes:
    """One deck's suit proportions (unit: the lobe layout before normalising).

    Hearts and spades: lobe radius ``lobe``, lobe centres ``lobe_gap`` either side of the
    axis, sides bowed ``side_bulge`` (negative: drawn in, a sharper tip). Diamonds: half-width
    ``diamond_width`` (height 1), sides bowed ``diamond_bulge`` (negative: concave, a
    four-pointed star). Clubs: leaf radius ``leaf``, side leaves ``leaf_spread`` out and
    ``leaf_drop`` down from the top one. Spades and clubs: stem ``stem_top`` wide at the
    join, ``stem_foot`` at the foot, ``stem_len`` long, sides bowed ``stem_curve``.
    ``aspect`` widens or narrows every suit alike.
    """

    lobe: float
    lobe_gap: float
    side_bulge: float
    diamond_width: float
    diamond_bulge: float
    leaf: float
    leaf_spread: float
    leaf_drop: float
    stem_top: float
    stem_foot: float
    stem_len: float
    stem_curve: float
    aspect: float

    @classmethod
    def random(cls, rng: np.random.Generator) -> SuitShapes:
        """Proportions drawn over the range printed decks use (the fixed shapes of
        :func:`vision.procedural.draw_suit` lie about in its middle)."""
        u = rng.uniform
        return cls(lobe=u(0.38, 0.56), lobe_gap=u(0.32, 0.52), side_bulge=u(-0.12, 0.16),
                   diamond_width=u(0.55, 0.85), diamond_bulge=u(-0.22, 0.1),
                   leaf=u(0.3, 0.46), leaf_spread=u(0.38, 0.58), leaf_drop=u(0.45, 0.75),
                   stem_top=u(0.04, 0.14), stem_foot=u(0.16, 0.42), stem_len=u(0.35, 0.7),
                   stem_curve=u(-0.2, 0.05), aspect=u(0.85, 1.12))

    def outlines(self, suit: str) -> list[np.ndarray]:
        """The filled outlines of ``suit`` (``"S"``, ``"H"``, ``"D"``, ``"C"``), point up
        for spades and down for hearts, normalised to y in [-1, 1] and centred on x = 0."""
        if suit == "D":
            w = self.diamond_width
            tips = [(0.0, -1.0), (w, 0.0), (0.0, 1.0), (-w, 0.0)]
            # the tips run clockwise on screen (y down): left of each side is outwards
            parts = [np.concatenate([_bulged(tips[i], tips[(i + 1) % 4], self.diamond_bulge)
                                     for i in range(4)])]
        elif suit in "HS":
            parts = self._heart()
            if suit == "S":  # a heart turned over, on a stem
                parts = [p * (1, -1) for p in parts]
                parts.append(self._stem(parts))
        elif suit == "C":
            r, dx, dy = self.leaf, self.leaf_spread, self.leaf_drop
            parts = [_circle(0, -dy / 2, r), _circle(-dx, dy / 2, r), _circle(dx, dy / 2, r),
                     _circle(0, dy / 4, r * 0.6)]
            parts.append(self._stem(parts))
        else:
            raise ValueError(f"unknown suit {suit!r}")
        pts = np.concatenate(parts)
        lo, hi = pts.min(0), pts.max(0)
        scale = 2.0 / (hi[1] - lo[1])
        centre = np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2])
        return [(p - centre) * scale * (self.aspect, 1.0) for p in parts]

    def _heart(self) -> list[np.ndarray]:
        """A heart, point down: two lobes and the body down to the tip."""
        r, gap = self.lobe, self.lobe_gap
        tip = (0.0, 1.0 + r)
        left, right = (-gap - r * 0.97, r * 0.25), (gap + r * 0.97, r * 0.25)
        body = np.concatenate([_bulged(left, tip, -self.side_bulge),
                               _bulged(tip, right, -self.side_bulge),
                               [(gap, 0.0), (-gap, 0.0)]])
        return [_circle(-gap, 0, r), _circle(gap, 0, r), body]

    def _stem(self, parts: list[np.ndarray]) -> np.ndarray:
        """The stem under the lowest point of ``parts``' lobes, centred on x = 0."""
        bottom = max(float(p[:, 1].max()) for p in parts[:3])
        join = bottom - self.stem_len * 0.6
        foot = bottom + self.stem_len * 0.4
        a, b = (-self.stem_top, join), (self.stem_top, join)
        c, d = (self.stem_foot, foot), (-self.stem_foot, foot)
        return np.concatenate([[a, b], _bulged(b, c, self.stem_curve), [d],
                               _bulged(d, a, self.stem_curve)[1:]])

    def draw(self, img: np.ndarray, suit: str, cx: float, cy: float, size: float,
             color: tuple[int, ...], flip: bool = False) -> None:
        """Fill ``suit`` ``size`` pixels tall centred at (cx, cy) on ``img`` (antialiased);
        ``flip`` turns it upside down."""
        s = size / 2.0
        sgn = -1.0 if flip else 1.0
        polys = [np.round((p * (s, sgn * s) + (cx, cy)) * 16).astype(np.int32)
                 for p in self.outlines(suit)]
        for p in polys:  # one call per outline: fillPoly's even-odd rule would cut overlaps
            cv2.fillPoly(img, [p], color, cv2.LINE_AA, shift=4)
