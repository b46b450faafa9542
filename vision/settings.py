"""Pipeline settings named on a command line: ``module.NAME=VALUE``, a constant of one of the
``vision`` modules (``proposals.CLOSE_FIRST=True``, ``handwalk.SPLITS=(3,)``), set for a while
and put back. One process can then read each frame with two pipelines, which is what a paired
comparison of a pipeline change needs: :mod:`vision.sweep` reads a reader given as
``PATH@proposals.CLOSE_FIRST=True`` with that setting, beside the same reader without it, on
the same rendered frames.

Only an existing public upper-case constant may be set, and only to a Python literal of its
own type: a misspelt name or a value of another kind is refused, not ignored. The modules read
these constants when they run, so a setting holds from the next frame read; a constant a
module only uses when it is imported (to build a table) is not one to set so. A module that
imported the constant by name (``from vision.merge import SAME_CENTRE``) holds the same object
under the same name, and is set and put back with it.

>>> from vision import proposals
>>> close_first = parse("proposals.CLOSE_FIRST=True")
>>> with applied([close_first]):
...     proposals.CLOSE_FIRST
True
>>> proposals.CLOSE_FIRST
False
>>> path, settings = split_reader("cards_v7.onnx@proposals.CLOSE_FIRST=True@merge.SPLIT_GAP=0.3")
>>> path, [(s.module, s.name, s.value) for s in settings]
('cards_v7.onnx', [('proposals', 'CLOSE_FIRST', True), ('merge', 'SPLIT_GAP', 0.3)])
>>> parse("proposals.CLOSE_FRIST=True")
Traceback (most recent call last):
  ...
ValueError: vision.proposals has no setting CLOSE_FRIST
>>> parse("proposals.CLOSE_FIRST=1")
Traceback (most recent call last):
  ...
ValueError: proposals.CLOSE_FIRST is a bool, not 1
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    """One pipeline constant and the value it takes: ``vision.<module>.<name> = value``."""

    module: str
    name: str
    value: object


def parse(text: str) -> Setting:
    """``module.NAME=VALUE`` as a :class:`Setting`, checked against the module as it is."""
    target, eq, literal = text.partition("=")
    module, dot, name = target.strip().rpartition(".")
    if not (eq and dot and module and name):
        raise ValueError(f"a setting is module.NAME=VALUE, not {text!r}")
    try:
        mod = importlib.import_module(f"vision.{module}")
    except ImportError:
        raise ValueError(f"no module vision.{module}") from None
    if not name.isupper() or name.startswith("_") or not hasattr(mod, name):
        raise ValueError(f"vision.{module} has no setting {name}")
    try:
        value = ast.literal_eval(literal.strip())
    except (ValueError, SyntaxError):
        raise ValueError(f"{module}.{name}: {literal.strip()!r} is not a Python literal") from None
    current = getattr(mod, name)
    # an int where a float is kept is a float; anything else must be of the constant's type
    if isinstance(current, float) and type(value) is int:
        value = float(value)
    if type(value) is not type(current):
        raise ValueError(f"{module}.{name} is a {type(current).__name__}, not {value!r}")
    return Setting(module, name, value)


def split_reader(spec: str) -> tuple[str, list[Setting]]:
    """A reader named with settings, ``PATH[@module.NAME=VALUE...]``: its path and settings."""
    path, *rest = spec.split("@")
    return path, [parse(text) for text in rest]


@contextmanager
def applied(settings: Sequence[Setting]) -> Iterator[None]:
    """``settings`` in place for the ``with`` block; the values before are put back after it,
    whatever happens in it."""
    before = []
    try:
        for s in settings:
            home = importlib.import_module(f"vision.{s.module}")
            current = getattr(home, s.name)
            # its copies: the very object under the same name in the vision modules loaded
            holders = [home] + [m for n, m in list(sys.modules.items())
                                if n.startswith("vision.") and m is not home
                                and getattr(m, s.name, None) is current]
            for mod in holders:
                before.append((mod, s.name, current))
                setattr(mod, s.name, s.value)
        yield
    finally:
        for mod, name, value in reversed(before):
            setattr(mod, name, value)
