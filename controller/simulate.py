"""A simulated table: players, wagers, a dealer, a floorperson and a shoe, driving the real
controller until the store holds the requested number of completed rounds.

Every decision is a pure function of (seed, round id), and the simulated shoe's order is a
function of its stored seed, so a run killed at any moment and started again continues exactly:
the next card is the one after the last card committed, nothing is lost or doubled.
"""

from __future__ import annotations

import json
import random
import secrets
from collections.abc import Callable

from controller.auth import Actor, Auth, Role
from controller.config import TableConfig
from controller.rounds import State, Table
from controller.storage import Store

CUT_CARD_LEFT = 80  # a new shoe once fewer cards than this remain


def sim_actors(store: Store, cfg: TableConfig) -> tuple[Actor, Actor]:
    """Sign in a dealer and a floorperson for this run. Each run creates its own accounts
    with random passwords that are never stored (only their scrypt hashes are)."""
    auth = Auth(store, cfg.web.session_minutes)
    tag = secrets.token_hex(3)
    actors = []
    for role in (Role.DEALER, Role.FLOORPERSON):
        name, password = f"sim-{role.value}-{tag}", secrets.token_urlsafe(18)
        auth.add_user(name, role, password, by="simulator")
        actors.append(auth.actor(auth.login(name, password), role))
    return actors[0], actors[1]


class SimulatedShoe:
    """Shoe order from a stored seed; the position is what the store has recorded."""

    def __init__(self, table: Table, seed: int) -> None:
        self.table = table
        self.seed = seed
        self._orders: dict[int, list[str]] = {}

    def _order(self, shoe_id: int) -> list[str]:
        if shoe_id not in self._orders:
            self._orders = {shoe_id: self._shuffled(shoe_id)}  # only the current shoe is kept
        return self._orders[shoe_id]

    def _shuffled(self, shoe_id: int) -> list[str]:
        row = self.table.store.db.execute("SELECT data FROM shoes WHERE id = ?",
                                          (shoe_id,)).fetchone()
        shoe_seed = json.loads(row[0])["seed"]
        cards = [c.code for c in self.table.cfg.shoe]
        random.Random(shoe_seed).shuffle(cards)
        return cards

    def needs_shuffle(self) -> bool:
        shoe_id = self.table._shoe_id()
        if shoe_id is None:
            return True
        return len(self.table.cfg.shoe) - self.table.cards_of_shoe(shoe_id) < CUT_CARD_LEFT

    def shuffle(self, round_id: int) -> None:
        shoe_seed = random.Random(f"{self.seed}:shoe:{round_id}").getrandbits(64)
        self.table.shuffle(self.table.cfg.table.decks, {"seed": shoe_seed})

    def next_card(self) -> str:
        shoe_id = self.table._shoe_id()
        assert shoe_id is not None
        return self._order(shoe_id)[self.table.cards_of_shoe(shoe_id)]


def run_simulation(table: Table, rounds: int, seed: int,
                   progress: Callable[[int], None] | None = None,
                   mismatch_rate: float = 0.02) -> int:
    """Play until ``rounds`` rounds are completed. Returns the number completed."""
    dealer, floor = sim_actors(table.store, table.cfg)
    shoe = SimulatedShoe(table, seed)
    seats = table.cfg.table.seats
    last = -1
    while True:
        done = table.rounds_completed()
        if progress and done != last:
            progress(done)
            last = done
        rnd = table.current()
        if rnd is None:
            if done >= rounds:
                return done
            if shoe.needs_shuffle():
                shoe.shuffle(done)
            table.open_round()
            continue
        rng = random.Random(f"{seed}:round:{rnd.id}")
        players = sorted(rng.sample(range(1, seats + 1), rng.randint(1, seats)))
        wagering = [s for s in players if rng.random() < 0.6]
        mismatch = rng.random() < mismatch_rate
        hits = rng.randint(0, 4)
        state = rnd.state
        if state is State.BETS_OPEN:
            for s in range(1, seats + 1):
                table.set_main(s, s in players or s in rnd.wagers)
            for s in wagering:
                if s not in rnd.wagers:
                    table.place_wager(s)
            table.lockout()
        elif state is State.LOCKED:
            table.chip_count(len(rnd.wagers) + (1 if mismatch else 0), dealer)
        elif state is State.HELD:
            table.resolve(floor, "continue", "simulated floorperson: recounted, verified")
        elif state is State.DRAWN or (state is State.DEALING and not rnd.hole_dealt):
            table.deal(shoe.next_card(), "shoe")
        elif state is State.DEALING:
            extras = sum(1 for c in rnd.cards if c["spot"] == "extra")
            if extras < hits and not shoe.needs_shuffle():
                table.deal(shoe.next_card(), "shoe")
            else:
                table.reveal(dealer)
        elif state is State.FLAGGED:
            for r in rnd.results:
                if not r["confirmed_by"]:
                    table.confirm_win(r["seat"], dealer)
                elif not r["validated_by"]:
                    table.validate_win(r["seat"], floor)
                elif r["source"] == "meter" and not r["paid_at"]:
                    table.document_jackpot(r["seat"], f"JP-{rnd.id}-{r['seat']}", floor)
                else:
                    continue
                break
        else:
            table.advance()

