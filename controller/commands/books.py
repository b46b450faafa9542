"""``monster-match report`` and ``monster-match audit``: the books of a table's database."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from controller.books import audit, report
from controller.cli import CommandError
from controller.storage import StorageError, Store

#: Frames from which ``audit`` shows a progress bar while it checks them.
PROGRESS_FRAMES = 200


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("report", help="the books: wagers, meter, reserve, payouts",
                              description="Totals of a table's books, derived from the ledger.")
    p.add_argument("--db", required=True, metavar="FILE")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run_report)
    a = subparsers.add_parser(
        "audit", help="verify the books and the tamper-evident record",
        description="Re-derive meter and reserve from the ledger, check them against the stored "
                    "values, verify the hash chains and the kept camera frames; exit non-zero "
                    "naming every discrepancy.")
    a.add_argument("--db", required=True, metavar="FILE")
    a.add_argument("--frames", metavar="DIR", type=Path,
                   help="the kept camera frames, each checked against the SHA-256 recorded "
                        "when it was read (default: FILE's .frames directory, where the demo "
                        "keeps them, if there is one)")
    a.add_argument("--json", action="store_true", help="print one JSON object")
    a.set_defaults(func=run_audit)
    r = subparsers.add_parser(
        "replay", help="replay a round from the record",
        description="Print a round's timeline and both card sources for every card, re-derive "
                    "its hands and payouts from the recorded cards and Dynamic Pays draw, and "
                    "exit non-zero if they differ from what was recorded.")
    r.add_argument("--db", required=True, metavar="FILE")
    r.add_argument("--round", type=int, required=True, metavar="N")
    r.add_argument("--config", metavar="FILE", help="table configuration TOML")
    r.add_argument("--frames", metavar="DIR", type=Path,
                   help="the kept camera frames, the round's checked against the SHA-256 "
                        "recorded when each was read (default: FILE's .frames directory, if "
                        "there is one)")
    r.add_argument("--reread", action="store_true",
                   help="read the round's kept frames again with the camera's reader: every "
                        "camera code recorded must be read again from its frames")
    r.add_argument("--annotate", type=Path, default=None, metavar="DIR",
                   help="with --reread, draw each reading's first frame with the cards read "
                        "again (and the layout's areas, where the table is calibrated) and "
                        "the codes the record holds, written to DIR as NAME.jpg")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=run_replay)


def _open(path: str) -> Store:
    if not Path(path).is_file():
        raise CommandError(f"{path}: no such database")
    try:
        return Store(path)
    except StorageError as exc:
        raise CommandError(str(exc)) from None


def run_report(args: argparse.Namespace) -> int:
    store = _open(args.db)
    try:
        doc = report(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(doc))
    else:
        width = max(len(k) for k in doc)
        for key, value in doc.items():
            shown = f"${value}" if isinstance(value, str) else f"{value:,}"
            print(f"{key:<{width}}  {shown:>16}")
    return 0


def run_audit(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    frames = _frames_dir(args)
    store = _open(args.db)
    try:
        # hashing a long record's frames takes a while: a bar on the terminal, not in --json
        problems = audit(store, frames, lambda items: tqdm(
            items, desc="camera frames", unit="frame", file=sys.stderr,
            disable=args.json or len(items) < PROGRESS_FRAMES))
        books = report(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps({"ok": not problems, "problems": problems, "meter": books["meter"],
                          "reserve": books["reserve"]}))
    elif problems:
        for p in problems:
            print(f"DISCREPANCY: {p}")
    else:
        print(f"audit passed: meter ${books['meter']}, reserve ${books['reserve']}, "
              f"{books['rounds_completed']} rounds, hash chains intact"
              + (f", camera frames in {frames} as read" if frames is not None else ""))
    return 1 if problems else 0


def _frames_dir(args: argparse.Namespace) -> Path | None:
    """``--frames``, or the database's ``.frames`` directory where there is one."""
    frames = args.frames
    if frames is None and Path(args.db).with_suffix(".frames").is_dir():
        frames = Path(args.db).with_suffix(".frames")
    if frames is not None and not frames.is_dir():
        raise CommandError(f"{frames}: no such directory of camera frames")
    return frames


def run_replay(args: argparse.Namespace) -> int:
    from controller.books import check_frames
    from controller.config import ConfigError, load_config
    from controller.replay import replay_round

    frames = _frames_dir(args)
    if args.reread and frames is None:
        raise CommandError("--reread needs the kept frames: --frames DIR")
    if args.annotate is not None:
        if not args.reread:
            raise CommandError("--annotate draws the frames read again: it needs --reread")
        from controller.commands.annotations import open_folder

        open_folder(args.annotate)
    store = _open(args.db)
    try:
        cfg = load_config(args.config)
        rep = replay_round(store, cfg, args.round)
        if frames is not None:
            rep.problems += check_frames(store, frames, args.round)
        reread: tuple[int, list[str]] = (0, [])
        if args.reread:
            from controller.reread import reread_round

            reread = reread_round(store, cfg, args.round, frames, rep.camera_reader,
                                  args.annotate)
            rep.problems += reread[1]
    except (ValueError, ConfigError) as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:  # (a drawing that cannot be written)
        raise CommandError(f"--annotate: {exc}") from None
    finally:
        store.close()
    if args.json:
        print(json.dumps(rep.to_json()))
    else:
        for t in rep.timeline:
            print(f"{t['at']:.3f}  {t['actor']:<28} {t['kind']:<20} "
                  f"{json.dumps(t['detail'], sort_keys=True)}")
        reader = rep.camera_reader
        if reader is not None:
            env = reader.get("environment", {})
            print(f"camera reader: {reader.get('model')} {str(reader.get('model_sha256'))[:16]}… "
                  f"threshold {reader.get('threshold')} (opencv {env.get('opencv')}, "
                  f"onnxruntime {env.get('onnxruntime')}, int8 flags "
                  f"{' '.join(env.get('cpu_int8_flags', [])) or 'none'})")
        for c in rep.cards:
            print(f"card {c['position']:>2} {c['spot']:<12} shoe {c['shoe']}  "
                  f"camera {c['camera'] or '-'}  ({c['source']})")
        for seat, h in rep.hands.items():
            print(f"seat {seat}: {' '.join(h['cards'])} -> {h['hand']} "
                  f"replayed {h['payout']} recorded {h['paid']}")
        if args.reread:
            print(f"camera readings read again from their kept frames: {reread[0]}, "
                  f"{'every' if not reread[1] else 'not every'} recorded code read again"
                  + (f"; drawn in {args.annotate}" if args.annotate is not None else ""))
        for p in rep.problems:
            print(f"DISCREPANCY: {p}")
    return 1 if rep.problems else 0
