"""An agent's own idle screen, and what differs from it: a person's draft, a dialog, its output.

What an agent draws while it waits for input is its own, whatever it looks like: a prompt glyph,
a placeholder in any colour, a bordered box, a footer. kronii does not know these screens; it
remembers one (taken when the screen is still and no person pressed a key since) and reads every
later look against it:

- Text in the input area that differs from the idle screen is a person's draft only when an
  attached person's client sent keys after the idle screen was taken (tmux's `client_activity`;
  the supervisor's own keys come from its control client and never count).
- A change with no person's keys is the agent's own: its output (the screen is taken as the new
  idle screen once it is still), or a dialog (choices, a yes/no question: nothing is typed).

The input line is found from the idle screen's layout. INLINE: a visible cursor after a prompt on
the last drawn row, or with only blank rows (and a docked toolbar) under it (a REPL, a shell): the
input line is the cursor's row, its prompt the text before the cursor. BOX: anything else (a box
with a footer under it, a cursor parked elsewhere or hidden): every candidate row is read where it
is now (a visible cursor's row that holds text, the lowest row near the bottom that starts like an
input line), else the bottom block counted up from the last drawn row. A cursor is a hint, never
the proof. Pure functions and values; times are epoch seconds passed in."""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kronii.supervisor.core.dialogs import BORDER, dialog_line

__all__ = [
    "AREA_MAX_ROWS",
    "NO_INPUT_LINE",
    "OWN_TEXT_PENDING",
    "IdleScreen",
    "Layout",
    "ScreenMemory",
    "ScreenRead",
    "Shot",
    "Verdict",
    "awaits_more",
    "dialog_line",
    "draft_text",
    "holds_typed",
    "idle_from",
    "input_line_intact",
    "locate",
    "normal",
    "person_since",
    "read",
    "same_screen",
    "shows_typed",
]

# The most rows an input area (a box and its footer) is taken to span.
AREA_MAX_ROWS = 12
# A person's keys this recent mean the screen may still be catching up with them.
SETTLE_SECS = 1.5

_BORDER = BORDER
_DIGITS = re.compile(r"\d+")
# Characters that take no room (a zero-width space after a drawn cursor, a word joiner).
_INVISIBLE = re.compile("[\u200b-\u200f\u2060\ufeff]")
_SPACE = re.compile(r"\s+")
_BOX_TOP = re.compile(r"^\s*[╭┌╔┏+]")


class Layout(enum.StrEnum):
    INLINE = "inline"
    BOX = "box"


@dataclass(frozen=True, slots=True)
class Shot:
    """One look at the pane: its rows as plain text, the cursor, when, and the newest key an
    attached person's client sent (tmux counts whole seconds)."""

    rows: tuple[str, ...]
    cursor_x: int
    cursor_y: int
    at: float
    person_at: float | None = None
    # Whether the terminal shows the cursor: a hidden one (parked anywhere) says nothing.
    cursor_visible: bool = True

    def same_picture(self, other: Shot) -> bool:
        return self.rows == other.rows and (self.cursor_x, self.cursor_y) == (other.cursor_x, other.cursor_y)


@dataclass(frozen=True, slots=True)
class IdleScreen:
    rows: tuple[str, ...]
    cursor_x: int
    cursor_y: int
    at: float
    layout: Layout
    # BOX: the input line's rows, counted up from the last filled row (0 is the last).
    rows_at: tuple[int, ...] = (0,)
    # BOX: how each possible input row was found ("cursor", "glyph") and what it showed.
    inputs: tuple[tuple[str, str], ...] = ()
    # INLINE: the prompt before the cursor, normalised.
    prompt: str = ""


def normal(row: str) -> str:
    """A row as compared: borders and blanks at its ends gone, runs of blanks one, digits 0 (a
    prompt's counter, a context gauge or a clock is the same screen)."""
    return _DIGITS.sub("0", _SPACE.sub(" ", _INVISIBLE.sub("", row).strip(_BORDER)))


def _last_filled(rows: Sequence[str]) -> int:
    for index in range(len(rows) - 1, -1, -1):
        if rows[index].strip():
            return index
    return -1


