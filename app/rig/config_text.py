"""The rig.toml text of the configuration a rig ran, for the session file's /config/rig_toml.

A RigConfig keeps the text it was read from, but the command line may change it after loading (`uartlab run
--speed 3`, `demo`'s 4x twin, `calibrate --seed`) and code may build one with no text at all. The embedded text
must say what ran: it is the file's own text, comments and all, when that is so; otherwise the file's text with
the [twin] table the rig ran in place of the file's, under a comment saying what changed, so ``parse_rig_config``
of it gives the rig that ran. A section that differs in a way TOML here cannot say (a
config built in code) is named in that comment with its values, never silently left out.
"""

from __future__ import annotations

import dataclasses
import re
from importlib import resources
from pathlib import Path

import tomli_w
from uartlab.app.rig.config import DEFAULT_FILE, RigConfig, parse_rig_config
from uartlab.drivers.interfaces import ConfigError


def effective_config_text(config: RigConfig) -> str:
    """TOML that reads back (``parse_rig_config``) as the configuration the rig ran."""
    text = config.text or (resources.files("uartlab.app") / "data" / DEFAULT_FILE).read_text(encoding="utf-8")
    source = Path(config.source)
    try:
        written = parse_rig_config(text, config.source, source.resolve().parent if source.is_file() else None)
    except ConfigError:
        return text   # its files moved since it was loaded: the text as it was read is the best record left
    if config.text and _same(written, config):
        return text
    notes = []
    if written.twin != config.twin:
        twin = {k: v for k, v in dataclasses.asdict(config.twin).items() if v is not None}
        changed = [f"{k} = {v!r}" for k, v in twin.items() if getattr(written.twin, k) != v]
        if config.twin.surface_angle_deg is None and written.twin.surface_angle_deg is not None:
            changed.append("surface_angle_deg removed")
        text = _with_table(text, "twin", twin)
        notes.append(f"[twin] as this rig ran it ({', '.join(changed)})")
    rest = dataclasses.replace(config, twin=written.twin, source=written.source, text=written.text)
    for f in dataclasses.fields(RigConfig):
        if f.name not in ("twin", "source", "text") and getattr(rest, f.name) != getattr(written, f.name):
            notes.append(f"[{f.name}] differs from this text (built in code): {getattr(config, f.name)!r}")
    origin = config.source if config.text else f"{DEFAULT_FILE} (the configuration was built in code)"
    header = [f"# {origin}, with what this rig ran written in:"] + [f"#   {n}" for n in notes]
    return "\n".join(header) + "\n" + text


def _with_table(text: str, name: str, values: dict) -> str:
    """The text with table [name] replaced by ``values`` (appended where it has none); the rest, comments
    included, as it was."""
    lines = text.splitlines(keepends=True)
    header = re.compile(rf"^\s*\[{re.escape(name)}\]\s*(#.*)?$")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    table = tomli_w.dumps({name: values})
    if start is None:
        return text + ("" if text.endswith("\n") else "\n") + "\n" + table
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^\s*\[", lines[i])), len(lines))
    return "".join(lines[:start]) + table + "\n" + "".join(lines[end:])


def _same(a: RigConfig, b: RigConfig) -> bool:
    return dataclasses.replace(a, source=b.source, text=b.text) == b
