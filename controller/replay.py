"""Replaying a round from the record: the timeline of its audit records, both card sources for
every card, and a re-derivation of its hands and payouts from the recorded cards and draw,
checked against what was paid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from controller.books import camera_reader
from controller.cards import Card
from controller.config import TableConfig
from controller.dynamic import DynamicDraw
from controller.hands import evaluate
from controller.money import dollars, from_text
from controller.rounds import spot_order
from controller.settlement import settle
from controller.storage import Store


@dataclass
class Replay:
    round_id: int
    timeline: list[dict[str, Any]] = field(default_factory=list)
    cards: list[dict[str, Any]] = field(default_factory=list)
    hands: dict[int, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    #: The camera's reader when it read this round (the last ``camera_started`` record before
    #: the round's own), ``None`` where no camera was recorded.
    camera_reader: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round_id, "timeline": self.timeline, "cards": self.cards,
                "hands": {str(k): v for k, v in self.hands.items()}, "problems": self.problems,
                "camera_reader": self.camera_reader, "consistent": not self.problems}


def replay_round(store: Store, cfg: TableConfig, round_id: int) -> Replay:
    db = store.db
    row = db.execute("SELECT * FROM rounds WHERE id = ?", (round_id,)).fetchone()
    if row is None:
        raise ValueError(f"no round {round_id} in {store.path}")
    out = Replay(round_id)
    meter_at_verify: Fraction | None = None
    for a in db.execute("SELECT at, actor, kind, payload FROM audit WHERE round_id = ? "
                        "ORDER BY id", (round_id,)):
        payload = json.loads(a["payload"])
        out.timeline.append({"at": a["at"], "actor": a["actor"], "kind": a["kind"],
                             "detail": payload})
        if a["kind"] in ("wagers_verified", "resolved") and "meter" in payload:
            meter_at_verify = from_text(payload["meter"])
    out.camera_reader = camera_reader(store, round_id)
    dealt_in = json.loads(row["dealt_in"])
    order = spot_order(dealt_in)
    cards = [dict(c) for c in db.execute("SELECT * FROM cards WHERE round_id = ? "
                                         "ORDER BY position", (round_id,))]
    by_spot: dict[str, str] = {}
    for i, c in enumerate(cards):
        # Dealing order re-applied to the recorded sequence must give the recorded spots.
        expected = order[i] if i < len(order) else "extra"
        if c["spot"] != expected:
            out.problems.append(f"card {i} ({c['code']}) recorded at {c['spot']}, dealing "
                                f"order gives {expected}")
        if c["spot"] != "extra":
            by_spot[c["spot"]] = c["code"]
        out.cards.append({"position": c["position"], "spot": c["spot"], "shoe": c["code"],
                          "camera": c["camera_code"], "source": c["source"],
                          "shoe_seq": c["shoe_seq"], "millis": c["millis"]})
    draw = DynamicDraw.from_json(row["draw"]) if row["draw"] else None
    wagers = {r["seat"]: r["amount"] for r in db.execute(
        "SELECT seat, amount FROM wagers WHERE round_id = ?", (round_id,))}
    results = {r["seat"]: dict(r) for r in db.execute(
        "SELECT * FROM results WHERE round_id = ?", (round_id,))}
    if row["state"] != "closed" or "dealer:hole" not in by_spot:
        return out
    meter_winners = []
    hands = {}
    for seat in sorted(wagers):
        codes = [by_spot.get(f"seat{seat}:1"), by_spot.get(f"seat{seat}:2"),
                 by_spot.get("dealer:up"), by_spot.get("dealer:hole")]
        if None in codes:
            continue
        hand = evaluate([Card.parse(c) for c in codes if c], cfg.shoe)
        hands[seat] = (codes, hand)
        if cfg.paytable.pays(hand) == "meter":
            meter_winners.append(seat)
    for seat, (codes, hand) in hands.items():
        pay = settle(hand, wagers[seat], cfg.paytable, draw,
                     meter_at_verify if meter_at_verify is not None else Fraction(0),
                     max(1, len(meter_winners)))
        stored = results.get(seat)
        out.hands[seat] = {"cards": codes, "hand": hand.value,
                           "payout": None if pay is None else dollars(pay.amount),
                           "paid": None if stored is None else dollars(from_text(stored["amount"]))}
        if pay is None and stored is not None:
            out.problems.append(f"seat {seat}: paid {stored['hand']} but the cards make a loss")
        elif pay is not None and stored is None:
            out.problems.append(f"seat {seat}: {hand.value} was never paid")
        elif pay is not None and stored is not None and (
                pay.amount != int(from_text(stored["amount"])) or hand.value != stored["hand"]):
            out.problems.append(f"seat {seat}: record says {stored['hand']} "
                                f"{dollars(from_text(stored['amount']))}, replay gives "
                                f"{hand.value} {dollars(pay.amount)}")
    return out
