"""The one durable store: SQLite in WAL mode with synchronous (fsync'd) commits.

Every state change of a round is one :meth:`Store.transaction`: the round row, its cards,
wagers and results, the ledger entries that move money, and the audit record describing it are
written together or not at all. A restart therefore resumes exactly where the last committed step
left off.

Ledger and audit rows are each a hash chain: a row's ``hash`` is SHA-256 over the previous row's
hash and the row's own canonical content, and the newest hash of each chain (with its length) is
kept in ``meta``. Editing or deleting a row afterwards breaks the chain; ``monster-match audit``
finds it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from controller.money import from_text, to_text

SCHEMA_VERSION = 1
GENESIS = "0" * 64

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY, role TEXT NOT NULL, salt BLOB NOT NULL, hash BLOB NOT NULL,
    created REAL NOT NULL, active INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY, user TEXT NOT NULL, role TEXT NOT NULL,
    created REAL NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS rounds (
    id INTEGER PRIMARY KEY, state TEXT NOT NULL, held_from TEXT, hold_reason TEXT,
    opened REAL NOT NULL, closed REAL, dealt_in TEXT NOT NULL DEFAULT '[]',
    dealer_count INTEGER, draw TEXT, shoe_id INTEGER, data TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS wagers (
    round_id INTEGER NOT NULL, seat INTEGER NOT NULL, amount INTEGER NOT NULL,
    placed REAL NOT NULL, PRIMARY KEY (round_id, seat));
CREATE TABLE IF NOT EXISTS cards (
    round_id INTEGER NOT NULL, position INTEGER NOT NULL, code TEXT NOT NULL,
    spot TEXT NOT NULL, source TEXT NOT NULL, shoe_seq INTEGER, millis INTEGER,
    camera_code TEXT, at REAL NOT NULL, PRIMARY KEY (round_id, position));
CREATE TABLE IF NOT EXISTS results (
    round_id INTEGER NOT NULL, seat INTEGER NOT NULL, hand TEXT NOT NULL,
    odds INTEGER, amount TEXT NOT NULL, source TEXT NOT NULL, dynamic INTEGER NOT NULL,
    meter_order INTEGER, confirmed_by TEXT, confirmed_at REAL, validated_by TEXT,
    validated_at REAL, document TEXT, documented_by TEXT, paid_at REAL,
    PRIMARY KEY (round_id, seat));
CREATE TABLE IF NOT EXISTS shoes (
    id INTEGER PRIMARY KEY, decks INTEGER NOT NULL, opened REAL NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ledger (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, round_id INTEGER, kind TEXT NOT NULL,
    account TEXT NOT NULL, amount TEXT NOT NULL, seat INTEGER, note TEXT NOT NULL DEFAULT '',
    prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY, at REAL NOT NULL, round_id INTEGER, actor TEXT NOT NULL,
    kind TEXT NOT NULL, payload TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS ledger_round ON ledger(round_id);
CREATE INDEX IF NOT EXISTS audit_round ON audit(round_id);
CREATE INDEX IF NOT EXISTS audit_kind ON audit(kind, actor, at);
"""

LEDGER_FIELDS = ("id", "at", "round_id", "kind", "account", "amount", "seat", "note")
AUDIT_FIELDS = ("id", "at", "round_id", "actor", "kind", "payload")


class StorageError(RuntimeError):
    """The store cannot be opened or is not a monster-match database."""


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def chain_hash(prev_hash: str, fields: dict[str, Any]) -> str:
    return hashlib.sha256((prev_hash + canonical(fields)).encode()).hexdigest()


@dataclass(frozen=True)
class LedgerEntry:
    kind: str  # wager, increment, reserve_in, jackpot, reseed, reserve_out, house, fixed_pay, seed
    account: str  # meter, reserve, house, table
    amount: Fraction  # exact cents; signed as it moves the account
    seat: int | None = None
    note: str = ""


