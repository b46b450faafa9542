"""Dynamic Pays: the configured weights, the round's draw, and exact selection probabilities.

The draw (§ 635b.3(f)) picks how many combinations get increased pays (1-3), which ones
(weighted, without repetition), and for each one increased payout from its paytable list::

    >>> from controller.paytable import Paytable
    >>> table = Paytable.builtin("dynamic1")
    >>> weights = DynamicWeights(
    ...     version="doc", count_weights={1: 1},
    ...     combination_weights={Hand.THREE_OF_A_KIND: 1},
    ...     payout_weights={Hand.THREE_OF_A_KIND: (1,) + (0,) * 9})
    >>> draw = draw_dynamic_pays(weights, table)
    >>> draw.pays_for(Hand.THREE_OF_A_KIND), draw.pays_for(Hand.FOUR_OF_A_KIND)
    (6, None)

The generator is the operating system's (``secrets.SystemRandom``); nothing else in the system
can influence it. Tests pass their own ``random.Random`` to check the distribution.
"""

from __future__ import annotations

import itertools
import json
import random
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from controller.hands import Hand
from controller.paytable import Paytable


class WeightsError(ValueError):
    """Dynamic Pays weights that do not fit the paytable."""


@dataclass(frozen=True)
class DynamicWeights:
    """Configured weights of the draw. Integer weights: the probabilities are exact ratios."""

    version: str
    count_weights: Mapping[int, int]  # how many combinations (1..3) -> weight
    combination_weights: Mapping[Hand, int]  # which combination -> weight
    payout_weights: Mapping[Hand, tuple[int, ...]]  # one weight per choice in the paytable list

    def validate(self, paytable: Paytable) -> None:
        if not self.version:
            raise WeightsError("weights need a version label (recorded with every draw)")
        eligible = paytable.dynamic_hands
        for k, w in self.count_weights.items():
            if k not in (1, 2, 3):
                raise WeightsError(f"count {k}: between one and three combinations are drawn")
            _check_weight(w, f"count {k}")
        if sum(self.count_weights.values()) == 0:
            raise WeightsError("count weights are all zero")
        for hand, w in self.combination_weights.items():
            if hand not in eligible:
                raise WeightsError(f"{hand.value} has no Dynamic Pays in {paytable.name}")
            _check_weight(w, hand.value)
        positive = [h for h, w in self.combination_weights.items() if w > 0]
        max_count = max(k for k, w in self.count_weights.items() if w > 0)
        if len(positive) < max_count:
            raise WeightsError(
                f"up to {max_count} combinations may be drawn but only {len(positive)} have weight"
            )
        for hand in positive:
            choices = paytable.dynamic_choices(hand)
            ws = self.payout_weights.get(hand)
            if ws is None or len(ws) != len(choices):
                raise WeightsError(
                    f"{hand.value}: payout_weights needs one weight per choice {list(choices)}"
                )
            for pays, w in zip(choices, ws, strict=True):
                _check_weight(w, f"{hand.value} {pays} for 1")
            if sum(ws) == 0:
                raise WeightsError(f"{hand.value}: payout weights are all zero")

    def combination_probabilities(self) -> dict[Hand, Fraction]:
        """Exact probability that each combination is among those drawn.

        Weighted sampling without replacement: enumerate every ordered selection (at most
        4 * 3 * 2 sequences) and add up their probabilities.
        """
        hands = [h for h, w in self.combination_weights.items() if w > 0]
        total_count = sum(self.count_weights.values())
        result = {h: Fraction(0) for h in hands}
        for k, wk in self.count_weights.items():
            if wk == 0:
                continue
            p_k = Fraction(wk, total_count)
            for seq in itertools.permutations(hands, k):
                p = p_k
                remaining = sum(self.combination_weights[h] for h in hands)
                for h in seq:
                    p *= Fraction(self.combination_weights[h], remaining)
                    remaining -= self.combination_weights[h]
                for h in seq:
                    result[h] += p
        return result

    def expected_increased_pay(self, hand: Hand, paytable: Paytable) -> Fraction:
        """Mean of the increased payout of ``hand`` given that it is drawn."""
        ws = self.payout_weights[hand]
        choices = paytable.dynamic_choices(hand)
        return Fraction(sum(p * w for p, w in zip(choices, ws, strict=True)), sum(ws))

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "count_weights": {str(k): v for k, v in sorted(self.count_weights.items())},
            "combination_weights": {h.value: w for h, w in self.combination_weights.items()},
            "payout_weights": {h.value: list(ws) for h, ws in self.payout_weights.items()},
        }


def _check_weight(w: object, what: str) -> None:
    if not isinstance(w, int) or isinstance(w, bool) or w < 0:
        raise WeightsError(f"weight of {what} must be a whole number >= 0, got {w!r}")


@dataclass(frozen=True)
class DynamicDraw:
    """The Dynamic Pays of one round: the selected combinations and their increased pays."""

    selections: tuple[tuple[Hand, int], ...]
    weights_version: str

    def pays_for(self, hand: Hand) -> int | None:
        for h, pays in self.selections:
            if h is hand:
                return pays
        return None

    def to_json(self) -> str:
        return json.dumps({
            "weights_version": self.weights_version,
            "selections": [{"hand": h.value, "pays": p} for h, p in self.selections],
        }, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> DynamicDraw:
        doc = json.loads(text)
        return cls(
            tuple((Hand(s["hand"]), int(s["pays"])) for s in doc["selections"]),
            doc["weights_version"],
        )

    def describe(self) -> list[str]:
        return [f"{h.label}: {p:,} for 1" for h, p in self.selections]


def _weighted_index(rng: random.Random, weights: Sequence[int]) -> int:
    # Integer arithmetic only: randrange over the total weight, then walk the cumulative sums.
    r = rng.randrange(sum(weights))
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    raise AssertionError("unreachable: r < sum(weights)")


def draw_dynamic_pays(weights: DynamicWeights, paytable: Paytable,
                      rng: random.Random | None = None) -> DynamicDraw:
    """Draw one round's Dynamic Pays. ``rng`` defaults to the OS's cryptographic generator."""
    gen = rng if rng is not None else secrets.SystemRandom()
    counts = sorted(weights.count_weights)
    k = counts[_weighted_index(gen, [weights.count_weights[c] for c in counts])]
    pool = [h for h in paytable.dynamic_hands if weights.combination_weights.get(h, 0) > 0]
    chosen: list[Hand] = []
    for _ in range(k):
        i = _weighted_index(gen, [weights.combination_weights[h] for h in pool])
        chosen.append(pool.pop(i))
    chosen.sort(key=lambda h: -h.rank)
    selections = []
    for hand in chosen:
        choices = paytable.dynamic_choices(hand)
        selections.append((hand, choices[_weighted_index(gen, weights.payout_weights[hand])]))
    return DynamicDraw(tuple(selections), weights.version)
