"""Write a parameter document into the TOML text it was read from, keeping that text's comments.

A parameter file says where each value comes from in the comment beside it (``# paper T3``). Written back
with a plain serializer those comments are lost; here the original text is the template (tomlkit keeps its
layout): a value that is unchanged keeps its literal and its comment, so a file read and written again is
byte for byte the same; a changed value is written exactly (shortest round-trip repr) and its comment says
what it replaced (``was 0.3: paper T3``), because the old provenance no longer describes it. Keys the
template lacks are added (a table added among values as an inline table, like them a value); keys the
document lacks are removed. One number where the document has a table or list of equal numbers stays one
number (the files' "one value for all" form).
"""

from __future__ import annotations

import math
from typing import Any

import tomlkit
from tomlkit.items import Item, Table

REL_TOL = 1e-12   # a value read from the text and scaled to SI and back differs from its literal by ulps


def commented_toml(template: str, doc: dict[str, Any]) -> str:
    """``doc`` as TOML laid out and commented as ``template``."""
    out = tomlkit.parse(template)
    _merge(out, doc)
    return tomlkit.dumps(out)


def _merge(table, doc: dict[str, Any], top: bool = True) -> None:
    for key in [k for k in table if k not in doc]:
        del table[key]
    for key, value in doc.items():
        if key not in table:
            table[key] = _inline(value) if not top and _holds_values(doc) and isinstance(value, dict) else value
            continue
        old = table[key]
        if isinstance(value, dict) and isinstance(old, Table):   # a section: key by key
            _merge(old, value, top=False)
        elif not _same(old.unwrap() if isinstance(old, Item) else old, value):
            table[key] = _replacing(old, value)


def _holds_values(doc: dict[str, Any]) -> bool:
    """Whether a table holds values besides tables: a table added among values is one of them, inline
    (a section's tables, like the top level's, stay sections)."""
    return any(not isinstance(v, dict) for v in doc.values())


def _inline(value: dict[str, Any]) -> Item:
    inline = tomlkit.inline_table()
    inline.update(value)
    return inline


def _replacing(old, value) -> Item:
    # where a value stood: a value, inline
    new = _inline(value) if isinstance(value, dict) and not isinstance(old, Table) else tomlkit.item(value)
    if isinstance(old, Item) and not isinstance(old, Table):
        was = old.as_string().strip()
        comment = old.trivia.comment.lstrip("#").strip()
        new.comment(f"was {was}" + (f": {comment}" if comment else ""))
    return new


def _same(old, new) -> bool:
    if isinstance(old, bool) or isinstance(new, bool):
        return old is new
    if isinstance(old, (int, float)) and isinstance(new, (list, dict)):  # one value given for all of them
        return len(new) > 0 and all(_same(old, v) for v in (new.values() if isinstance(new, dict) else new))
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return math.isclose(old, new, rel_tol=REL_TOL, abs_tol=0.0)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new, strict=True))
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same(old[k], new[k]) for k in old)
    return old == new