def person_since(person_at: float | None, at: float) -> bool:
    """A person's key may have come at or after `at` (tmux gives whole seconds: the same second
    counts as after)."""
    return person_at is not None and person_at >= math.floor(at)


# How an input line starts once its border is left out: a prompt glyph (">", U+203A, U+276F, "»",
# "$", "%", "λ", ">>>") or a REPL's numbered prompt ("In [3]:", "irb(main):001>").
_PROMPT = re.compile(r"^(?:[>\u203a\u276f»→➜$%#λ]|>>>|\.\.\.|In \[\d+\]:|\w+\(\w+\):\d+[>*])(?:\s|$)")


def _candidates(rows: Sequence[str], last: int, cursor_y: int | None) -> dict[str, int]:
    """Rows that may hold the input line, by how each was found: a visible cursor's row among the
    drawn rows, when that row holds anything (a cursor parked on a blank row under the box is no
    input line); the lowest row near the bottom that starts like an input line (a prompt glyph).
    Both are read: a cursor is a hint, never the proof."""
    found: dict[str, int] = {}
    if cursor_y is not None and 0 <= cursor_y <= last and rows[cursor_y].strip():
        found["cursor"] = cursor_y
    floor = max(0, last - AREA_MAX_ROWS + 1)
    glyph = next(
        (i for i in range(last, floor - 1, -1) if _PROMPT.match(rows[i].strip(_BORDER).lstrip())), None
    )
    if glyph is not None:
        found["glyph"] = glyph
    return found


def _input_rows(rows: Sequence[str], last: int, cursor_y: int | None) -> tuple[int, ...]:
    """The input line's possible rows, counted up from the last filled row (_candidates), else the
    whole bottom block, up to the blank row above it. A footer, a status line or a hint under the
    input line is not in it: they change by themselves."""
    found = _candidates(rows, last, cursor_y)
    if found:
        return tuple(sorted({last - row for row in found.values()}))
    floor = max(0, last - AREA_MAX_ROWS + 1)
    top = last
    while top > floor and rows[top - 1].strip():
        top -= 1
    return tuple(range(last - top + 1))


def _inline(shot: Shot, last: int) -> bool:
    """A visible cursor after a prompt on the last drawn row, or on a row with blank rows under it
    (a toolbar may be docked at the window's foot, as ptpython's is)."""
    y = shot.cursor_y
    if not shot.cursor_visible or shot.cursor_x <= 0 or not 0 <= y <= last or not shot.rows[y].strip():
        return False
    return y == last or not shot.rows[y + 1].strip()


def idle_from(shot: Shot) -> IdleScreen:
    """The layout of an idle screen and its input area."""
    rows = shot.rows
    last = _last_filled(rows)
    if _inline(shot, last):
        prompt = normal(rows[shot.cursor_y][: shot.cursor_x])
        return IdleScreen(rows, shot.cursor_x, shot.cursor_y, shot.at, Layout.INLINE, (0,), prompt=prompt)
    cursor = shot.cursor_y if shot.cursor_visible else None
    at_rows = _input_rows(rows, last, cursor)
    inputs = tuple((how, rows[row]) for how, row in _candidates(rows, last, cursor).items())
    return IdleScreen(rows, shot.cursor_x, shot.cursor_y, shot.at, Layout.BOX, at_rows, inputs=inputs)


def _new_part(now: str, then: str) -> str:
    """What `now` holds beyond `then`: the row after the idle row when it starts with it (a
    prompt), else after their common start cut back to a word (a placeholder's first letters
    may be the draft's too)."""
    a, b = normal(now), normal(then)
    if b and a.startswith(b):
        return a[len(b) :].strip()
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    start = a.rfind(" ", 0, start + 1) + 1 if start < len(a) else start
    return a[start:].strip()


def _inline_draft(idle: IdleScreen, shot: Shot) -> str:
    rows = shot.rows
    if not 0 <= shot.cursor_y < len(rows):
        return ""
    line = rows[shot.cursor_y]
    if normal(line) == idle.prompt:
        return ""
    if normal(line).startswith(idle.prompt) and idle.prompt:
        return normal(line)[len(idle.prompt) :].strip()
    # Not the prompt's row (a continuation line, a program reading its input): all of it.
    return normal(line)


