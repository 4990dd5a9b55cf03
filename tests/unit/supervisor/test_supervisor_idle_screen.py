"""The generic agent's screen read against its own idle screen (core/idle_screen.py), as a table:
what an agent draws while it waits is never a person's draft; text in its input area is one only
after a person's keys; a question put to a person blocks; the typed text is found where it landed.
Screens here are drawn after real ones (tests/data/agents/ has the recordings); the recorded
screens of every agent in the conformance suite are read in test_supervisor_recorded_screens.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.supervisor.core.idle_screen import (
    Layout,
    ScreenMemory,
    Shot,
    Verdict,
    dialog_line,
    holds_typed,
    idle_from,
    read,
)

T0 = 1_800_000_000.0
W = 60


def rows(*lines: str, height: int = 12) -> tuple[str, ...]:
    return tuple(lines) + ("",) * (height - len(lines))


def box(text: str, *, width: int = W) -> tuple[str, str, str]:
    inner = width - 4
    return (
        "╭" + "─" * (width - 2) + "╮",
        "│ > " + text.ljust(inner - 2) + "│",
        "╰" + "─" * (width - 2) + "╯",
    )


INK_IDLE = rows(
    "Tips for getting started:",
    "",
    *box("Type your message or @path/to/file"),
    "~/project   model-x   (99% context left)",
)
INK_DRAFT = rows(
    "Tips for getting started:",
    "",
    *box("please also refactor the"),
    "~/project   model-x   (99% context left)",
)
INK_AFTER = rows(
    "Tips for getting started:", "", "> please also refactor the", "✕ [API Error: connect ECONNREFUSED]", "",
    *box("Type your message or @path/to/file"), "~/project   model-x   (99% context left)",
)  # fmt: skip
INK_THEME = rows(
    "Select Theme", "", "● 1. Default Dark", "  2. Dracula", "  3. GitHub", "", "(Use Enter to select)"
)
INK_TRUST = rows("Do you trust this folder?", "", "\u276f 1. Trust folder", "  2. Don't trust (esc)")

REPL_IDLE = rows("Python 3.11", ">>> ")
REPL_DRAFT = rows("Python 3.11", ">>> please also refactor the")
REPL_AFTER = rows("Python 3.11", ">>> 1 + 1", "2", ">>> ")
REPL_RUNNING = rows("Python 3.11", ">>> import time; time.sleep(9)")
IPY_IDLE = rows("In [1]: ")
IPY_AFTER = rows("In [1]: 1 + 1", "Out[1]: 2", "", "In [2]: ")


def shot(screen: tuple[str, ...], cursor: tuple[int, int], at: float, person_at: float | None = None) -> Shot:
    return Shot(screen, cursor[0], cursor[1], at, person_at)


def idle_memory(screen: tuple[str, ...], cursor: tuple[int, int], at: float = T0) -> ScreenMemory:
    first = read(ScreenMemory(), shot(screen, cursor, at))
    second = read(first.memory, shot(screen, cursor, at + 0.2))
    assert second.verdict is Verdict.IDLE and second.memory.idle is not None
    return second.memory


# Where each agent leaves its cursor while idle: on the box's text, parked below the box, hidden
# at the bottom-left, or at the end of a REPL's prompt.
INK_CURSOR_IN_BOX = (4, 3)
INK_CURSOR_BELOW = (0, 8)
INK_CURSOR_HIDDEN = (0, 11)
REPL_CURSOR = (4, 1)


@pytest.mark.parametrize("cursor", [INK_CURSOR_IN_BOX, INK_CURSOR_BELOW, INK_CURSOR_HIDDEN])
def test_an_idle_box_with_a_grey_placeholder_and_a_prompt_glyph_is_never_a_draft(
    cursor: tuple[int, int],
) -> None:
    memory = idle_memory(INK_IDLE, cursor)
    again = read(memory, shot(INK_IDLE, cursor, T0 + 30))
    assert again.verdict is Verdict.IDLE and again.draft == ""


@pytest.mark.parametrize("cursor", [INK_CURSOR_IN_BOX, INK_CURSOR_BELOW, INK_CURSOR_HIDDEN])
def test_text_in_the_box_after_a_persons_keys_is_a_draft_wherever_the_cursor_is(
    cursor: tuple[int, int],
) -> None:
    memory = idle_memory(INK_IDLE, cursor)
    # Typed 25 s ago and left: the cursor is no proof either way; the person's keys and the box are.
    seen = read(memory, shot(INK_DRAFT, cursor, T0 + 40, person_at=T0 + 15))
    assert seen.verdict is Verdict.DRAFT
    assert "please also refactor the" in seen.draft


def test_a_visible_cursor_parked_on_a_blank_row_between_the_box_and_its_footer_is_no_input_line() -> None:
    # One agent draws its cursor 2-3 rows under its box, above its footer: read at the cursor, a
    # draft would never show and a trigger would be typed onto it, merged into one message.
    idle_screen = rows(*box("Type your message"), "", "", "~/project  model-x", height=8)
    draft_screen = rows(*box("please also refactor the"), "", "", "~/project  model-x", height=8)
    parked = (0, 4)
    memory = idle_memory(idle_screen, parked)
    seen = read(memory, shot(draft_screen, parked, T0 + 40, person_at=T0 + 10))
    assert seen.verdict is Verdict.DRAFT and "please also refactor the" in seen.draft


def test_a_cursor_on_a_footer_row_and_a_prompt_glyph_row_are_both_read() -> None:
    # A cursor parked on a footer that holds text is a candidate too; the glyph row still tells.
    idle_screen = rows(*box("Type your message"), "~/project  model-x", height=6)
    draft_screen = rows(*box("please also refactor the"), "~/project  model-x", height=6)
    on_footer = (2, 3)
    memory = idle_memory(idle_screen, on_footer)
    seen = read(memory, shot(draft_screen, on_footer, T0 + 40, person_at=T0 + 10))
    assert seen.verdict is Verdict.DRAFT


@pytest.mark.parametrize("cursor", [INK_CURSOR_IN_BOX, INK_CURSOR_BELOW])
def test_the_same_text_without_a_persons_keys_is_the_agents_own(cursor: tuple[int, int]) -> None:
    memory = idle_memory(INK_IDLE, cursor)
    first = read(memory, shot(INK_DRAFT, cursor, T0 + 40))
    assert first.verdict is not Verdict.DRAFT


def test_after_the_person_sends_their_text_the_transcript_grows_and_the_box_is_idle_again() -> None:
    memory = idle_memory(INK_IDLE, INK_CURSOR_BELOW)
    cursor = (0, 11)
    seen = read(memory, shot(INK_AFTER, cursor, T0 + 40, person_at=T0 + 20))
    assert seen.verdict is not Verdict.DRAFT
    settled = read(seen.memory, shot(INK_AFTER, cursor, T0 + 40.3, person_at=T0 + 20))
    assert settled.verdict is Verdict.IDLE
    assert settled.memory.idle is not None and settled.memory.idle.at == T0 + 40.3


def test_a_draft_in_a_repl_is_the_text_after_its_prompt() -> None:
    memory = idle_memory(REPL_IDLE, REPL_CURSOR)
    seen = read(memory, shot(REPL_DRAFT, (28, 1), T0 + 40, person_at=T0 + 15))
    assert (seen.verdict, seen.draft) == (Verdict.DRAFT, "please also refactor the")


def test_a_repls_next_prompt_with_another_counter_is_its_idle_line() -> None:
    memory = idle_memory(IPY_IDLE, (8, 0))
    assert memory.idle is not None and memory.idle.layout is Layout.INLINE
    seen = read(memory, shot(IPY_AFTER, (8, 3), T0 + 9, person_at=T0 + 5))
    assert seen.verdict is not Verdict.DRAFT


def test_a_repl_running_a_line_has_no_input_line_and_is_busy() -> None:
    memory = idle_memory(REPL_IDLE, REPL_CURSOR)
    running = shot(REPL_RUNNING, (0, 2), T0 + 5)
    first = read(memory, running)
    assert first.verdict is Verdict.BUSY
    assert read(first.memory, replace(running, at=T0 + 5.3)).verdict is Verdict.BUSY, "never taken as idle"


@pytest.mark.parametrize(
    ("screen", "first_line"),
    [(INK_THEME, "Select Theme"), (INK_TRUST, "Do you trust this folder?")],
)
def test_a_first_start_dialog_blocks_and_says_its_line(screen: tuple[str, ...], first_line: str) -> None:
    seen = read(ScreenMemory(), shot(screen, (0, 2), T0))
    assert seen.verdict is Verdict.BLOCKED and seen.evidence == first_line
    # Still, it stays blocked: a dialog is never taken for the agent's idle screen.
    assert read(seen.memory, shot(screen, (0, 2), T0 + 1)).verdict is Verdict.BLOCKED


def test_a_dialog_that_replaces_the_box_later_blocks() -> None:
    memory = idle_memory(INK_IDLE, INK_CURSOR_BELOW)
    question = rows("Tips for getting started:", "", "Allow execution of: 'rm -rf build'?", "● 1. Yes, allow once",
                    "  2. No (esc)", "")  # fmt: skip
    seen = read(memory, shot(question, (0, 11), T0 + 3))
    assert seen.verdict is Verdict.BLOCKED


@pytest.mark.parametrize(
    "line",
    ["Overwrite the file? (y/n)", "Continue [Y/n]", "Press Enter to continue", "↑/↓ to navigate · enter to select",
     "Choose an authentication method:"],
)  # fmt: skip
def test_the_formats_of_a_question_are_dialogs(line: str) -> None:
    assert dialog_line(rows(line)) == line


@pytest.mark.parametrize(
    "line",
    [
        "> Type your message or @path/to/file",
        "In [3]: ",
        "esc to interrupt",
        "1 file changed",
        "⠋ Thinking... (esc to cancel, 2s)",
    ],
)
def test_an_input_line_or_a_status_is_not_a_dialog(line: str) -> None:
    assert dialog_line(rows(line)) == ""


def test_the_typed_text_is_in_the_box_until_it_moves_into_the_transcript() -> None:
    memory = idle_memory(INK_IDLE, INK_CURSOR_BELOW)
    idle = memory.idle
    typed = shot(INK_DRAFT, INK_CURSOR_BELOW, T0 + 1)
    assert holds_typed(idle, typed, "please also refactor the")
    assert not holds_typed(idle, shot(INK_AFTER, (0, 11), T0 + 2), "please also refactor the")


def test_a_repls_echo_above_the_new_prompt_is_not_the_input_line() -> None:
    idle = idle_from(shot(REPL_IDLE, REPL_CURSOR, T0))
    assert holds_typed(idle, shot(rows("Python 3.11", ">>> 1 + 1"), (9, 1), T0 + 1), "1 + 1")
    assert not holds_typed(idle, shot(REPL_AFTER, (4, 3), T0 + 2), "1 + 1")


def test_nothing_drawn_is_not_yet_a_screen() -> None:
    assert read(ScreenMemory(), shot(rows(), (0, 0), T0)).verdict is Verdict.UNSETTLED


# Qwen Code's screen as CI saw it: its box is a "> " row between two rules, and it echoes each
# message into the transcript as "> " with the message's further lines hanging under its text.
_RULE = "─" * W
QWEN_IDLE = rows(
    "Tips: Type / to open the command popup.", "> say k1a", "✕ [API Error: 401 no model here]",
    _RULE, ">   Type your message or @path/to/file", _RULE, "  ? for shortcuts", height=20,
)  # fmt: skip
QWEN_AFTER_TEN_LINES = rows(
    "Tips: Type / to open the command popup.", "> say k1a", "> Step 1: look at module_1.py (k1b)",
    "  Step 2: look at module_2.py (k1b)", "  Step 3: look at module_3.py (k1b)", "  Then stop.",
    "> say k1c1", "✕ [API Error: 401 no model here]", _RULE, ">   Type your message or @path/to/file", _RULE,
    "  ? for shortcuts", height=20,
)  # fmt: skip


def test_an_echoed_message_hanging_under_its_pointer_is_transcript_while_the_input_line_shows() -> None:
    # The cursor Ink left on a transcript row while drawing made the input area look changed; the
    # echoed ten lines read like a pick list. The input line and its footer are still drawn as
    # when idle: no dialog took their place, so nothing blocks and the screen becomes idle.
    memory = idle_memory(QWEN_IDLE, (0, 6))
    moved_cursor = (2, 5)
    first = read(memory, shot(QWEN_AFTER_TEN_LINES, moved_cursor, T0 + 5))
    assert first.verdict is not Verdict.BLOCKED, first.evidence
    settled = read(first.memory, shot(QWEN_AFTER_TEN_LINES, moved_cursor, T0 + 5.3))
    assert settled.verdict is Verdict.IDLE


def test_a_pick_list_that_takes_the_input_lines_place_after_idle_still_blocks() -> None:
    memory = idle_memory(QWEN_IDLE, (0, 6))
    question = rows(
        "Tips: Type / to open the command popup.", "> say k1a", "Allow execution of 'rm -rf build'?",
        "> 1. Yes, allow once", "  2. Yes, allow always", "  3. No (esc)", height=20,
    )  # fmt: skip
    seen = read(memory, shot(question, (0, 3), T0 + 5))
    assert seen.verdict is Verdict.BLOCKED


def test_a_still_screen_holding_the_supervisors_own_unsent_paste_is_never_taken_for_idle() -> None:
    # Gemini under load kept a ten-line paste as a chip in its box and never sent it; a look by the
    # registry's reconciler took that still screen for the new idle screen, and the prompt still in
    # the box then read as sent ("delivered"). While the supervisor's own text is in flight, no.
    memory = idle_memory(INK_IDLE, INK_CURSOR_BELOW)
    chip = rows("Tips for getting started:", "", *box("[Pasted Text: 10 lines]"), "~/project   model-x")
    first = read(memory, shot(chip, INK_CURSOR_BELOW, T0 + 5), own_text=True)
    again = read(first.memory, shot(chip, INK_CURSOR_BELOW, T0 + 5.3), own_text=True)
    assert again.verdict is Verdict.CHANGING and again.memory.idle == memory.idle
    assert holds_typed(again.memory.idle, shot(chip, INK_CURSOR_BELOW, T0 + 5.4), "Then stop.")
    # Once its delivery is decided, the agent's still screen is its idle screen again.
    released = read(again.memory, shot(chip, INK_CURSOR_BELOW, T0 + 5.6))
    assert released.verdict is Verdict.IDLE


def test_a_yes_no_question_above_an_input_line_drawn_as_it_was_still_blocks() -> None:
    # Only a choice list is read as transcript while the input line shows: a question's own
    # words block wherever they stand.
    memory = idle_memory(QWEN_IDLE, (0, 6))
    asking = rows(
        "Tips: Type / to open the command popup.", "> say k1a", "Overwrite notes.txt? (y/n)",
        _RULE, ">   Type your message or @path/to/file", _RULE, "  ? for shortcuts", height=20,
    )  # fmt: skip
    seen = read(memory, shot(asking, (2, 2), T0 + 5))
    assert seen.verdict is Verdict.BLOCKED and "(y/n)" in seen.evidence


def test_a_dialog_drawn_under_a_first_screen_that_showed_no_input_line_blocks() -> None:
    # Under load Qwen Code drew its header alone long enough to be taken for its idle screen, then
    # its folder-trust dialog under it. The box's last rows (a blank framed row, its bottom edge)
    # read as empty, so the input area seemed unchanged and the dialog went unread: the trigger was deferred as busy, and had the
    # screen settled it would have been typed into the dialog.
    header = rows("  >_ Qwen Code (v0.15.10)", "Tips: Type / to open the command popup.", height=16)
    memory = idle_memory(header, (0, 15))
    assert memory.idle is not None and not memory.idle.inputs
    dialog = rows(
        "  >_ Qwen Code (v0.15.10)", "Tips: Type / to open the command popup.", "╭" + "─" * 40 + "╮",
        "│ Do you trust this folder?" + " " * 14 + "│", "│ \u203a 1. Trust folder (proj)" + " " * 16 + "│",
        "│   2. Don't trust (esc)" + " " * 17 + "│", "│" + " " * 40 + "│", "╰" + "─" * 40 + "╯", height=16,
    )  # fmt: skip
    seen = read(memory, shot(dialog, (0, 15), T0 + 3))
    assert seen.verdict is Verdict.BLOCKED and seen.evidence == "Do you trust this folder?"
