"""A table's layout as its record holds it, watched from another process (``camera-sim
--table``): the latest round's cards by area, read from the table's database read-only."""

from __future__ import annotations

import json
from pathlib import Path

from controller.layout import hits_in_turn, layout_of
from controller.rounds import AFTER_REVEAL, State, effective_state
from controller.storage import open_read_only


class TableView:
    """The table's database at ``path``, opened read-only (:func:`open_read_only`:
    :class:`controller.storage.StorageError` where it is not one)."""

    def __init__(self, path: str | Path) -> None:
        self.db = open_read_only(path)

    def layout(self) -> tuple[int | None, dict[str, list[str]]]:
        """(round, its layout) of the latest round: its cards as :func:`layout_of` lays them
        out, the hole card face down until the record has it turned over, the hits where
        :func:`hits_in_turn` deals them (the record does not say). The cards stay
        until the next round opens, as a dealer leaves them while the main game is settled;
        (``None``, ``{}``) before the first round. One read transaction: the round and its
        cards as of one commit of the table's."""
        self.db.execute("BEGIN")
        try:
            row = self.db.execute("SELECT id, state, held_from, dealt_in FROM rounds "
                                  "ORDER BY id DESC LIMIT 1").fetchone()
            if row is None:
                return None, {}
            cards = self.db.execute("SELECT position, spot, code FROM cards WHERE round_id = ? "
                                    "ORDER BY position", (row["id"],)).fetchall()
            held_from = State(row["held_from"]) if row["held_from"] else None
            hole_up = effective_state(State(row["state"]), held_from) in AFTER_REVEAL
            # How many cards were dealt before the hole card was turned: each card's audit
            # entry is written with it, in one transaction, so the chain orders the two.
            before = self.db.execute(
                "SELECT COUNT(*) FROM audit WHERE round_id = ?1 AND kind = 'card' AND id < "
                "(SELECT MIN(id) FROM audit WHERE round_id = ?1 AND kind = 'revealed')",
                (row["id"],)).fetchone()[0] if hole_up else None
        finally:
            self.db.execute("COMMIT")
        hits = hits_in_turn(cards, json.loads(row["dealt_in"]), before)
        return row["id"], layout_of(cards, hole_up, hits)

    def close(self) -> None:
        self.db.close()
