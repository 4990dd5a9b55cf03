"""The agent's state read off its screen, checked on screens recorded from the real Codex CLI 0.169
and python3 -i (tests/data/agents, with their SGR attributes): a placeholder is told from a draft by
how the terminal draws it, never by the text alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from kronii.supervisor.core.agent_kinds import DEFAULT_KINDS, AgentKind
from kronii.supervisor.core.agent_state import (
    AgentState,
    Delivery,
    Reading,
    classify,
    confirm,
    echo_needle,
    holds_prompt,
)
from kronii.supervisor.core.screen import StyledLine, echo_count, input_box, input_text, parse_screen

SCREENS = Path(__file__).parents[2] / "data" / "agents"
CODEX = DEFAULT_KINDS["codex"]
PYTHON = DEFAULT_KINDS["python"]


def screen(name: str) -> tuple[tuple[StyledLine, ...], int]:
    lines, _, cursor_y = screen_at(name)
    return lines, cursor_y


def screen_at(name: str) -> tuple[tuple[StyledLine, ...], int, int]:
    header, *raw = (SCREENS / f"{name}.ansi").read_text(encoding="utf-8").split("\n")
    cursor_x, cursor_y = (int(n) for n in header.removeprefix("#").split())
    return parse_screen(raw), cursor_x, cursor_y


def read(name: str, kind: AgentKind = CODEX) -> Reading:
    """The screen read as the supervisor reads it: with the cursor's column and row."""
    lines, cursor_x, cursor_y = screen_at(name)
    return classify(lines, cursor_y, kind, cursor_x=cursor_x)


@pytest.mark.parametrize(
    ("name", "state"),
    [
        ("codex/idle", AgentState.IDLE),
        ("codex/idle_daemon", AgentState.IDLE),
        ("codex/empty_enter", AgentState.IDLE),
        ("codex/cleared_by_ctrl_c", AgentState.IDLE),
        ("codex/error", AgentState.IDLE),
        ("codex/draft", AgentState.DRAFT),
        ("codex/draft_multiline", AgentState.DRAFT),
        ("codex/interrupted", AgentState.DRAFT),
        ("codex/working", AgentState.WORKING),
        ("codex/steered", AgentState.WORKING),
        ("codex/queued", AgentState.WORKING),
        ("codex/reconnecting", AgentState.WORKING),
        ("codex/trust_dialog", AgentState.BLOCKED),
        ("codex/starting", AgentState.STARTING),
        ("codex/starting_placeholder", AgentState.STARTING),
        ("codex/waiting_for_startup", AgentState.STARTING),
    ],
)
def test_real_codex_screens_read_as_the_state_a_person_sees(name: str, state: AgentState) -> None:
    assert read(name).state is state


def test_codexs_dim_placeholder_is_not_a_draft() -> None:
    reading = read("codex/idle")
    assert reading.box.found and reading.box.placeholder and reading.box.text == ""
    assert reading.draft == ""
    lines, cursor_y = screen("codex/idle")
    plain = [line.text for line in lines]
    assert input_text(plain, cursor_y, "\u203a") == "Ask Codex to do anything", (
        "the text alone reads like a draft: the attributes are what tell them apart"
    )


def test_a_persons_draft_is_read_whole() -> None:
    assert read("codex/draft").draft == "fix the login bug"
    assert read("codex/draft_multiline").draft.split("\n") == [
        "first line of the task",
        "second line",
        "third line",
    ]


def test_the_trust_dialog_is_blocked_with_its_question_as_evidence() -> None:
    reading = read("codex/trust_dialog")
    assert "Trust this folder?" in reading.evidence


def test_python_repl_prompt_and_draft() -> None:
    assert read("python/idle", PYTHON).state is AgentState.IDLE
    draft = read("python/draft", PYTHON)
    assert draft.state is AgentState.DRAFT and draft.draft == "x = 1"
    assert read("python/submitted", PYTHON).state is AgentState.IDLE


@pytest.mark.parametrize("name", ["python/busy", "python/busy_output"])
def test_a_busy_python_repl_is_working_with_no_input_line_not_a_draft(name: str) -> None:
    # The line it runs is on screen after ">>>", but the cursor is below it: nobody's draft.
    reading = read(name, PYTHON)
    assert reading.state is AgentState.WORKING and reading.working
    assert not reading.input_line and reading.draft == ""
    assert not holds_prompt(reading.box, 'import time; time.sleep(3); print("done")')


