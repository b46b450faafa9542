"""Reading TOML with errors that name the line at fault.

``tomllib`` reports syntax errors with their line but keeps no positions for values, so a value
that parses but is wrong (a negative pay, a misspelt hand) is located here by finding its key in
the source text, within the right table.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A configuration or paytable file that is malformed; the message names file and line."""


@dataclass(frozen=True)
class TomlSource:
    """The text of a TOML document and where it came from, for error messages."""

    text: str
    origin: str

    @classmethod
    def from_path(cls, path: str | Path) -> TomlSource:
        p = Path(path)
        try:
            return cls(p.read_text(encoding="utf-8"), str(p))
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{p}: not UTF-8 text") from None

    def parse(self) -> dict[str, Any]:
        try:
            return tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{self.origin}: {exc}") from None

    def line_of(self, table: str | None, key: str, occurrence: int = 0) -> int | None:
        """1-based line of ``key = ...`` in ``[table]`` (or ``[[table]]`` number ``occurrence``).

        ``table=None`` means the top level. Dotted tables (``[a.b]``) are matched by their full
        name. Returns None when the key is not written in the file (a default).
        """
        header = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
        key_re = re.compile(rf"^\s*\"?{re.escape(key)}\"?\s*=")
        current: str | None = None
        seen = -1
        for number, line in enumerate(self.text.splitlines(), start=1):
            m = header.match(line)
            if m:
                current = m.group(1)
                if current == table:
                    seen += 1
                continue
            in_table = current == table and (table is None or seen == occurrence)
            if in_table and key_re.match(line):
                return number
        return None

    def error(self, message: str, table: str | None = None, key: str | None = None,
              occurrence: int = 0) -> ConfigError:
        line = self.line_of(table, key, occurrence) if key else None
        where = f"{self.origin}, line {line}" if line else self.origin
        return ConfigError(f"{where}: {message}")
