"""The books: totals re-derived from the ledger, and the audit that checks them.

``report`` adds up the ledger; ``audit`` re-derives the meter and reserve from it, compares them
with the stored balances, checks the identity

    meter = seed + increments - jackpots paid + reseeds

verifies both hash chains, and checks each round's records against its ledger entries (and,
given the frames' directory, every kept camera frame against the SHA-256 recorded when it was
read).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from controller.money import dollars, from_text
from controller.storage import Store


@dataclass(frozen=True)
class Totals:
    by_kind: dict[str, Fraction]
    by_account: dict[str, Fraction]

    def kind(self, name: str) -> Fraction:
        return self.by_kind.get(name, Fraction(0))


def ledger_totals(store: Store) -> Totals:
    by_kind: dict[str, Fraction] = defaultdict(Fraction)
    by_account: dict[str, Fraction] = defaultdict(Fraction)
    for row in store.db.execute("SELECT kind, account, amount FROM ledger"):
        amount = from_text(row["amount"])
        by_kind[row["kind"]] += amount
        by_account[row["account"]] += amount
    return Totals(dict(by_kind), dict(by_account))


def report(store: Store) -> dict[str, Any]:
    t = ledger_totals(store)
    db = store.db
    rounds = int(db.execute("SELECT COUNT(*) FROM rounds WHERE state = 'closed'").fetchone()[0])
    wagers = int(db.execute(
        "SELECT COUNT(*) FROM ledger WHERE kind = 'wager'").fetchone()[0])
    house_reseeds = sum((from_text(r[0]) for r in db.execute(
        "SELECT amount FROM ledger WHERE kind = 'house' AND note = 'reseed'")), Fraction(0))
    return {
        "rounds_completed": rounds,
        "wagers_count": wagers,
        "wagers_total": dollars(t.kind("wager")),
        "increments_total": dollars(t.kind("increment")),
        "reserve_total": dollars(t.kind("reserve_in")),
        "seed": dollars(t.kind("seed")),
        "meter": dollars(store.balance("meter")),
        "reserve": dollars(store.balance("reserve")),
        "jackpots_paid": dollars(-t.kind("jackpot")),
        "jackpots_count": int(db.execute(
            "SELECT COUNT(*) FROM ledger WHERE kind = 'jackpot'").fetchone()[0]),
        "reseeds_total": dollars(t.kind("reseed")),
        "house_contributions": dollars(house_reseeds),
        "fixed_pays_total": dollars(-t.kind("fixed_pay")),
        "rounds_held": int(db.execute(
            "SELECT COUNT(DISTINCT round_id) FROM audit WHERE kind = 'held'").fetchone()[0]),
    }


def audit(store: Store, frames_dir: Path | None = None,
          progress: Callable[[list[Any]], Iterable[Any]] | None = None) -> list[str]:
    """Every discrepancy found (empty: the books and the record are intact). With
    ``frames_dir``, every camera frame the record names (``camera_read``) must be there with
    the SHA-256 recorded when it was read (:func:`check_frames`, ``progress`` wrapping its
    list of frames, as ``tqdm`` does)."""
    problems: list[str] = []
    problems += store.verify_chain("ledger")
    problems += store.verify_chain("audit")
    t = ledger_totals(store)
    for account in ("meter", "reserve", "house", "table"):
        derived = t.by_account.get(account, Fraction(0))
        stored = store.balance(account)
        if derived != stored:
            problems.append(f"{account}: ledger gives {dollars(derived)}, stored balance is "
                            f"{dollars(stored)}")
    identity = t.kind("seed") + t.kind("increment") + t.kind("jackpot") + t.kind("reseed")
    if identity != store.balance("meter"):
        problems.append(f"meter {dollars(store.balance('meter'))} != seed + increments - "
                        f"jackpots + reseeds = {dollars(identity)}")
    if t.by_account.get("reserve", Fraction(0)) < 0:
        problems.append("reserve is negative")
    problems += _check_rounds(store)
    problems += _check_camera_codes(store)
    if frames_dir is not None:
        problems += check_frames(store, frames_dir, progress=progress)
    return problems


def _check_camera_codes(store: Store) -> list[str]:
    """Each card's stored camera code against the chained ``camera_read`` records of its round
    (a later reading of a position replaces an earlier one; a position never read has none).
    Rounds recorded before there were ``camera_read`` records are not checked."""
    problems: list[str] = []
    recorded: dict[int, dict[int, str]] = defaultdict(dict)
    for rid, reading in camera_reads(store):
        recorded[rid].update({int(k): v for k, v in reading["camera"].items()})
    for rid, codes in recorded.items():
        for card in store.db.execute("SELECT position, camera_code FROM cards WHERE round_id = ? "
                                     "ORDER BY position", (rid,)):
            if card["camera_code"] != codes.get(card["position"]):
                problems.append(f"round {rid} card {card['position']}: camera code "
                                f"{card['camera_code']!r} is not the recorded reading "
                                f"{codes.get(card['position'])!r}")
    return problems


def camera_reads(store: Store, round_id: int | None = None) -> list[tuple[int, dict[str, Any]]]:
    """(round, payload) of the ``camera_read`` audit records, of one round or all, in order
    (:meth:`controller.rounds.Table.record_camera`)."""
    return [(row["round_id"], json.loads(row["payload"])) for row in store.db.execute(
        "SELECT round_id, payload FROM audit WHERE kind = 'camera_read' AND "
        "(? IS NULL OR round_id = ?) ORDER BY id", (round_id, round_id))]


def card_spots(store: Store, round_id: int) -> dict[int, str]:
    """Round ``round_id``'s cards' spots by position (``seat1:2``, ``dealer:hole``, ``extra``
    for the shoe's cards after the first ones)."""
    return {row["position"]: row["spot"] for row in store.db.execute(
        "SELECT position, spot FROM cards WHERE round_id = ? ORDER BY position", (round_id,))}


def reading_of_frame(store: Store, name: str) -> tuple[int, dict[str, Any]] | None:
    """(round, payload) of the last ``camera_read`` record naming the kept frame ``name``
    (any frame of a burst), or ``None`` where no reading names it."""
    found = None
    quoted = json.dumps(name)  # as the payload spells it; each hit is confirmed once parsed
    for row in store.db.execute(
            "SELECT round_id, payload FROM audit WHERE kind = 'camera_read' AND "
            "instr(payload, ?) > 0 ORDER BY id", (quoted,)):
        reading = json.loads(row["payload"])
        if any(f["name"] == name for f in reading["frames"]):
            found = (row["round_id"], reading)
    return found


def camera_reader(store: Store, round_id: int) -> dict[str, Any] | None:
    """The camera's reader when it read round ``round_id``: the payload of the last
    ``camera_started`` record before the round's last record (model name and SHA-256,
    :func:`vision.selfcheck.identity`), or ``None`` where none was recorded."""
    row = store.db.execute(
        "SELECT payload FROM audit WHERE kind = 'camera_started' AND id < "
        "(SELECT MAX(id) FROM audit WHERE round_id = ?) ORDER BY id DESC LIMIT 1",
        (round_id,)).fetchone()
    return json.loads(row["payload"]) if row is not None else None


def recorded_frames(store: Store, round_id: int | None = None) -> list[tuple[int, str, str]]:
    """(round, file name, SHA-256) of every camera frame the ``camera_read`` records name (of
    one round, or all), in the order read; frames kept without a digest are left out."""
    return [(rid, f["name"], f["sha256"]) for rid, reading in camera_reads(store, round_id)
            for f in reading["frames"] if f.get("sha256")]


def frame_status(frames_dir: Path, name: str, sha256: str) -> str:
    """``"as read"``, ``"missing"`` (no such file in ``frames_dir``) or ``"altered"`` (its
    SHA-256 is not the one recorded when it was read) for one kept camera frame."""
    path = frames_dir / name
    if Path(name).name != name or not path.is_file():
        return "missing"
    return "as read" if hashlib.sha256(path.read_bytes()).hexdigest() == sha256 else "altered"


def check_frames(store: Store, frames_dir: Path, round_id: int | None = None,
                 progress: Callable[[list[Any]], Iterable[Any]] | None = None) -> list[str]:
    """Camera frames named by the record's ``camera_read`` entries (of one round, or all) that
    are missing from ``frames_dir`` or whose file's SHA-256 is not the one recorded when it was
    read. ``progress`` wraps the list of frames (a progress bar over a long record)."""
    problems: list[str] = []
    frames = recorded_frames(store, round_id)
    for rid, name, sha256 in (progress(frames) if progress else frames):
        status = frame_status(frames_dir, name, sha256)
        if status == "missing":
            problems.append(f"round {rid}: camera frame {name} is missing from {frames_dir}")
        elif status == "altered":
            problems.append(f"round {rid}: camera frame {name} is not the frame read (its "
                            f"SHA-256 differs from the record's)")
    return problems


def _check_rounds(store: Store) -> list[str]:
    """Per-round cross-checks between round records and ledger entries."""
    db = store.db
    problems: list[str] = []
    per_round: dict[int, dict[str, list[tuple[int | None, Fraction]]]] = defaultdict(
        lambda: defaultdict(list))
    for row in db.execute("SELECT round_id, kind, seat, amount FROM ledger "
                          "WHERE round_id IS NOT NULL"):
        per_round[row["round_id"]][row["kind"]].append((row["seat"], from_text(row["amount"])))
    identity = json.loads(store.get_meta("table_identity") or "{}")
    wager_cents = identity.get("wager_cents")
    for rnd in db.execute("SELECT id, state, draw FROM rounds"):
        rid = rnd["id"]
        led = per_round.get(rid, {})
        wagers = {r["seat"]: r["amount"] for r in db.execute(
            "SELECT seat, amount FROM wagers WHERE round_id = ?", (rid,))}
        counted = {seat: amount for seat, amount in led.get("wager", [])}
        if counted and counted != {s: Fraction(a) for s, a in wagers.items()}:
            problems.append(f"round {rid}: ledger wagers {sorted(counted)} differ from the "
                            f"round's wagers {sorted(wagers)}")
        if wager_cents is not None and any(a != wager_cents for a in wagers.values()):
            problems.append(f"round {rid}: a wager differs from the table's wager amount")
        if rnd["draw"] is not None and not counted and wagers:
            problems.append(f"round {rid}: wagers were never entered in the ledger")
        for r in db.execute("SELECT seat, amount, source, paid_at FROM results "
                            "WHERE round_id = ?", (rid,)):
            kind = "jackpot" if r["source"] == "meter" else "fixed_pay"
            paid = [a for seat, a in led.get(kind, []) if seat == r["seat"]]
            if r["paid_at"] and paid != [-from_text(r["amount"])]:
                problems.append(f"round {rid} seat {r['seat']}: paid {r['amount']} cents but "
                                f"the ledger shows {[str(-p) for p in paid]}")
            if not r["paid_at"] and paid:
                problems.append(f"round {rid} seat {r['seat']}: ledger pays an unpaid win")
    return problems