def _box_draft(idle: IdleScreen, shot: Shot) -> str:
    """The input line as it is now against the idle one. Where the line can be found again (a
    visible cursor, a prompt glyph) it is read where it is now: a window resized by a person's
    terminal moves it. Else the idle screen's rows, counted up from the bottom."""
    then_last, now_last = _last_filled(idle.rows), _last_filled(shot.rows)
    found = _candidates(shot.rows, now_last, shot.cursor_y if shot.cursor_visible else None)
    pairs = [(shot.rows[found[how]], then) for how, then in idle.inputs if how in found]
    if not pairs:
        for offset in sorted(idle.rows_at, reverse=True):
            then = idle.rows[then_last - offset] if then_last - offset >= 0 else ""
            now = shot.rows[now_last - offset] if now_last - offset >= 0 else ""
            pairs.append((now, then))
    parts = [_new_part(now, then) for now, then in pairs if normal(now) != normal(then)]
    return "\n".join(part for part in parts if part)


def draft_text(idle: IdleScreen, shot: Shot) -> str:
    """What the input area holds that the idle screen did not ("" when it looks as it did)."""
    return _inline_draft(idle, shot) if idle.layout is Layout.INLINE else _box_draft(idle, shot)


def input_line_intact(idle: IdleScreen, shot: Shot) -> bool:
    """The idle screen's input line (the lowest row that starts like one) and every row under it
    are still drawn as they were, wherever they are now. A pick list takes the input line's place,
    so while it shows, what changed above it is the agent's transcript (an echoed message whose
    lines hang under its "> " reads like a pick list); a cursor that moved while the agent drew is
    no change of the line. The rows under it count too: a box without a prompt glyph leaves the
    lowest glyph row in the transcript, and a dialog that replaces that box changes what is under
    it."""
    if idle.layout is not Layout.BOX:
        return False
    then = _input_line_and_below(idle.rows)
    return then is not None and then == _input_line_and_below(shot.rows)


def _input_line_and_below(rows: Sequence[str]) -> tuple[str, ...] | None:
    last = _last_filled(rows)
    glyph = _candidates(rows, last, None).get("glyph")
    if glyph is None:
        return None
    return tuple(normal(row) for row in rows[glyph : last + 1] if row.strip())


def _changed_rows(idle: IdleScreen, shot: Shot) -> list[str]:
    """The rows of `shot` not in the idle screen (compared as sets of normalised rows: a transcript
    that scrolled is not a change)."""
    before = {normal(row) for row in idle.rows}
    return [row for row in shot.rows if row.strip() and normal(row) not in before]


def _area_rows(idle: IdleScreen, shot: Shot) -> list[str]:
    last = _last_filled(shot.rows)
    if idle.layout is Layout.INLINE:
        low = max(0, shot.cursor_y - AREA_MAX_ROWS + 1)
        return list(shot.rows[low : shot.cursor_y + 1]) + list(shot.rows[shot.cursor_y + 1 : last + 1])
    return list(shot.rows[max(0, last - AREA_MAX_ROWS + 1) : last + 1])


# ---- the memory of one pane, and one look read against it ----------------------------------------


class Verdict(enum.StrEnum):
    IDLE = "idle"
    DRAFT = "draft"
    # The agent's screen is changing by itself (its output): look again shortly.
    CHANGING = "changing"
    BLOCKED = "blocked"
    # Nothing drawn yet, or not seen still: look again shortly.
    UNSETTLED = "unsettled"
    # Its input line is not on screen: it runs what it was given.
    BUSY = "busy"


NO_INPUT_LINE = "its input line is not on screen: it is running what it was given"
OWN_TEXT_PENDING = "the supervisor's own prompt is in its input line, not yet taken or taken back"


@dataclass(frozen=True, slots=True)
class ScreenMemory:
    idle: IdleScreen | None = None
    last: Shot | None = None


@dataclass(frozen=True, slots=True)
class ScreenRead:
    verdict: Verdict
    memory: ScreenMemory
    draft: str = ""
    evidence: str = ""


def _settled(memory: ScreenMemory, shot: Shot) -> bool:
    """The screen is still (as the last look saw it) and no person's key is fresh."""
    last = memory.last
    still = last is not None and last.same_picture(shot)
    fresh_key = shot.person_at is not None and shot.at - shot.person_at < SETTLE_SECS
    return still and not fresh_key


