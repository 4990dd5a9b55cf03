"""An agent's own record of the prompts it took, as its kind declares it (`history_files`,
`history_field`): where the file is, in the agent's own environment, and whether what it wrote
since a mark names a prompt. An agent that keeps such a record acknowledges a delivery by itself;
`generic` declares none and is judged by its screen alone. Pure: the adapter reads the bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = ["HistoryMark", "history_path", "names_prompt", "prompts_in"]


@dataclass(frozen=True, slots=True)
class HistoryMark:
    """Where an agent's history file ended just before a prompt was typed."""

    path: str
    size: int
    field: str


_VARIABLE = re.compile(r"\$(\w+)|\$\{(\w+)\}")


def history_path(templates: Sequence[str], env: Mapping[str, str], cwd: str) -> str:
    """The first template whose variables are all set in the agent's environment, expanded (a
    relative result is taken from the agent's directory); "" when none is."""
    for template in templates:
        names = [a or b for a, b in _VARIABLE.findall(template)]
        if any(not env.get(name) for name in names):
            continue
        path = _VARIABLE.sub(lambda m: env[m.group(1) or m.group(2)], template)
        if not PurePosixPath(path).is_absolute():
            if not cwd:
                continue
            path = str(PurePosixPath(cwd) / path)
        return path
    return ""


def prompts_in(data: bytes, field: str) -> list[str]:
    """The prompts in what a history file gained: one per JSON line's `field`, or one per line
    when the kind names no field. A line cut off by a write in progress is left out."""
    out: list[str] = []
    for raw in data.decode("utf-8", errors="replace").splitlines():
        if not raw.strip():
            continue
        if not field:
            out.append(raw)
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get(field), str):
            out.append(entry[field])
    return out


def _normal(text: str) -> str:
    return " ".join(text.split())


def names_prompt(entries: Sequence[str], prompt: str) -> bool:
    """One entry is the prompt (blanks aside): the agent took it."""
    wanted = _normal(prompt)
    return bool(wanted) and any(_normal(entry) == wanted for entry in entries)
