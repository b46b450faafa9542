"""The round state machine of a Monster Match Dynamic table (§ 635b.3(e)-(g)).

::

    bets_open -> locked -> verified -> drawn -> dealing -> revealed -> evaluated
              -> flagged -> paid -> closed            (evaluated -> closed when nobody won)
    any open state -> held -> (floorperson resolves) -> the state it was held in

Every event is checked against the current state; one that is not allowed is refused with a
reason (:class:`IllegalEvent`) and the refusal is recorded. An accepted event and everything it
causes (ledger entries, audit records) is one transaction. Steps that need nobody (the Dynamic
Pays draw after verification, evaluation after the reveal, closing after the last payment) run
as their own transactions right after, and again at start-up: a restart resumes exactly where
the last committed step left off, with the same wagers and the same draw.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any

from controller import meter
from controller.auth import Actor, Role
from controller.cards import Card, CardCodeError
from controller.config import TableConfig
from controller.dynamic import DynamicDraw, draw_dynamic_pays
from controller.hands import Hand, evaluate
from controller.money import dollars, from_text, to_text, whole_cents
from controller.settlement import settle
from controller.storage import LedgerEntry, Store


class State(Enum):
    BETS_OPEN = "bets_open"
    LOCKED = "locked"
    VERIFIED = "verified"
    DRAWN = "drawn"
    DEALING = "dealing"
    REVEALED = "revealed"
    EVALUATED = "evaluated"
    FLAGGED = "flagged"
    PAID = "paid"
    CLOSED = "closed"
    HELD = "held"


#: States of a round whose hole card has been turned over (what may then be shown, and the
#: live table's second camera check).
AFTER_REVEAL = (State.REVEALED, State.EVALUATED, State.FLAGGED, State.PAID, State.CLOSED)


def effective_state(state: State, held_from: State | None) -> State:
    """The step a round is at: its state, or for a held round the state it was held from.

    >>> effective_state(State.HELD, State.REVEALED), effective_state(State.DEALING, None)
    (<State.REVEALED: 'revealed'>, <State.DEALING: 'dealing'>)
    """
    return held_from if state is State.HELD and held_from else state


class IllegalEvent(Exception):
    """An event the current state does not allow; nothing of it was applied."""


DEALER_SIDE = "dealer"
SYSTEM = Actor("controller", Role.ADMINISTRATOR)


def spot_order(dealt_in: Sequence[int]) -> list[str]:
    """Where the first cards of a round go, in dealing order.

    >>> spot_order([1, 4])
    ['seat1:1', 'seat4:1', 'dealer:up', 'seat1:2', 'seat4:2', 'dealer:hole']
    """
    seats = sorted(dealt_in)
    return ([f"seat{s}:1" for s in seats] + ["dealer:up"] + [f"seat{s}:2" for s in seats]
            + ["dealer:hole"])


@dataclass
class Round:
    id: int
    state: State
    held_from: State | None
    hold_reason: str | None
    dealt_in: list[int]
    dealer_count: int | None
    draw: DynamicDraw | None
    shoe_id: int | None
    wagers: dict[int, int] = field(default_factory=dict)  # seat -> cents
    cards: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def hand_cards(self) -> dict[str, str]:
        return {c["spot"]: c["code"] for c in self.cards if c["spot"] not in ("extra", "burn")}

    @property
    def hole_dealt(self) -> bool:
        return "dealer:hole" in self.hand_cards

    @property
    def effective_state(self) -> State:
        return effective_state(self.state, self.held_from)


LightCallback = Callable[[list[tuple[int, str, str]]], None]


class Table:
    """One table's controller over one :class:`Store`."""

    def __init__(self, store: Store, config: TableConfig, rng: random.Random | None = None,
                 clock: Callable[[], float] = time.time,
                 on_lights: LightCallback | None = None,
                 on_change: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.cfg = config
        self._rng = rng  # None: the OS's cryptographic generator (tests pass their own)
        self.clock = clock
        self.on_lights = on_lights
        self.on_change = on_change
        self.main_on: set[int] = set()  # MAIN sensors, live from the table board
        self._init_books()
        self.advance()

    # -- set-up -------------------------------------------------------------------------------
    def _init_books(self) -> None:
        identity = {"table": self.cfg.table.id, "wager_cents": self.cfg.table.wager_cents,
                    "seed_cents": self.cfg.seed_cents, "decks": self.cfg.table.decks,
                    "paytable": self.cfg.paytable.name}
        stored = self.store.get_meta("table_identity")
        if stored is None:
            with self.store.transaction():
                self.store.set_meta("table_identity", json.dumps(identity, sort_keys=True))
                for entry in meter.seed_entries(self.cfg.seed_cents):
                    self.store.append_ledger(None, entry, self.clock())
                self.store.append_audit(None, SYSTEM.name, "books_opened", identity)
        elif json.loads(stored) != identity:
            raise IllegalEvent(
                f"this database belongs to a table set up as {stored}; the configuration says "
                f"{json.dumps(identity, sort_keys=True)}. Use another database file.")

    # -- reading ------------------------------------------------------------------------------
    def current(self) -> Round | None:
        row = self.store.db.execute(
            "SELECT * FROM rounds WHERE state != 'closed' ORDER BY id DESC LIMIT 1").fetchone()
        return None if row is None else self._load(row)

    def round(self, round_id: int) -> Round:
        row = self.store.db.execute("SELECT * FROM rounds WHERE id = ?", (round_id,)).fetchone()
        if row is None:
            raise IllegalEvent(f"no round {round_id}")
        return self._load(row)

    def _load(self, row: Any) -> Round:
        db = self.store.db
        rid = row["id"]
        return Round(
            id=rid, state=State(row["state"]),
            held_from=State(row["held_from"]) if row["held_from"] else None,
            hold_reason=row["hold_reason"], dealt_in=json.loads(row["dealt_in"]),
            dealer_count=row["dealer_count"],
            draw=DynamicDraw.from_json(row["draw"]) if row["draw"] else None,
            shoe_id=row["shoe_id"],
            wagers={r["seat"]: r["amount"] for r in db.execute(
                "SELECT seat, amount FROM wagers WHERE round_id = ? ORDER BY seat", (rid,))},
            cards=[dict(r) for r in db.execute(
                "SELECT * FROM cards WHERE round_id = ? ORDER BY position", (rid,))],
            results=[dict(r) for r in db.execute(
                "SELECT * FROM results WHERE round_id = ? ORDER BY seat", (rid,))],
            data=json.loads(row["data"]),
        )

    @property
    def meter(self) -> Fraction:
        return self.store.balance("meter")

    @property
    def reserve(self) -> Fraction:
        return self.store.balance("reserve")

    def rounds_completed(self) -> int:
        return int(self.store.db.execute(
            "SELECT COUNT(*) FROM rounds WHERE state = 'closed'").fetchone()[0])

    # -- the event gate -----------------------------------------------------------------------
    def _refuse(self, rnd: Round | None, actor: Actor, event: str, reason: str) -> IllegalEvent:
        with self.store.transaction():
            self.store.append_audit(rnd.id if rnd else None, str(actor), "refused",
                                    {"event": event, "reason": reason,
                                     "state": rnd.state.value if rnd else None}, self.clock())
        return IllegalEvent(f"{event} refused: {reason}")

    def _require(self, event: str, actor: Actor, *states: State) -> Round:
        rnd = self.current()
        if rnd is None:
            raise self._refuse(None, actor, event, "no round is open")
        if rnd.state not in states:
            allowed = ", ".join(s.value for s in states)
            why = (f"round {rnd.id} is held ({rnd.hold_reason}) until a floorperson resolves it"
                   if rnd.state is State.HELD else
                   f"round {rnd.id} is {rnd.state.value}; {event} needs {allowed}")
            raise self._refuse(rnd, actor, event, why)
        return rnd

    def _require_role(self, event: str, actor: Actor, rnd: Round | None, *roles: Role) -> None:
        if actor.role not in roles:
            names = " or ".join(r.value for r in roles)
            raise self._refuse(rnd, actor, event, f"{actor} is not a {names}")

    def _set_state(self, rnd: Round, state: State, actor: Actor, kind: str,
                   payload: dict[str, Any] | None = None, **columns: Any) -> None:
        sets = ", ".join(f"{k} = ?" for k in ["state", *columns])
        self.store.db.execute(f"UPDATE rounds SET {sets} WHERE id = ?",
                              (state.value, *columns.values(), rnd.id))
        body = {"from": rnd.state.value, "to": state.value, **(payload or {})}
        self.store.append_audit(rnd.id, str(actor), kind, body, self.clock())
        rnd.state = state

    def _ledger(self, rnd: Round | None, entries: list[LedgerEntry]) -> None:
        for e in entries:
            self.store.append_ledger(rnd.id if rnd else None, e, self.clock())

    def _changed(self, what: str) -> None:
        if self.on_change:
            self.on_change(what)

    # -- events: bets -------------------------------------------------------------------------
    def open_round(self, actor: Actor = SYSTEM) -> int:
        rnd = self.current()
        if rnd is not None:
            raise self._refuse(rnd, actor, "open_round", f"round {rnd.id} is still open")
        with self.store.transaction() as db:
            cur = db.execute("INSERT INTO rounds(state, opened, shoe_id) VALUES(?,?,?)",
                             (State.BETS_OPEN.value, self.clock(), self._shoe_id()))
            rid = int(cur.lastrowid or 0)
            self.store.append_audit(rid, str(actor), "round_opened", {"round": rid}, self.clock())
        self._changed("round_opened")
        return rid

    def set_main(self, seat: int, on: bool) -> None:
        """The MAIN sensor of ``seat`` (who is dealt in). Not durable: the board re-sends it."""
        self._check_seat(seat)
        (self.main_on.add if on else self.main_on.discard)(seat)

    def place_wager(self, seat: int, actor: Actor = SYSTEM) -> None:
        """A progressive wager sensed at ``seat``: recognised only while bets are open and only
        where the main wager is in place (§ 635b.3(d))."""
        rnd = self._require("wager", actor, State.BETS_OPEN)
        self._check_seat(seat)
        if seat not in self.main_on:
            raise self._refuse(rnd, actor, "wager", f"seat {seat} has no main wager in place")
        if seat in rnd.wagers:
            raise self._refuse(rnd, actor, "wager", f"seat {seat} already has its wager")
        with self.store.transaction() as db:
            db.execute("INSERT INTO wagers VALUES(?,?,?,?)",
                       (rnd.id, seat, self.cfg.table.wager_cents, self.clock()))
            self.store.append_audit(rnd.id, str(actor), "wager_accepted",
                                    {"seat": seat, "amount": self.cfg.table.wager_cents},
                                    self.clock())
        self._changed("wager")

    def withdraw_wager(self, seat: int, actor: Actor = SYSTEM) -> None:
        rnd = self._require("withdraw", actor, State.BETS_OPEN)
        if seat not in rnd.wagers:
            raise self._refuse(rnd, actor, "withdraw", f"seat {seat} has no wager")
        with self.store.transaction() as db:
            db.execute("DELETE FROM wagers WHERE round_id = ? AND seat = ?", (rnd.id, seat))
            self.store.append_audit(rnd.id, str(actor), "wager_withdrawn", {"seat": seat},
                                    self.clock())
        self._changed("wager")

    def lockout(self, actor: Actor = SYSTEM) -> list[int]:
        """"No more bets": no further wager is recognised. Returns the wagering seats."""
        rnd = self._require("lockout", actor, State.BETS_OPEN)
        dealt_in = sorted(self.main_on | set(rnd.wagers))
        with self.store.transaction():
            self._set_state(rnd, State.LOCKED, actor, "locked_out",
                            {"wagers": sorted(rnd.wagers), "dealt_in": dealt_in},
                            dealt_in=json.dumps(dealt_in))
        self._changed("locked")
        return sorted(rnd.wagers)

    def chip_count(self, count: int, actor: Actor) -> bool:
        """The dealer's count of the collected wager chips (§ 635b.3(e)). A count that does not
        equal the wagers accepted holds the round. Returns True when verified."""
        rnd = self._require("chip_count", actor, State.LOCKED)
        self._require_role("chip_count", actor, rnd, Role.DEALER)
        if not isinstance(count, int) or count < 0:
            raise self._refuse(rnd, actor, "chip_count", "count must be a whole number ≥ 0")
        accepted = len(rnd.wagers)
        with self.store.transaction():
            self.store.db.execute("UPDATE rounds SET dealer_count = ? WHERE id = ?",
                                  (count, rnd.id))
            if count == accepted:
                self._verify(rnd, actor, count)
            else:
                self._hold(rnd, actor, f"chip count {count} does not equal the {accepted} "
                                       "wagers accepted")
        self._changed("chip_count")
        self.advance()
        return count == accepted

    def _verify(self, rnd: Round, actor: Actor, count: int) -> None:
        pt = self.cfg.paytable
        for seat, amount in sorted(rnd.wagers.items()):
            self._ledger(rnd, meter.wager_entries(amount, pt.increment_rate, pt.reserve_rate,
                                                  seat))
        self._set_state(rnd, State.VERIFIED, actor, "wagers_verified",
                        {"count": count, "meter": to_text(self.meter),
                         "reserve": to_text(self.reserve)})

    # -- holds ------------------------------------------------------------------------------
    def _hold(self, rnd: Round, actor: Actor, reason: str) -> None:
        held_from = rnd.held_from if rnd.state is State.HELD else rnd.state
        self._set_state(rnd, State.HELD, actor, "held", {"reason": reason},
                        held_from=held_from.value, hold_reason=reason)

    def hold(self, reason: str, actor: Actor = SYSTEM) -> None:
        """Hold the open round (shoe error, shoe/camera disagreement, floorperson call)."""
        rnd = self.current()
        if rnd is None:
            raise self._refuse(None, actor, "hold", "no round is open")
        with self.store.transaction():
            self._hold(rnd, actor, reason)
        self._changed("held")

    def resolve(self, actor: Actor, action: str, note: str) -> None:
        """A floorperson resolves a held round: ``continue`` (from where it was held; after a
        chip-count mismatch this means the count was corrected and verified) or ``void`` (only
        before the draw: the round closes, no wager counted, chips returned)."""
        rnd = self._require("resolve", actor, State.HELD)
        self._require_role("resolve", actor, rnd, Role.FLOORPERSON)
        if not note.strip():
            raise self._refuse(rnd, actor, "resolve", "a resolution needs a note")
        held_from = rnd.held_from or State.BETS_OPEN
        if action not in ("continue", "void"):
            raise self._refuse(rnd, actor, "resolve", f"unknown action {action!r}")
        if action == "void" and (rnd.draw is not None
                                 or held_from not in (State.BETS_OPEN, State.LOCKED)):
            raise self._refuse(rnd, actor, "resolve", "only a round held before its wagers "
                               "were verified can be voided")
        with self.store.transaction():
            payload = {"action": action, "note": note, "reason": rnd.hold_reason}
            if action == "void":
                self._set_state(rnd, State.CLOSED, actor, "resolved_void", payload,
                                held_from=None, hold_reason=None, closed=self.clock())
                self.store.db.execute("UPDATE rounds SET data = ? WHERE id = ?",
                                      (json.dumps({"void": True}), rnd.id))
            elif action == "continue":
                self._set_state(rnd, held_from, actor, "resolved", payload,
                                held_from=None, hold_reason=None)
                if held_from is State.LOCKED:
                    self._verify(rnd, actor, len(rnd.wagers))
        self._changed("resolved")
        self.advance()

    # -- cards --------------------------------------------------------------------------------
    def _shoe_id(self) -> int | None:
        row = self.store.db.execute("SELECT MAX(id) FROM shoes").fetchone()
        return row[0]

    def shuffle(self, decks: int, data: dict[str, Any] | None = None,
                actor: Actor = SYSTEM) -> int:
        """A new shoe is loaded; its first card is the burn card."""
        with self.store.transaction() as db:
            payload = {"decks": decks, **(data or {})}
            cur = db.execute("INSERT INTO shoes(decks, opened, data) VALUES(?,?,?)",
                             (decks, self.clock(), json.dumps(payload)))
            shoe_id = int(cur.lastrowid or 0)
            self.store.set_meta("burn_pending", "1")
            rnd = self.current()
            if rnd is not None and rnd.state in (State.BETS_OPEN, State.LOCKED):
                db.execute("UPDATE rounds SET shoe_id = ? WHERE id = ?", (shoe_id, rnd.id))
            self.store.append_audit(rnd.id if rnd else None, str(actor), "shuffle",
                                    {"shoe": shoe_id, **payload}, self.clock())
            if decks != self.cfg.table.decks and rnd is not None:
                self._hold(rnd, actor, f"shoe reports {decks} decks; the table deals "
                                       f"{self.cfg.table.decks}")
        return shoe_id

    def cards_of_shoe(self, shoe_id: int) -> int:
        return int(self.store.db.execute(
            "SELECT COUNT(*) FROM cards c JOIN rounds r ON r.id = c.round_id "
            "WHERE r.shoe_id = ?", (shoe_id,)).fetchone()[0]) + int(
            self.store.get_meta(f"burned_{shoe_id}") or 0)

    def deal(self, code: str, source: str = "shoe", seq: int | None = None,
             millis: int | None = None, actor: Actor = SYSTEM) -> str:
        """A card drawn from the shoe. Returns the spot it was assigned to."""
        try:
            card = Card.parse(code)
        except CardCodeError as exc:
            rnd = self.current()
            raise self._refuse(rnd, actor, "deal", str(exc)) from None
        if self.store.get_meta("burn_pending") == "1":
            with self.store.transaction():
                self.store.set_meta("burn_pending", "0")
                shoe = self._shoe_id()
                self.store.set_meta(f"burned_{shoe}", "1")
                self.store.append_audit(None, str(actor), "burn_card",
                                        {"card": card.code, "shoe": shoe}, self.clock())
            return "burn"
        rnd = self._require("deal", actor, State.DRAWN, State.DEALING, State.REVEALED,
                            State.EVALUATED, State.FLAGGED, State.PAID, State.HELD)
        if rnd.draw is None:
            raise self._refuse(rnd, actor, "deal", "no card is accepted before the Dynamic "
                               "Pays draw is recorded")
        order = spot_order(rnd.dealt_in)
        taken = set(rnd.hand_cards)
        spot = next((s for s in order if s not in taken), "extra")
        position = len(rnd.cards)
        problem = self._card_problem(rnd, card)
        with self.store.transaction() as db:
            db.execute("INSERT INTO cards(round_id, position, code, spot, source, shoe_seq, "
                       "millis, at) VALUES(?,?,?,?,?,?,?,?)",
                       (rnd.id, position, card.code, spot, source, seq, millis, self.clock()))
            # The hole card's code goes to the chained audit record only after the reveal
            # (its record stays in the cards table): the audit feed is readable by surveillance
            # screens while the round is in play.
            shown = "hidden" if spot == "dealer:hole" else card.code
            self.store.append_audit(rnd.id, str(actor), "card",
                                    {"spot": spot, "card": shown, "source": source,
                                     "seq": seq}, self.clock())
            if rnd.state is State.DRAWN:
                self._set_state(rnd, State.DEALING, actor, "dealing")
            elif rnd.state is State.HELD and rnd.held_from is State.DRAWN:
                db.execute("UPDATE rounds SET held_from = ? WHERE id = ?",
                           (State.DEALING.value, rnd.id))
                rnd.held_from = State.DEALING
            if problem:
                self._hold(rnd, actor, problem)
        self._changed("card")
        return spot

    def _card_problem(self, rnd: Round, card: Card) -> str | None:
        shoe = self.cfg.shoe
        if shoe.is_foreign(card):
            return f"foreign card {card.code}: not part of a {shoe.describe()}"
        if rnd.shoe_id is not None:
            used = self.store.db.execute(
                "SELECT COUNT(*) FROM cards c JOIN rounds r ON r.id = c.round_id "
                "WHERE r.shoe_id = ? AND c.code = ?", (rnd.shoe_id, card.code)).fetchone()[0]
            if used + 1 > shoe.copies(card):
                return (f"{card.code} seen {used + 1} times: more than the {shoe.copies(card)} "
                        f"copies a {shoe.describe()} holds")
        return None

    def manual_card(self, code: str, actor: Actor) -> str:
        """The dealer enters a card by hand while the round is held (a shoe misread or jam);
        recorded with source ``manual``."""
        rnd = self._require("manual_card", actor, State.HELD)
        self._require_role("manual_card", actor, rnd, Role.DEALER)
        return self.deal(code, source="manual", actor=actor)

    def record_camera(self, round_id: int, readings: dict[int, str | None],
                      frames: Sequence[tuple[str, str | None]] = (), hole_up: bool = False,
                      problems: Sequence[str] = (), actor: Actor = SYSTEM) -> None:
        """Store one camera reading of the round in one transaction: the camera's code for each
        card position (surveillance keeps both sources), the frames it was read from (shown to
        surveillance), and a chained ``camera_read`` audit record of both with each frame's
        SHA-256, so that a frame altered or swapped afterwards, or a reading edited, shows
        (``monster-match audit``). ``frames``: (file name, SHA-256 hex or ``None``) of each
        kept frame; ``readings`` holds only cards the camera could see (no hole card before
        the reveal)."""
        with self.store.transaction() as db:
            for position, code in readings.items():
                db.execute("UPDATE cards SET camera_code = ? WHERE round_id = ? AND "
                           "position = ?", (code, round_id, position))
            if frames:
                rnd = self.round(round_id)
                names = [*rnd.data.get("frames", []), *(name for name, _ in frames)]
                db.execute("UPDATE rounds SET data = ? WHERE id = ?",
                           (json.dumps({**rnd.data, "frames": names}), round_id))
            self.store.append_audit(round_id, str(actor), "camera_read", {
                "hole_up": hole_up,
                "camera": {str(position): code for position, code in sorted(readings.items())},
                "frames": [{"name": name, "sha256": digest} for name, digest in frames],
                "problems": list(problems)})

    def reveal(self, actor: Actor = SYSTEM) -> None:
        """The hole card is turned over in play: now results may be evaluated and shown."""
        rnd = self._require("reveal", actor, State.DEALING)
        if not rnd.hole_dealt:
            raise self._refuse(rnd, actor, "reveal", "the hole card has not been dealt")
        with self.store.transaction():
            self._set_state(rnd, State.REVEALED, actor, "revealed",
                            {"hole_card": rnd.hand_cards["dealer:hole"]})
        self.advance()

    # -- automatic steps ----------------------------------------------------------------------
    def advance(self) -> None:
        """Run the steps that need nobody, each in its own transaction, until none applies."""
        while True:
            rnd = self.current()
            if rnd is None:
                return
            if rnd.state is State.VERIFIED:
                self._draw(rnd)
            elif rnd.state is State.REVEALED:
                self._evaluate(rnd)
            elif rnd.state is State.EVALUATED:
                self._flag(rnd)
            elif rnd.state is State.FLAGGED and self._settle_ready(rnd):
                with self.store.transaction():
                    self._set_state(rnd, State.PAID, SYSTEM, "all_paid")
            elif rnd.state is State.PAID:
                self._close(rnd)
            else:
                return

    def _draw(self, rnd: Round) -> None:
        # Exactly once per round: the draw is stored with the state change that consumes it, and
        # only a VERIFIED round (which has no draw) gets here.
        assert rnd.draw is None
        draw = draw_dynamic_pays(self.cfg.dynamic, self.cfg.paytable, self._rng)
        with self.store.transaction():
            self._set_state(rnd, State.DRAWN, SYSTEM, "dynamic_pays_drawn",
                            {"draw": json.loads(draw.to_json())}, draw=draw.to_json())
        self._changed("drawn")

    def hands(self, rnd: Round) -> dict[int, tuple[list[str], Hand]]:
        """Each wagering seat's four cards and hand (only meaningful once revealed)."""
        cards = rnd.hand_cards
        out = {}
        for seat in sorted(rnd.wagers):
            codes = [cards.get(f"seat{seat}:1"), cards.get(f"seat{seat}:2"),
                     cards.get("dealer:up"), cards.get("dealer:hole")]
            if None in codes:
                continue
            parsed = [Card.parse(c) for c in codes if c]
            out[seat] = ([c.code for c in parsed], evaluate(parsed, self.cfg.shoe))
        return out

    def _evaluate(self, rnd: Round) -> None:
        hands = self.hands(rnd)
        meter_winners = [s for s, (_, h) in hands.items()
                         if self.cfg.paytable.pays(h) == "meter"]
        meter_now = self.meter
        with self.store.transaction() as db:
            for seat, (_codes, hand) in hands.items():
                payout = settle(hand, rnd.wagers[seat], self.cfg.paytable, rnd.draw, meter_now,
                                max(1, len(meter_winners)))
                if payout is None:
                    continue
                order = meter_winners.index(seat) + 1 if seat in meter_winners else None
                db.execute("INSERT INTO results(round_id, seat, hand, odds, amount, source, "
                           "dynamic, meter_order) VALUES(?,?,?,?,?,?,?,?)",
                           (rnd.id, seat, hand.value, payout.odds, str(payout.amount),
                            payout.source, int(payout.dynamic), order))
            self._set_state(rnd, State.EVALUATED, SYSTEM, "evaluated", {
                "hands": {str(s): {"cards": c, "hand": h.value} for s, (c, h) in hands.items()},
                "meter_winners": meter_winners})

    def _flag(self, rnd: Round) -> None:
        rnd = self.round(rnd.id)
        lights = [(r["seat"], "BLINK" if r["source"] == "meter" else "ON",
                   Hand(r["hand"]).label) for r in rnd.results]
        with self.store.transaction():
            if rnd.results:
                self._set_state(rnd, State.FLAGGED, SYSTEM, "wins_flagged",
                                {"seats": [r["seat"] for r in rnd.results]})
            else:
                self._set_state(rnd, State.CLOSED, SYSTEM, "closed", {"wins": 0},
                                closed=self.clock())
        if self.on_lights and lights:
            self.on_lights(lights)
        self._changed("flagged")

    # -- validation and payment ---------------------------------------------------------------
    def _result(self, rnd: Round, seat: int, event: str, actor: Actor) -> dict[str, Any]:
        for r in rnd.results:
            if r["seat"] == seat:
                return r
        raise self._refuse(rnd, actor, event, f"seat {seat} has no win to {event}")

    def confirm_win(self, seat: int, actor: Actor) -> None:
        """The dealer verifies the winning hand and that its light is on (§ 635b.3(g)(1)-(2))."""
        rnd = self._require("confirm", actor, State.FLAGGED)
        self._require_role("confirm", actor, rnd, Role.DEALER)
        r = self._result(rnd, seat, "confirm", actor)
        if r["confirmed_by"]:
            raise self._refuse(rnd, actor, "confirm", f"seat {seat} is already confirmed")
        with self.store.transaction() as db:
            db.execute("UPDATE results SET confirmed_by = ?, confirmed_at = ? WHERE round_id = ? "
                       "AND seat = ?", (actor.name, self.clock(), rnd.id, seat))
            self.store.append_audit(rnd.id, str(actor), "win_confirmed", {"seat": seat},
                                    self.clock())
        self._changed("confirmed")

    def validate_win(self, seat: int, actor: Actor) -> None:
        """A floorperson validates the payout (§ 635b.3(g)(3)); fixed pays are then paid from
        the table inventory."""
        rnd = self._require("validate", actor, State.FLAGGED)
        self._require_role("validate", actor, rnd, Role.FLOORPERSON)
        r = self._result(rnd, seat, "validate", actor)
        if not r["confirmed_by"]:
            raise self._refuse(rnd, actor, "validate", f"the dealer has not confirmed seat {seat}")
        if r["validated_by"]:
            raise self._refuse(rnd, actor, "validate", f"seat {seat} is already validated")
        with self.store.transaction() as db:
            db.execute("UPDATE results SET validated_by = ?, validated_at = ? WHERE round_id = ? "
                       "AND seat = ?", (actor.name, self.clock(), rnd.id, seat))
            self.store.append_audit(rnd.id, str(actor), "win_validated", {"seat": seat},
                                    self.clock())
            if r["source"] == "table_inventory":
                self._pay(rnd, r, actor)
        self._changed("validated")
        self.advance()

    def document_jackpot(self, seat: int, document: str, actor: Actor) -> None:
        """Record the documentation of a meter payout (e.g. the jackpot slip number); the meter
        payout is then made, and the cards may leave the table (§ 635b.3(g)(4)(i))."""
        rnd = self._require("document", actor, State.FLAGGED)
        self._require_role("document", actor, rnd, Role.FLOORPERSON)
        r = self._result(rnd, seat, "document", actor)
        if r["source"] != "meter":
            raise self._refuse(rnd, actor, "document", f"seat {seat} is not a meter payout")
        if not r["validated_by"]:
            raise self._refuse(rnd, actor, "document", f"seat {seat} is not validated yet")
        if not document.strip():
            raise self._refuse(rnd, actor, "document", "the document reference is empty")
        if r["paid_at"]:
            raise self._refuse(rnd, actor, "document", f"seat {seat} is already paid")
        with self.store.transaction() as db:
            db.execute("UPDATE results SET document = ?, documented_by = ? WHERE round_id = ? "
                       "AND seat = ?", (document.strip(), actor.name, rnd.id, seat))
            r = dict(r, document=document.strip())
            self._pay(rnd, r, actor)
        self._changed("documented")
        self.advance()

    def _pay(self, rnd: Round, r: dict[str, Any], actor: Actor) -> None:
        amount = int(from_text(r["amount"]))
        if r["source"] == "meter":
            entries = meter.jackpot_entries(amount, r["seat"], r["meter_order"], r["document"])
        else:
            entries = meter.fixed_pay_entries(amount, r["seat"], r["odds"])
        self._ledger(rnd, entries)
        self.store.db.execute("UPDATE results SET paid_at = ? WHERE round_id = ? AND seat = ?",
                              (self.clock(), rnd.id, r["seat"]))
        self.store.append_audit(rnd.id, str(actor), "paid",
                                {"seat": r["seat"], "amount": amount, "source": r["source"]},
                                self.clock())

    def _settle_ready(self, rnd: Round) -> bool:
        return all(r["paid_at"] for r in rnd.results)

    def _close(self, rnd: Round) -> None:
        with self.store.transaction():
            if any(r["source"] == "meter" for r in rnd.results):
                self._ledger(rnd, meter.reseed_entries(self.reserve, self.cfg.seed_cents))
            self._set_state(rnd, State.CLOSED, SYSTEM, "closed",
                            {"wins": len(rnd.results), "meter": to_text(self.meter)},
                            closed=self.clock())
        self._changed("closed")

    # -- views --------------------------------------------------------------------------------
    def _check_seat(self, seat: int) -> None:
        if not isinstance(seat, int) or not 1 <= seat <= self.cfg.table.seats:
            raise IllegalEvent(f"seat {seat!r}: this table has seats 1-{self.cfg.table.seats}")

    def public_view(self) -> dict[str, Any]:
        """What the sign and players may see. Nothing that depends on the hole card appears
        before the reveal: no card codes of the dealer's hand, no hands, no lights."""
        rnd = self.current()
        view: dict[str, Any] = {
            "table": self.cfg.table.id,
            "meter": dollars(whole_cents(self.meter)),
            "wager": dollars(self.cfg.table.wager_cents),
            "round": None,
        }
        if rnd is None:
            last = self.store.db.execute(
                "SELECT id FROM rounds ORDER BY id DESC LIMIT 1").fetchone()
            if last is not None:
                rnd = self.round(last[0])
        if rnd is None:
            return view
        revealed = rnd.effective_state in AFTER_REVEAL
        view["round"] = {
            "id": rnd.id,
            "state": rnd.state.value,
            "held": rnd.state is State.HELD,
            "wagers": sorted(rnd.wagers),
            "dynamic_pays": None if rnd.draw is None else [
                {"hand": h.value, "label": h.label, "pays": p,
                 "base": self.cfg.paytable.pays(h)} for h, p in rnd.draw.selections],
            "wins": [] if not revealed else [
                {"seat": r["seat"], "hand": r["hand"], "label": Hand(r["hand"]).label,
                 "amount": dollars(from_text(r["amount"])), "source": r["source"],
                 "confirmed": bool(r["confirmed_by"]), "validated": bool(r["validated_by"]),
                 "paid": bool(r["paid_at"])} for r in rnd.results],
        }
        return view
