"""`monster-match demo` end to end: simulated devices on ptys, controller, store, web."""

import json
import re
import subprocess
import sys
from pathlib import Path


def cli(*args, timeout=240):
    return subprocess.run([sys.executable, "-m", "controller", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_demo_plays_rounds_and_the_books_reconcile(tmp_path):
    db = str(tmp_path / "demo.db")
    res = cli("demo", "--rounds", "6", "--pace", "0", "--port", "0", "--db", db, "--seed", "7",
              "--no-camera")
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    assert "http://127.0.0.1:" in out and "/sign" in out and "/dev/pts/" in out
    assert "6 rounds played" in out
    rep = json.loads(cli("report", "--db", db, "--json").stdout)
    assert rep["rounds_completed"] == 6 and rep["wagers_count"] >= 1
    # one line a round: its wagers counted in words that agree ("1 wager", "2 wagers"), the
    # wins in exact dollars, and the counts add up to the books'
    lines = re.findall(r"^round \d+: (\d+) (wagers?), Dynamic Pays \[.*\], (.*); meter \$[\d.]+$",
                       out, re.M)
    assert len(lines) == 6, out
    assert all((n == "1") == (word == "wager") for n, word, _ in lines)
    assert sum(int(n) for n, _, _ in lines) == rep["wagers_count"]
    for _, _, wins in lines:
        assert wins == "no wins" or re.fullmatch(r"seat \d+ .+ \$\d+\.\d\d(, seat .*)?", wins)
    assert cli("audit", "--db", db).returncode == 0
    # Every wager went through the table board's sensors, every card through the shoe link.
    import sqlite3
    con = sqlite3.connect(db)
    actors = {r[0] for r in con.execute("SELECT actor FROM audit WHERE kind='wager_accepted'")}
    assert actors == {"dealer@board (dealer)"}
    sources = {r[0] for r in con.execute("SELECT source FROM cards")}
    assert sources == {"shoe"}
    seqs = [r[0] for r in con.execute("SELECT shoe_seq FROM cards ORDER BY round_id, position")]
    assert all(s is not None for s in seqs) and len(set(seqs)) == len(seqs)


def test_demo_with_camera_keeps_frames_and_both_sources(tmp_path):
    db = str(tmp_path / "cam.db")
    res = cli("demo", "--rounds", "3", "--pace", "0", "--port", "0", "--db", db, "--seed", "11")
    assert res.returncode == 0, res.stdout + res.stderr
    frames = sorted(p.name for p in (tmp_path / "cam.frames").iterdir())
    # Two frames a round: the deal (hole card face down) and after the reveal.
    assert len(frames) >= 6 and frames[0].endswith("-dealt.png")
    import sqlite3
    con = sqlite3.connect(db)
    rows = con.execute("SELECT code, camera_code FROM cards WHERE spot != 'extra'").fetchall()
    read = [(shoe, cam) for shoe, cam in rows if cam is not None]
    assert read, "the camera read no card at all"
    held = con.execute("SELECT COUNT(*) FROM audit WHERE kind = 'held'").fetchone()[0]
    from controller.fusion import CameraRankColour

    def fits(shoe: str, cam: str) -> bool:  # a code, or a rank and colour ("K red")
        if " " not in cam:
            return cam == shoe
        rank, colour = cam.split()
        return CameraRankColour(rank, colour, "").fits(shoe)

    disagree = sum(1 for shoe, cam in read if not fits(shoe, cam))
    assert disagree <= held  # every camera/shoe disagreement held its round
    # the camera's readings of the shoe's cards, summed up when the demo ends
    summary = re.search(r"^camera: (\d+) checks, median \d+ ms; of (\d+) shoe cards on the "
                        r"layout (\d+) read by code \(\d+ %\), (\d+) more by rank and colour "
                        r"alone \(\d+ % in all\); frames warned of: (.+)$", res.stdout, re.M)
    assert summary, res.stdout
    checks, cards, by_code, by_rank_colour = map(int, summary.groups()[:4])
    assert checks >= 6 and 0 < by_code + by_rank_colour <= cards
    # and how many checks' frames the camera's condition was warned of in (vision.quality)
    warned = summary.group(5)
    assert warned == "none" or all(
        re.fullmatch(r"(blurred|motion_blur|small_cards|underexposed|colour_cast) (\d+)", part)
        and int(part.split()[1]) <= checks for part in warned.split(", ")), warned
    # The record names the reader behind every camera code: its models' sha256, the
    # libraries and the CPU's kernels, as the camera started.
    started = con.execute("SELECT actor, round_id, payload FROM audit "
                          "WHERE kind = 'camera_started'").fetchall()
    assert len(started) == 1 and started[0][0].startswith("camera") and started[0][1] is None
    ident = json.loads(started[0][2])
    from vision.recognize import DEFAULT_MODEL
    from vision.selfcheck import sha256

    assert ident["model_sha256"] == sha256(Path(DEFAULT_MODEL))
    assert ident["threshold"] == 0.997 and ident["gate"] == "gate_v2.onnx"
    assert ident["calibrated_threshold"] is None  # reads at the frame's own card sizes
    assert ident["environment"]["opencv"] and ident["kernel_steps"]["model"] <= 2.5
    assert cli("audit", "--db", db).returncode == 0
    replay = json.loads(cli("replay", "--db", db, "--round", "1", "--json").stdout)
    assert replay["consistent"]
    assert {"shoe", "camera"} <= set(replay["cards"][0])
    assert replay["camera_reader"] == ident  # the reader that read the round
    text = cli("replay", "--db", db, "--round", "1").stdout
    assert f"camera reader: {Path(DEFAULT_MODEL).name} {ident['model_sha256'][:16]}" in text
