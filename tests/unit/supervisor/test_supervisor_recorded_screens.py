"""The generic screen reading (core/idle_screen.py) on the recorded screens of every agent of the
conformance suite (tests/data/agents/, recorded by tests/data/agents/record_tui.py), as a table: the
idle screen is idle, a person's draft is a draft, after it is deleted or sent it is not, and a
first-start dialog blocks with its own line. Gemini, Qwen Code and Claude Code hide the terminal
cursor."""

from __future__ import annotations

from pathlib import Path

import pytest
from kronii.supervisor.core.idle_screen import ScreenMemory, ScreenRead, Shot, Verdict, read
from kronii.supervisor.core.screen import parse_screen

SCREENS = Path(__file__).resolve().parents[2] / "data" / "agents"
AGENTS = ("gemini", "qwen", "claude", "opencode", "ipython", "ptpython", "node", "sqlite3", "bash")
HIDDEN_CURSOR = {"gemini", "qwen", "claude"}
T0 = 1_800_000_000.0
PERSON_DRAFT = "please also refactor the"


def shot(agent: str, name: str, at: float, person_at: float | None = None) -> Shot:
    first, _, body = (SCREENS / agent / f"{name}.ansi").read_text(encoding="utf-8").partition("\n")
    x, y = (int(v) for v in first.removeprefix("#").split())
    rows = tuple(line.text.rstrip() for line in parse_screen(body.split("\n")))
    return Shot(rows, x, y, at, person_at, cursor_visible=agent not in HIDDEN_CURSOR)


def idle_memory(agent: str) -> ScreenMemory:
    first = read(ScreenMemory(), shot(agent, "idle", T0))
    second = read(first.memory, shot(agent, "idle", T0 + 0.3))
    assert second.verdict is Verdict.IDLE, (agent, second)
    return second.memory


def settled(memory: ScreenMemory, agent: str, name: str, at: float, person_at: float | None) -> ScreenRead:
    """Two looks at the same screen (a still screen is known only on the second)."""
    first = read(memory, shot(agent, name, at, person_at))
    if first.verdict in (Verdict.DRAFT, Verdict.BLOCKED):
        return first
    return read(first.memory, shot(agent, name, at + 0.3, person_at))


@pytest.mark.parametrize("agent", AGENTS)
def test_recorded_idle_screen_is_idle_and_no_draft(agent: str) -> None:
    memory = idle_memory(agent)
    later = read(memory, shot(agent, "idle", T0 + 60))
    assert later.verdict is Verdict.IDLE and later.draft == ""


@pytest.mark.parametrize("agent", AGENTS)
def test_recorded_draft_typed_by_a_person_is_a_draft(agent: str) -> None:
    seen = read(idle_memory(agent), shot(agent, "draft", T0 + 40, person_at=T0 + 10))
    assert seen.verdict is Verdict.DRAFT, (agent, seen.evidence)
    assert "refactor" in seen.draft or "please" in seen.draft, seen.draft


@pytest.mark.parametrize("agent", AGENTS)
def test_recorded_multiline_draft_is_a_draft(agent: str) -> None:
    seen = read(idle_memory(agent), shot(agent, "draft_multiline", T0 + 40, person_at=T0 + 10))
    assert seen.verdict is Verdict.DRAFT, (agent, seen.evidence)


@pytest.mark.parametrize("agent", AGENTS)
def test_recorded_draft_left_for_90_s_is_still_a_draft(agent: str) -> None:
    seen = read(idle_memory(agent), shot(agent, "draft", T0 + 100, person_at=T0 + 10))
    assert seen.verdict is Verdict.DRAFT


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("after", ["draft_deleted", "submitted", "submitted_twice"])
def test_recorded_screen_after_the_person_deleted_or_sent_their_text_is_idle_again(
    agent: str, after: str
) -> None:
    seen = settled(idle_memory(agent), agent, after, T0 + 40, person_at=T0 + 30)
    assert seen.verdict is Verdict.IDLE, (agent, after, seen.verdict, seen.draft, seen.evidence)


@pytest.mark.parametrize(
    ("agent", "dialog", "line"),
    [
        ("gemini", "dialog_trust", "Do you trust the files in this folder?"),
        ("gemini", "dialog_auth", "? Get started"),
        ("qwen", "dialog_trust", "Do you trust this folder?"),
        ("qwen", "dialog_auth", "Select Authentication Method"),
        ("claude", "dialog_theme", "Let's get started."),
        ("claude", "dialog_api_key", "Detected a custom API key in your environment"),
        ("claude", "dialog_trust", "Accessing workspace:"),
    ],
)
def test_recorded_first_start_dialog_blocks_with_its_line(agent: str, dialog: str, line: str) -> None:
    seen = read(ScreenMemory(), shot(agent, dialog, T0))
    assert seen.verdict is Verdict.BLOCKED and seen.evidence == line


@pytest.mark.parametrize("agent", ["ipython", "ptpython"])
def test_recorded_exit_question_after_the_idle_screen_blocks(agent: str) -> None:
    # Ctrl-D asked "Do you really want to exit ([y]/n)?": Enter would answer it.
    seen = settled(idle_memory(agent), agent, "dialog_confirm_exit", T0 + 5, person_at=None)
    assert seen.verdict is Verdict.BLOCKED and "really want to exit" in seen.evidence
