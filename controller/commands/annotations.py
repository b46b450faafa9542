"""Where ``recognize --annotate DIR`` and ``vision-eval --annotate DIR`` write their drawn
frames (:mod:`vision.annotate`), and the writing.

A frame's drawing is named after its source, so a suite's folders come out as they went
in: an image under a directory named on the command line keeps its path below it, one named
itself keeps its name; a video's frames are ``NAME.fNNNNNN.jpg`` (the frame's number), a
live camera's ``cameraK.fNNNNNN.jpg`` (K: its place among the cameras named, from 1). Two
sources that would be drawn to one file are refused before anything is read. The drawings
are written by :func:`vision.annotate.save`.
"""

from __future__ import annotations

from pathlib import Path

from controller.cli import CommandError


def open_folder(out: Path) -> Path:
    """``out`` made (with its parents) if need be: :class:`CommandError` if it cannot be,
    or is a file."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise CommandError(f"--annotate {out}: not a directory") from None
    except OSError as exc:
        raise CommandError(f"--annotate {out}: {exc.strerror or exc}") from None
    return out


def stems(paths: list[str], files: list[Path | str]) -> dict[str, str]:
    """Each source's drawing name without its suffix, by the name its lines give it
    (``str(path)``; a camera by its URL as shown, :func:`vision.stream.redact`); the
    module docstring says how. :class:`CommandError` names two sources drawn to one name.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> (d / "glare").mkdir()
    >>> for name in ("glare/a.jpg", "b.png"): (d / name).touch()
    >>> got = stems([str(d)], [d / "b.png", d / "glare" / "a.jpg"])
    >>> sorted(got.values())
    ['b', 'glare/a']
    >>> stems([str(d / "b.png"), str(d / "glare" / "b.jpg")],
    ...       [d / "b.png", d / "glare" / "b.jpg"])
    Traceback (most recent call last):
    ...
    controller.cli.CommandError: --annotate: two sources would be drawn to b.jpg: ...
    """
    from vision.stream import redact

    folders = [Path(p) for p in paths if Path(p).is_dir()]
    out: dict[str, str] = {}
    cameras = 0
    for f in files:
        if isinstance(f, str):
            cameras += 1
            out[redact(f)] = f"camera{cameras}"
            continue
        below = next((f.relative_to(d) for d in folders if f.is_relative_to(d)), None)
        out[str(f)] = (below.with_suffix("") if below is not None else Path(f.stem)).as_posix()
    seen: dict[str, str] = {}
    for source, stem in out.items():
        if stem in seen:
            raise CommandError(f"--annotate: two sources would be drawn to {stem}.jpg: "
                               f"{seen[stem]} and {source}")
        seen[stem] = source
    return out


def target(out: Path, stem: str, head: dict) -> Path:
    """The drawing of the frame a job's ``head`` names (``"frame"``: a video's or camera's
    frame number; ``"connection"``: a reconnecting camera's).

    >>> target(Path("o"), "clip", {"image": "clip.mp4", "frame": 12}).as_posix()
    'o/clip.f000012.jpg'
    >>> target(Path("o"), "camera1", {"image": "x", "frame": 3, "connection": 2}).as_posix()
    'o/camera1.c2.f000003.jpg'
    """
    name = stem
    if "connection" in head:
        name += f".c{head['connection']}"
    if "frame" in head:
        name += f".f{head['frame']:06d}"
    return out / f"{name}.jpg"
