"""A VNC viewer's input as x11vnc hands it over with -pipeinput, one line per event:

    Keysym <client> <down 1|0> <keysym> <name> <hint>
    Pointer <client> <x> <y> <button mask> <hint>

A negative client number is a view-only viewer's event, which x11vnc itself would have discarded;
lines starting with '#' are x11vnc's description of the format. Anything else is not input."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ViewerKey", "ViewerPointer", "buttons_changed", "parse_viewer_line"]

_BUTTONS = 8


@dataclass(frozen=True)
class ViewerKey:
    keysym: int
    down: bool


@dataclass(frozen=True)
class ViewerPointer:
    x: int
    y: int
    mask: int


def parse_viewer_line(line: str) -> ViewerKey | ViewerPointer | None:
    """The event on one line, or None for comments, view-only viewers' events and anything malformed."""
    fields = line.split()
    try:
        if len(fields) >= 4 and fields[0] == "Keysym" and int(fields[1]) >= 0 and fields[2] in ("0", "1"):
            return ViewerKey(int(fields[3]), fields[2] == "1")
        if len(fields) >= 5 and fields[0] == "Pointer" and int(fields[1]) >= 0:
            return ViewerPointer(int(fields[2]), int(fields[3]), int(fields[4]))
    except ValueError:
        return None
    return None


def buttons_changed(before: int, after: int) -> list[tuple[int, bool]]:
    """(button 1-8, pressed) for each button whose bit differs between two masks, releases first."""
    changes = [(bit + 1, bool(after >> bit & 1)) for bit in range(_BUTTONS) if (before ^ after) >> bit & 1]
    return sorted(changes, key=lambda change: change[1])