def test_a_busy_pythons_line_counts_as_taken_not_as_typed_not_submitted() -> None:
    before = read("python/submitted", PYTHON)
    lines, _, _ = screen_at("python/submitted")
    prompt = 'import time; time.sleep(3); print("done")'
    echoes = echo_count(lines, before.box.top, echo_needle(prompt))
    after_lines, cursor_x, cursor_y = screen_at("python/busy")
    after = classify(after_lines, cursor_y, PYTHON, cursor_x=cursor_x)
    seen = confirm(after, after_lines, prompt=prompt, last_line=prompt, echoes_before=echoes,
                   was_working=before.working)  # fmt: skip
    assert seen is Delivery.SUBMITTED


def test_a_persons_multiline_python_block_is_a_draft_even_after_unended_output() -> None:
    reading = read("python/draft_multiline", PYTHON)
    assert reading.state is AgentState.DRAFT and reading.input_line
    assert reading.draft.split("\n") == ["def f():", "return 1"]


def test_the_cursor_outside_the_box_is_no_input_line() -> None:
    lines = parse_screen([">>> print(1)", "1", ">>> x = ", ""])
    assert input_box(lines, 2, ">>>", cursor_x=8).text == "x ="
    assert not input_box(lines, 3, ">>>", cursor_x=0).found, "the row below the box, at column 0"
    assert not input_box(lines, 2, ">>>", cursor_x=1).found, "left of the marker"
    assert input_box(lines, 3, ">>>", cursor_x=0).marker_above


def test_an_exited_process_is_exited_whatever_the_screen_shows() -> None:
    lines, cursor_y = screen("codex/idle")
    assert classify(lines, cursor_y, CODEX, alive=False).state is AgentState.EXITED


def test_a_prompt_is_taken_when_its_echo_appears_in_the_transcript() -> None:
    before_lines, before_y = screen("codex/idle")
    before = classify(before_lines, before_y, CODEX)
    baseline = echo_count(before_lines, before.box.top, echo_needle("say hello"))
    after_lines, after_y = screen("codex/working")
    after = classify(after_lines, after_y, CODEX)
    seen = confirm(after, after_lines, prompt="say hello", last_line="say hello", echoes_before=baseline,
                   was_working=before.working)  # fmt: skip
    assert seen is Delivery.SUBMITTED


def test_a_prompt_still_in_the_box_is_typed_not_submitted() -> None:
    lines, cursor_y = screen("codex/draft")
    reading = classify(lines, cursor_y, CODEX)
    seen = confirm(reading, lines, prompt="fix the login bug", last_line="fix the login bug", echoes_before=0,
                   was_working=False)  # fmt: skip
    assert seen is Delivery.TYPED


def test_a_prompt_waiting_for_codex_to_start_is_pending_not_stuck() -> None:
    lines, cursor_y = screen("codex/waiting_for_startup")
    reading = classify(lines, cursor_y, CODEX)
    seen = confirm(
        reading, lines, prompt="say hello", last_line="say hello", echoes_before=0, was_working=False
    )
    assert seen is Delivery.PENDING


def test_a_queued_prompt_counts_as_taken() -> None:
    lines, cursor_y = screen("codex/queued")
    reading = classify(lines, cursor_y, CODEX)
    needle = echo_needle("then list the files")
    assert echo_count(lines, reading.box.top, needle) == 1


def test_an_earlier_echo_of_the_same_text_is_not_taken_for_this_one() -> None:
    lines, cursor_y = screen("codex/working")
    reading = classify(lines, cursor_y, CODEX)
    already = echo_count(lines, reading.box.top, echo_needle("say hello"))
    seen = confirm(reading, lines, prompt="say hello", last_line="say hello", echoes_before=already,
                   was_working=True)  # fmt: skip
    assert seen is Delivery.PENDING


def test_sgr_parsing_tracks_dim_across_resets_and_extended_colours() -> None:
    (line,) = parse_screen(["a\x1b[2mb\x1b[38;5;2mc\x1b[22md\x1b[1;2me\x1b[0mf"])
    assert line.text == "abcdef"
    assert line.dim == (False, True, True, False, True, False)


def test_without_a_marker_the_cursor_line_is_the_input_line() -> None:
    lines = parse_screen(["$ ls", "file", "> half typed"])
    box = input_box(lines, 2, "")
    assert box.found and box.text == "> half typed" and box.top == 2
