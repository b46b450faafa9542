"""benchmarks/true_corner_reads.py: the reader on the labels' true index corners."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent



def test_every_card_with_a_visible_index_is_cut_at_its_true_corner(capsys, bench_script) -> None:  # noqa: ANN001
    """On the samples every readable face-up card with an index corner 85 % visible falls in
    one of the miss kinds, and the reported cards' true corners read surely: frames put on
    the true corner with the wrong axes or size would read almost none of them."""
    mod = bench_script("true_corner_reads")
    assert mod.main([str(ROOT / "sample_images"), "--frames", "8"]) == 0
    out = capsys.readouterr().out
    kinds = {m[0].strip(): (int(m[1]), float(m[2]), float(m[3])) for m in re.findall(
        r"^  (\D+?)\s+n=\s*(\d+)\s+([\d.]+)% /\s+([\d.]+)%\s+\(median", out, re.MULTILINE)}
    expected = sum(
        1 for f in sorted((ROOT / "sample_images").glob("*.json"))
        for c in json.loads(f.read_text())["cards"]
        if c["code"] != "face_down" and c.get("readable", True)
        and max(c["index_visible"]) >= mod.VISIBLE)
    assert sum(n for n, _, _ in kinds.values()) == expected > 40
    n, one_look, three_looks = kinds["reported"]
    assert n >= 30 and one_look >= 70.0 and three_looks >= 70.0
    assert re.search(r"^  reported\s+n=\s*\d+\s+[\d.]+% / [\d.]+% / [\d.]+% / [\d.]+%  distance",
                     out, re.MULTILINE)