def _take_idle(memory: ScreenMemory, shot: Shot) -> ScreenRead:
    return ScreenRead(Verdict.IDLE, ScreenMemory(idle_from(shot), shot))


def read(
    memory: ScreenMemory, shot: Shot, known_dialogs: Sequence[str] = (), *, own_text: bool = False
) -> ScreenRead:
    """One look read against the pane's memory; the memory to keep for the next look. `own_text`:
    the supervisor's own prompt is typed into the pane and not yet known taken or taken back: a
    still screen is then never the agent's new idle screen (its input line holds that prompt, and
    were it taken for idle, the prompt still sitting in it would read as sent)."""
    looked = replace(memory, last=shot)
    if _last_filled(shot.rows) < 0:
        return ScreenRead(Verdict.UNSETTLED, looked, evidence="nothing is drawn on the pane yet")
    idle = memory.idle
    if own_text and not _looks_idle(idle, shot):
        return ScreenRead(Verdict.CHANGING, looked, evidence=OWN_TEXT_PENDING)
    if idle is None:
        return _first_idle(memory, shot, looked, known_dialogs)
    if person_since(shot.person_at, idle.at):
        draft = draft_text(idle, shot)
        if draft:
            return ScreenRead(Verdict.DRAFT, looked, draft=draft)
        # The person's text is sent or gone: the screen is the agent's again once it is still.
        return _settle(memory, shot, looked, "the screen is changing after a person's keys")
    if _looks_idle(idle, shot):
        return ScreenRead(Verdict.IDLE, looked)
    question = _new_question(idle, shot, known_dialogs)
    if question:
        return ScreenRead(Verdict.BLOCKED, looked, evidence=question)
    return _settle(memory, shot, looked, "the agent's screen is changing (its output)")


def _looks_idle(idle: IdleScreen | None, shot: Shot) -> bool:
    return idle is not None and [normal(r) for r in shot.rows] == [normal(r) for r in idle.rows]


def _new_question(idle: IdleScreen, shot: Shot, known_dialogs: Sequence[str]) -> str:
    """A question put since the idle screen, as its first line reads on the whole screen (the
    changed rows alone lose the blank rows and the title a list hangs under); "" when there is
    none. Where the idle screen has an input line, a question is looked for only once that line
    changed (the agent's output above it is not one); while it is still drawn as it was, a choice
    list above it is transcript (an echoed message hanging under its "> " reads as one) and only a
    question's own words count. Where the idle screen showed no input line at all (an agent still
    drawing its first screen when it was taken), whatever appeared since is read."""
    if _input_line_known(idle):
        if not draft_text(idle, shot):
            return ""
        choices = not input_line_intact(idle, shot)
    else:
        choices = True
    question = dialog_line(_changed_rows(idle, shot), known_dialogs, choices=choices) or dialog_line(
        _area_rows(idle, shot), known_dialogs, choices=choices
    )
    return (dialog_line(shot.rows, known_dialogs, choices=choices) or question) if question else ""


def _input_line_known(idle: IdleScreen) -> bool:
    """The idle screen shows where input goes: a REPL's prompt at the cursor, or a row that starts
    like an input line or holds a visible cursor."""
    return idle.layout is Layout.INLINE or bool(idle.inputs)


def _settle(memory: ScreenMemory, shot: Shot, looked: ScreenMemory, changing: str) -> ScreenRead:
    """A screen that is the agent's: its new idle screen once still, unless its input line went
    away (a REPL running a line: what is typed now would go to the running program)."""
    idle = memory.idle
    if idle is not None and idle.layout is Layout.INLINE and idle_from(shot).layout is Layout.BOX:
        return ScreenRead(Verdict.BUSY, looked, evidence=NO_INPUT_LINE)
    if _settled(memory, shot):
        return _take_idle(memory, shot)
    return ScreenRead(Verdict.CHANGING, looked, evidence=changing)


