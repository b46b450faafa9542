"""The finished steps of a long job, so that an interrupted run resumes after the last one.

An enrollment renders for a quarter of an hour and trains for longer (``--scenes 3600`` on two
cores: 20 minutes of rendering, half an hour or more of training); a run killed while it reads
its fresh frames should not make the casino wait for all of that again. Each step, once its
outputs are written, is recorded in ``steps.json`` with the *key* it was made from (every
setting and input digest its outputs depend on); a later run skips a step whose record holds
the same key and whose outputs are all still there, and redoes any other. A key names its
inputs' keys too, so a step redone invalidates the steps made from it.

>>> import tempfile
>>> from pathlib import Path
>>> work = Path(tempfile.mkdtemp())
>>> steps = StepLog(work / "steps.json")
>>> key = {"scenes": 1200, "seed": 1}
>>> steps.done("render", key, [work / "data0.npz"])
False
>>> _ = (work / "data0.npz").write_bytes(b"scenes")
>>> steps.record("render", key, [work / "data0.npz"])
>>> StepLog(work / "steps.json").done("render", key, [work / "data0.npz"])
True
>>> steps.done("render", {"scenes": 3600, "seed": 1}, [work / "data0.npz"])   # other settings
False
>>> (work / "data0.npz").unlink()                                               # output gone
>>> steps.done("render", key, [work / "data0.npz"])
False
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


class StepLog:
    """``steps.json`` of a job's working directory: step name -> the key it was made with
    and the names of its outputs (relative to the log's directory)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def _load(self) -> dict:
        try:
            steps = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        except (json.JSONDecodeError, UnicodeDecodeError):
            # written by replace, so a torn file means someone else wrote it: trust nothing
            return {}
        return steps if isinstance(steps, dict) else {}

    def _entry(self, name: str) -> dict:
        entry = self._load().get(name)
        return entry if isinstance(entry, dict) else {}

    def done(self, name: str, key: dict, outputs: list[Path]) -> bool:
        """Whether step ``name`` was recorded with ``key`` (compared as JSON) and exactly
        these ``outputs``, all of which still exist."""
        entry = self._entry(name)
        return (entry.get("key") == _as_json(key)
                and entry.get("outputs") == [self._name(p) for p in outputs]
                and all(Path(p).is_file() for p in outputs))

    def key(self, name: str) -> object:
        """The key step ``name`` was recorded with (``None``: not recorded)."""
        return self._entry(name).get("key")

    def info(self, name: str) -> object:
        """What :meth:`record` kept of step ``name`` besides its key (``None`` if nothing)."""
        return self._entry(name).get("info")

    def record(self, name: str, key: dict, outputs: list[Path], info: object = None) -> None:
        """Record step ``name`` as finished with ``key`` and ``outputs`` (already written),
        and ``info`` (JSON: what the step returned, for a later run that skips it); the file
        is replaced whole, after its bytes reach the disk."""
        steps = self._load()
        steps[name] = {"key": _as_json(key), "outputs": [self._name(p) for p in outputs]}
        if info is not None:
            steps[name]["info"] = info
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w") as f:
            f.write(json.dumps(steps, indent=1, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def forget(self) -> None:
        """Remove the log (the job finished and removed what its steps made)."""
        self.path.unlink(missing_ok=True)

    def _name(self, p: Path) -> str:
        p = Path(p)
        try:
            return str(p.resolve().relative_to(self.path.parent.resolve()))
        except ValueError:
            return str(p.resolve())


def _as_json(key: dict) -> dict:
    """``key`` as it reads back from JSON (tuples become lists), so that a fresh key and a
    recorded one compare equal."""
    return json.loads(json.dumps(key, sort_keys=True))


def file_digest(path: Path) -> str:
    """SHA-256 of a file (a model an output was made from), in hex.

    >>> import tempfile
    >>> from pathlib import Path
    >>> p = Path(tempfile.mkdtemp()) / "m.onnx"
    >>> _ = p.write_bytes(b"weights")
    >>> file_digest(p)[:12]
    '9a129038d9a0'
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