def open_read_only(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to a table's database, for another process that watches the
    record beside the table's one writer (``camera-sim --table``): it can change nothing.
    :class:`StorageError` where the file is not there or is not a monster-match database of
    this schema version."""
    p = Path(path)
    if not p.is_file():
        raise StorageError(f"{p}: no such database")
    try:
        db = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True, timeout=30,
                             isolation_level=None, check_same_thread=False)
        db.row_factory = sqlite3.Row
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"{p}: not a usable monster-match database ({exc})") from None
    if row is None or row[0] != str(SCHEMA_VERSION):
        db.close()
        raise StorageError(f"{p}: schema version {row[0] if row else 'none'}, expected "
                           f"{SCHEMA_VERSION}")
    return db


class Store:
    """Thin wrapper over one SQLite connection (one writer: the table controller)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30,
                                      check_same_thread=False)
            self.db.row_factory = sqlite3.Row
            mode = self.db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            # FULL: the WAL is fsync'd at every commit, so a committed step survives power loss.
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StorageError(
                f"{self.path}: not a usable monster-match database ({exc})") from None
        if self.path != ":memory:" and mode.lower() != "wal":
            raise StorageError(f"{self.path}: could not switch to WAL mode (got {mode})")
        version = self.get_meta("schema_version")
        if version is None:
            with self.transaction():
                self.set_meta("schema_version", str(SCHEMA_VERSION))
        elif version != str(SCHEMA_VERSION):
            raise StorageError(f"{self.path}: schema version {version}, expected {SCHEMA_VERSION}")
        self._in_tx = False

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; rolls back on any exception."""
        self.db.execute("BEGIN IMMEDIATE")
        self._in_tx = True
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")
        finally:
            self._in_tx = False

    # -- meta -------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE "
                        "SET value = excluded.value", (key, value))

    # -- chained records --------------------------------------------------------------------
    def _append_chained(self, table: str, fields: dict[str, Any]) -> None:
        head = self.get_meta(f"{table}_head") or GENESIS
        count = int(self.get_meta(f"{table}_count") or 0)
        fields = dict(fields)
        fields["id"] = count + 1
        digest = chain_hash(head, fields)
        cols = ", ".join([*fields, "prev_hash", "hash"])
        marks = ", ".join("?" * (len(fields) + 2))
        self.db.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})",
                        (*fields.values(), head, digest))
        self.set_meta(f"{table}_head", digest)
        self.set_meta(f"{table}_count", str(count + 1))

    def append_ledger(self, round_id: int | None, entry: LedgerEntry, at: float) -> None:
        """Record one money movement and apply it to the stored balance of its account."""
        assert self._in_tx, "ledger entries are written inside a transaction"
        self._append_chained("ledger", {
            "at": at, "round_id": round_id, "kind": entry.kind, "account": entry.account,
            "amount": to_text(entry.amount), "seat": entry.seat, "note": entry.note,
        })
        key = f"balance_{entry.account}"
        self.set_meta(key, to_text(self.balance(entry.account) + entry.amount))

    def balance(self, account: str) -> Fraction:
        value = self.get_meta(f"balance_{account}")
        return Fraction(0) if value is None else from_text(value)

    def append_audit(self, round_id: int | None, actor: str, kind: str,
                     payload: dict[str, Any], at: float | None = None) -> None:
        assert self._in_tx, "audit records are written inside a transaction"
        self._append_chained("audit", {
            "at": time.time() if at is None else at, "round_id": round_id, "actor": actor,
            "kind": kind, "payload": canonical(payload),
        })

    def verify_chain(self, table: str) -> list[str]:
        """Problems found in one hash chain (empty when intact)."""
        fields = LEDGER_FIELDS if table == "ledger" else AUDIT_FIELDS
        problems: list[str] = []
        prev = GENESIS
        expected_id = 1
        for row in self.db.execute(f"SELECT * FROM {table} ORDER BY id"):
            if row["id"] != expected_id:
                problems.append(f"{table} row {expected_id} is missing (next is {row['id']})")
                expected_id = row["id"]
            content = {k: row[k] for k in fields}
            if row["prev_hash"] != prev:
                problems.append(f"{table} row {row['id']}: link to the previous row is broken")
            if chain_hash(row["prev_hash"], content) != row["hash"]:
                problems.append(f"{table} row {row['id']}: content does not match its hash")
            prev = row["hash"]
            expected_id += 1
        count = int(self.get_meta(f"{table}_count") or 0)
        if expected_id - 1 != count:
            problems.append(f"{table}: {expected_id - 1} rows, the chain head records {count}")
        if prev != (self.get_meta(f"{table}_head") or GENESIS):
            problems.append(f"{table}: the newest row is not the recorded chain head")
        return problems