def _first_idle(
    memory: ScreenMemory, shot: Shot, looked: ScreenMemory, known_dialogs: Sequence[str] = ()
) -> ScreenRead:
    """No idle screen yet: a question on it blocks; a still screen with no fresh key becomes it."""
    question = dialog_line(shot.rows, known_dialogs)
    if question:
        return ScreenRead(Verdict.BLOCKED, looked, evidence=question)
    if _settled(memory, shot):
        return _take_idle(memory, shot)
    return ScreenRead(Verdict.UNSETTLED, looked, evidence="the agent's screen is not still yet")


# ---- finding the text the supervisor typed --------------------------------------------------------

_PASTE_CHIP = re.compile(r"\[(?:Pasted|Paste)[^\]]*\]", re.IGNORECASE)


def _compact(text: str) -> str:
    return "".join(_INVISIBLE.sub("", text).split()).strip(_BORDER)


def locate(rows: Sequence[str], last_line: str, *, chips: bool = True) -> int | None:
    """The lowest row that ends with the typed text's last line (a long line may wrap over rows,
    so up to three rows are read together, borders and blanks left out), or a collapsed-paste chip
    ("[Pasted text #1 +20 lines]"); None when it shows nowhere."""
    needle = _compact(last_line)[-30:]
    for index in range(len(rows) - 1, -1, -1):
        if not rows[index].strip():
            continue
        joined = "".join(_compact(row.strip(_BORDER)) for row in rows[max(0, index - 2) : index + 1])
        if needle and joined.endswith(needle):
            return index
        if chips and _PASTE_CHIP.search(rows[index]):
            return index
    return None


def holds_typed(idle: IdleScreen | None, shot: Shot, last_line: str, typed_lines: int = 1) -> bool:
    """The input area holds the text the supervisor typed (its last line, or a collapsed-paste
    chip). INLINE: it ends on the cursor's row. BOX: it is in what the input area holds beyond
    the idle screen (read from the bottom, so text moved up into the transcript is not in it).
    Without an idle screen (after a restart): it ends in the bottom block of the screen."""
    if idle is not None and idle.layout is Layout.INLINE:
        return locate(shot.rows[: shot.cursor_y + 1], last_line) == shot.cursor_y
    if idle is None:
        row = locate(shot.rows, last_line)
        return row is not None and _last_filled(shot.rows) - row < AREA_MAX_ROWS // 2
    if not draft_text(idle, shot):
        return False  # the input line looks as it does when idle: the text is not in it
    # A long or many-line text grows the box: up from the line (the cursor on its last line), or
    # down from it (the prompt glyph on its first line).
    last = _last_filled(shot.rows)
    reach = _rows_for(last_line, typed_lines)
    found = _candidates(shot.rows, last, shot.cursor_y if shot.cursor_visible else None)
    if found:
        block = tuple(
            row for here in found.values() for row in shot.rows[max(0, here - reach) : here + reach + 1]
        )
    else:
        low = last - min(idle.rows_at)
        block = shot.rows[max(0, last - max(idle.rows_at) - reach) : low + 1]
    needle = _compact(last_line)[-30:]
    return bool(needle and needle in "".join(_compact(row) for row in block)) or any(
        _PASTE_CHIP.search(row) for row in block
    )


def _rows_for(last_line: str, lines: int) -> int:
    """How many rows above the input line a typed text may reach (lines, and wraps of a long one)."""
    return lines + len(last_line) // 40 + 1


def awaits_more(idle: IdleScreen | None, shot: Shot) -> bool:
    """A REPL asks for more of the same input: the cursor row holds only a continuation prompt
    ("...", "   ...:", "   ...>", "> "), short punctuation unlike its idle prompt. The text went
    into its buffer, but was not taken as a whole yet (Enter gave it a new line)."""
    if idle is None or idle.layout is not Layout.INLINE or not 0 <= shot.cursor_y < len(shot.rows):
        return False
    row = shot.rows[shot.cursor_y]
    before, after = normal(row[: shot.cursor_x]), row[shot.cursor_x :].strip()
    return (
        bool(before)
        and not after
        and before != idle.prompt
        and len(before) <= 8
        and not any(ch.isalnum() for ch in before)
    )


def shows_typed(shot: Shot, last_line: str) -> bool:
    """The typed text shows anywhere on the screen."""
    return locate(shot.rows, last_line) is not None


def same_screen(a: Shot, b: Shot) -> bool:
    return [normal(row) for row in a.rows] == [normal(row) for row in b.rows]
