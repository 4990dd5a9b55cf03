"""Reading an agent's input line off its screen, as captured from the pane. Pure text functions."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

__all__ = ["input_text", "looks_typed", "screen_hash"]


def _normal(text: str) -> str:
    return " ".join(text.split())


def input_text(lines: Sequence[str], cursor_y: int, marker: str) -> str:
    """The text in the agent's input box: from the last line at or above the cursor that starts
    with `marker` down to the cursor line, marker and continuation indent removed. Without a
    marker the cursor line alone is the input line."""
    if not lines:
        return ""
    cursor_y = max(0, min(cursor_y, len(lines) - 1))
    if not marker:
        return lines[cursor_y].strip()
    for start in range(cursor_y, -1, -1):
        stripped = lines[start].lstrip(" │|")
        if stripped.startswith(marker):
            first = stripped[len(marker) :]
            rest = [line.strip(" │|") for line in lines[start + 1 : cursor_y + 1]]
            return "\n".join([first.strip(), *rest]).strip()
    return ""


def looks_typed(box: str, last_line: str) -> bool:
    """The prompt's last line (or the tail of a long one) is still sitting in the input box."""
    box_n, line_n = _normal(box), _normal(last_line)
    if not box_n or not line_n:
        return False
    return line_n[-60:] in box_n


def screen_hash(lines: Sequence[str]) -> str:
    return hashlib.blake2b("\n".join(lines).encode(), digest_size=16).hexdigest()
