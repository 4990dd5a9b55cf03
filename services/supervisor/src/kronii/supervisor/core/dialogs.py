"""A question put to a person on an agent's screen, recognised by the formats every dialog shares
rather than one agent's wording: a choice list whose picked entry is marked (a pointer or a radio
button; a numbered list without a mark is text), a yes/no question, "press enter to continue",
"↑/↓ to navigate", plus the texts an agent kind declares ("esc to cancel" is not one: Ink agents
show it while they work). Pure text functions."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["BORDER", "RULE", "dialog_line", "unframe"]

# Frame and rule characters: not text of a row.
BORDER = " │|┃║╭╮╰╯┌┐└┘╔╗╚╝─━═▏▕"
# A horizontal rule or a box's top edge.
RULE = re.compile(r"^\s*[─━═\-_╭┌╔┏+]{3,}")


_QUESTION = re.compile(
    r"\(\s*\[?y(?:es)?\]?\s*/\s*\[?n(?:o)?\]?\s*\)|\[\s*y(?:es)?\s*/\s*n(?:o)?\s*\]|\(y\)es|"
    r"\b(?:press|hit)\s+(?:enter|return)\s+to\s+(?:continue|confirm|select|proceed|accept)|"
    r"\b(?:enter|return|⏎)\s+to\s+(?:confirm|select|continue|proceed|accept|choose)\b|"
    r"(?:↑\s*/?\s*↓|\barrow\s+keys\b|\bup/down\b).{0,30}\b(?:navigate|move|select|choose)|"
    r"\bdo\s+you\s+(?:trust|want\s+to\s+(?:proceed|continue|allow|run))\b|"
    r"\b(?:select|choose)\s+(?:an?|the|your)\s+(?:\w+\s+)?(?:method|option|theme|provider|account|model)\b",
    re.IGNORECASE,
)
# A selection marker: a pointer (">", U+203A, U+276F, "▶", "→") or a radio button.
_MARK = r"(?:[>\u203a\u276f▶▸→]|[●○◉◯◆◇])"
_NUMBERED = re.compile(rf"^\s*(?:{_MARK}\s*)?(?:\d{{1,2}}[.)]|\([a-z0-9]\)|\[[ xX✓✔*]\])\s+\S")
_MARKED_NUMBER = re.compile(rf"^\s*{_MARK}\s*(?:\d{{1,2}}[.)]|\([a-z0-9]\))\s+\S")
_RADIO = re.compile(r"^\s*[●○◉◯◆◇]\s+\S")
_POINTER = re.compile(r"^(\s*)[>\u203a\u276f▶▸→]\s+\S")


_FRAME = str.maketrans(dict.fromkeys(BORDER[1:], " "))


def unframe(row: str) -> str:
    """The row with its frame drawn as blanks, so columns hold."""
    return row.translate(_FRAME).rstrip()


def _choices(rows: Sequence[str]) -> str:
    """The first row of a choice list waiting for a pick, else "". A list a person picks from
    shows which entry is picked: a run of numbered entries with a pointer or a radio button on one
    of them, two radio buttons, or a pointer with at least two entries aligned under its text. A
    numbered list without a mark is text (tips, steps of an answer)."""
    lines = [unframe(row) for row in rows]
    for run in _runs(lines, _NUMBERED):
        if len(run) >= 2 and any(_MARKED_NUMBER.match(row) for row in run):
            return run[0].strip()
    for run in _runs(lines, _RADIO):
        if len(run) >= 2:
            return run[0].strip()
    for index, row in enumerate(lines):
        pointer = _POINTER.match(row)
        if pointer is None:
            continue
        column = len(pointer.group(1)) + 2
        near = _same_panel(rows, lines, index)
        aligned = [r for r in near if len(r) > column and not r[:column].strip() and r[column] != " "]
        if len(aligned) >= 2:
            return row.strip()
    return ""


def _runs(lines: Sequence[str], entry: re.Pattern[str]) -> list[list[str]]:
    """Runs of lines matching `entry`, a blank line or a description between entries allowed."""
    runs: list[list[str]] = []
    gap = 99
    for line in lines:
        if entry.match(line):
            if gap > 2:
                runs.append([])
            runs[-1].append(line)
            gap = 0
        else:
            gap += 1
    return runs


def _same_panel(rows: Sequence[str], lines: Sequence[str], index: int, reach: int = 6) -> list[str]:
    """The lines around `index` up to `reach` away, not past a horizontal rule (an input line
    between two rules is not a list with the footer under it)."""
    out: list[str] = []
    for step in (-1, 1):
        at = index + step
        while 0 <= at < len(lines) and abs(at - index) <= reach and not RULE.match(rows[at]):
            out.append(lines[at])
            at += step
    return out


def _is_choice(row: str) -> bool:
    row = unframe(row)
    return bool(_NUMBERED.match(row) or _RADIO.match(row) or _POINTER.match(row))


def dialog_line(rows: Sequence[str], known: Sequence[str] = (), *, choices: bool = True) -> str:
    """The first line of a question waiting for a person among `rows` (its title when the first
    sign is a choice list: the nearest line above it), or "". `known` adds an agent kind's own
    dialog texts (case-insensitive) to the formats every dialog shares. `choices=False` leaves
    choice lists out: for rows of a transcript, where an echoed message hanging under its "> "
    looks like one, and only a question's own words count."""
    lines = [unframe(row).strip() for row in rows]
    wanted = [k.lower() for k in known if k]
    chosen = _choices(rows) if choices else ""
    first = next(
        (
            i
            for i, line in enumerate(lines)
            if _QUESTION.search(line) or (chosen and line == chosen) or any(k in line.lower() for k in wanted)
        ),
        None,
    )
    if first is None:
        return ""
    if _is_choice(lines[first]):
        return _first_line_above(rows, lines, first) or lines[first]
    return lines[first]


def _first_line_above(rows: Sequence[str], lines: Sequence[str], first: int, reach: int = 12) -> str:
    """The dialog's first line: the topmost line of the block a choice list hangs under, up to a
    rule or a frame's top, two blank lines, or drawn art (a logo), within `reach` rows."""
    top = ""
    blanks = 0
    for above in range(first - 1, max(-1, first - reach - 1), -1):
        if RULE.match(rows[above]):
            break
        line = lines[above]
        if not line:
            blanks += 1
            if blanks >= 2:
                break
            continue
        blanks = 0
        if sum(ch.isalnum() for ch in line) < len(line) / 3:
            break  # art or a row of dots: not words
        if not _is_choice(line):
            top = line
    return top
