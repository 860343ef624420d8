"""Find the line of a dotted key in TOML text, so errors can say `file:line: key`.

tomllib does not report positions; this scanner understands the subset our files use
(table headers, `key = value` lines, comments), which is enough to point a person at the line.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"'.]+)\s*=")


def line_of_key(text: str, dotted_key: str) -> int | None:
    """1-based line number where ``dotted_key`` is defined (or its table, if the key is absent; or the key
    holding it as an inline table: ``settle = { timeout_s = 1e308 }``)."""
    parts = dotted_key.split(".")
    table_line = inline_line = None
    inline_depth = 0
    current: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0]
        header = _HEADER.match(line)
        if header:
            current = [p.strip().strip("\"'") for p in header.group(1).split(".")]
            if current == parts[: len(current)] and len(current) == len(parts) - 1:
                table_line = table_line or number
            if current == parts:
                return number
            continue
        key = _KEY.match(line)
        if key:
            full = current + [p.strip("\"'") for p in key.group(1).split(".")]
            if full == parts:
                return number
            if len(full) < len(parts) and full == parts[: len(full)] and len(full) > inline_depth:
                inline_line, inline_depth = number, len(full)
    return table_line or inline_line


_AT = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)\s*$")


def decode_error(exc: ValueError, text: str | None = None) -> tuple[int | None, str]:
    """(line, reason) of a ``tomllib.TOMLDecodeError``: Python 3.11-3.13 say the place only inside the
    message ("Invalid value (at line 3, column 9)"), so it is taken from there for ``file:line: reason``;
    "at end of document" is the last line of ``text`` when given."""
    message = str(exc)
    m = _AT.search(message)
    if not m:
        return getattr(exc, "lineno", None), message
    reason = message[: m.start()]
    reason = reason[:1].lower() + reason[1:]
    if m.group(1) is None:
        return (max(1, len(text.splitlines())) if text is not None else None), f"{reason} (at the end of the file)"
    return int(m.group(1)), f"{reason} (column {m.group(2)})"


def not_toml(source: str, exc: ValueError, text: str | None = None) -> str:
    """``file:line: not valid TOML: reason`` for a TOMLDecodeError of ``source`` (whose ``text`` it was)."""
    line, reason = decode_error(exc, text)
    return f"{source}:{line}: not valid TOML: {reason}" if line else f"{source}: not valid TOML: {reason}"
