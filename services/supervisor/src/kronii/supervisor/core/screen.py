"""Reading an agent's screen as the terminal really shows it. Pure text functions.

The pane is captured with its SGR attributes (`tmux capture-pane -e`), because text alone cannot
tell a placeholder from a draft: Codex draws "Ask Codex to do anything" in its input box dim, and
a person's unsent line in the same place normally. Dim text inside the input box is the agent's,
never a person's."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "InputBox",
    "StyledLine",
    "echo_count",
    "input_box",
    "input_text",
    "looks_typed",
    "parse_screen",
    "screen_hash",
]

# CSI sequences (SGR among them), OSC strings, and two-byte escapes.
_ESCAPE = re.compile(r"\x1b(?:\[([0-?]*)[ -/]*([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


@dataclass(frozen=True, slots=True)
class StyledLine:
    """One screen row: its text and, per character, whether it is drawn dim."""

    text: str
    dim: tuple[bool, ...]

    def plain_from(self, start: int) -> str:
        """The text from `start` with dim characters left out (as blanks, so columns hold)."""
        return "".join(" " if self.dim[i] else ch for i, ch in enumerate(self.text) if i >= start)


def _apply_sgr(params: str, dim: bool) -> bool:
    codes = [int(part) if part.isdigit() else 0 for part in params.split(";")] if params else [0]
    index = 0
    while index < len(codes):
        code = codes[index]
        if code == 0:
            dim = False
        elif code == 2:
            dim = True
        elif code == 22:
            dim = False
        elif code in (38, 48, 58):
            # Extended colours carry their own arguments: 5;N or 2;R;G;B.
            if index + 1 < len(codes) and codes[index + 1] == 5:
                index += 2
            elif index + 1 < len(codes) and codes[index + 1] == 2:
                index += 4
        index += 1
    return dim


def parse_screen(raw_lines: Sequence[str]) -> tuple[StyledLine, ...]:
    """Lines from `capture-pane -p -e` into text plus a dim mask. The attribute state carries
    over from one line to the next, as tmux emits it."""
    dim = False
    out: list[StyledLine] = []
    for raw in raw_lines:
        chars: list[str] = []
        mask: list[bool] = []
        position = 0
        for match in _ESCAPE.finditer(raw):
            for ch in raw[position : match.start()]:
                chars.append(ch)
                mask.append(dim)
            if match.group(2) == "m":
                dim = _apply_sgr(match.group(1) or "", dim)
            position = match.end()
        for ch in raw[position:]:
            chars.append(ch)
            mask.append(dim)
        out.append(StyledLine("".join(chars), tuple(mask)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class InputBox:
    """What sits in the agent's input box. `found` is False when no input line is at the cursor;
    then `marker_above` says whether the agent drew its input line before (a REPL that is running
    what it was given: its last input line is in the transcript and the cursor is below it)."""

    found: bool
    text: str = ""
    # The rows the box spans; everything above is the transcript.
    top: int = 0
    bottom: int = 0
    placeholder: bool = False
    marker_above: bool = False


def _box_start(line: str, marker: str) -> int | None:
    """Column after the marker when `line` starts an input box, else None. The marker starts the
    line, or follows output that did not end its line ("step 1 >>> "), set off by blanks."""
    stripped = line.lstrip(" │|")
    if stripped.startswith(marker):
        return len(line) - len(stripped) + len(marker)
    inside = line.find(f" {marker} ")
    if inside < 0 and line.endswith(f" {marker}"):
        inside = len(line) - len(marker) - 1
    return None if inside < 0 else inside + 1 + len(marker)


def _continues(line: StyledLine, column: int, continuation: str) -> bool:
    """A row below the marker's row that belongs to the same input: blank, indented under the
    input's text (Codex), or starting with the kind's continuation marker (Python's "...")."""
    text = line.text
    if not text.strip() or not text[:column].strip(" │|"):
        return True
    return bool(continuation) and text.lstrip(" │|").startswith(continuation)


def input_box(
    lines: Sequence[StyledLine],
    cursor_y: int,
    marker: str,
    *,
    cursor_x: int | None = None,
    continuation: str = "",
) -> InputBox:
    """The input box: from the last line at or above the cursor that starts with `marker` down to
    the cursor line, marker and continuation indent removed, dim text left out. The cursor must
    be in it: every row between is a continuation of the marker's row, and the cursor stands at or
    after the marker's column (when `cursor_x` is known). A cursor anywhere else (a REPL running
    the line it was given, its output below) means no input line is on screen. Without a marker the
    cursor line alone is the input line."""
    if not lines:
        return InputBox(found=False)
    cursor_y = max(0, min(cursor_y, len(lines) - 1))
    if not marker:
        line = lines[cursor_y]
        text = line.plain_from(0).strip()
        return InputBox(True, text, cursor_y, cursor_y, placeholder=not text and line.text.strip() != "")
    for start in range(cursor_y, -1, -1):
        column = _box_start(lines[start].text, marker)
        if column is None:
            continue
        below = lines[start + 1 : cursor_y + 1]
        at_cursor = cursor_x is None or cursor_x >= column
        if not at_cursor or not all(_continues(line, column, continuation) for line in below):
            return InputBox(found=False, top=cursor_y + 1, bottom=cursor_y + 1, marker_above=True)
        first = lines[start].plain_from(column).strip()
        rest = [_continued_text(line, continuation) for line in below]
        text = "\n".join([first, *rest]).strip()
        shown = lines[start].text[column:].strip()
        return InputBox(True, text, start, cursor_y, placeholder=not text and bool(shown))
    return InputBox(found=False)


def _continued_text(line: StyledLine, continuation: str) -> str:
    text = line.plain_from(0).strip(" │|")
    if continuation and text.startswith(continuation):
        text = text[len(continuation) :].strip()
    return text


def input_text(lines: Sequence[str], cursor_y: int, marker: str) -> str:
    """The box's text from plain lines (no attributes known: nothing is taken for a placeholder)."""
    return input_box([StyledLine(line, (False,) * len(line)) for line in lines], cursor_y, marker).text


def _normal(text: str) -> str:
    return " ".join(text.split())


def looks_typed(box: str, last_line: str) -> bool:
    """The prompt's last line (or the tail of a long one) is still sitting in the input box."""
    box_n, line_n = _normal(box), _normal(last_line)
    if not box_n or not line_n:
        return False
    return line_n[-60:] in box_n


def echo_count(lines: Sequence[StyledLine], above: int, needle: str) -> int:
    """How often `needle` shows in the rows above the input box: the agent's transcript, where an
    accepted prompt is echoed (or listed as queued)."""
    needle_n = _normal(needle)
    if not needle_n:
        return 0
    return sum(_normal(line.text).count(needle_n) for line in lines[: max(0, above)])


def screen_hash(lines: Sequence[str]) -> str:
    return hashlib.blake2b("\n".join(lines).encode(), digest_size=16).hexdigest()
