"""Every recipe of tests/agents/tui_agents.py runs its real program offline: it reaches its idle input
screen in a 120x40 window of a private tmux server, a prompt typed into it with `send-keys -l` and Enter
lands in the program's own history, nothing is written into the person's own config of that program,
and each first-start dialog it has shows when its private folder is prepared for it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.agents.real_codex import plain
from tests.agents.tui_agents import AGENTS, TuiAgent, run_agent

# A prompt every one of them takes as one submitted line: plain text for the coding agents, a string
# literal for the Python and JavaScript REPLs (ptpython refuses to submit a line that is not valid Python),
# a (failing) command line for bash, an unfinished statement for sqlite3.
PROMPT = "'say hello from kronii'"


def _fail_if_missing(agent: TuiAgent) -> None:
    reason = agent.missing()
    if reason is not None:
        pytest.fail(f"{reason}: `make test` installs it (scripts/install_agent_clis.sh)")


def _own_config(agent: TuiAgent) -> dict[str, float | None]:
    """The modification times of the person's own files of this program (None: absent)."""
    home = Path.home()
    return {
        name: (home / name).stat().st_mtime if (home / name).exists() else None for name in agent.own_config
    }


# The recipes' own checks, in the slow suite: the default suite drives the same recipes through the
# supervisor (tests/integration/supervisor/test_conformance_generic_agents.py: every agent idle, its
# prompts in its own history, every dialog shown and never typed into).
@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS, ids=[agent.name for agent in AGENTS])
def test_agent_reaches_its_idle_screen_offline_and_keeps_a_typed_prompt_in_its_own_history(
    agent: TuiAgent, tmp_path: Path
) -> None:
    _fail_if_missing(agent)
    before = _own_config(agent)
    with run_agent(agent, tmp_path) as running:
        running.wait_idle(60)
        assert running.pane.capture(escapes=False).count("\n") >= 39, "a 120x40 window"
        running.pane.send_text(PROMPT)
        running.pane.wait_text(PROMPT, 10)
        time.sleep(0.3)  # past the paste burst of the Ink and Codex input boxes, as a person would
        running.pane.keys("Enter")
        found = running.wait_history(PROMPT, 60)
        assert PROMPT in found, f"{agent.name}'s own history holds {found!r}"
        assert running.private.is_dir()
    assert _own_config(agent) == before, f"{agent.name} wrote into the person's own config"


DIALOGS = [(agent, dialog.name) for agent in AGENTS for dialog in agent.dialogs]


@pytest.mark.slow
@pytest.mark.parametrize(("agent", "dialog"), DIALOGS, ids=[f"{a.name}-{d}" for a, d in DIALOGS])
def test_first_start_dialog_shows_when_its_private_folder_asks_for_it(
    agent: TuiAgent, dialog: str, tmp_path: Path
) -> None:
    _fail_if_missing(agent)
    with run_agent(agent, tmp_path, dialog=dialog) as running:
        screen = running.wait_dialog(dialog, 60)
        assert agent.dialog(dialog).marker in plain(screen)  # Claude Code colours each word apart
        assert not agent.is_idle(running.pane.capture()), (
            f"{agent.name}'s {dialog} dialog read as its idle screen"
        )


def _next_second(after: int) -> None:
    """Until the wall clock is past `after` (client_activity counts whole seconds)."""
    while int(time.time()) <= after:
        time.sleep(0.02)


def test_client_activity_moves_for_a_persons_keys_and_not_for_send_keys(tmp_path: Path) -> None:
    from tests.agents.tmux_person import client_activity, person_client
    from tests.agents.tui_agents import PYTHON

    with run_agent(PYTHON, tmp_path) as running, person_client(running.socket, "python3") as person:
        running.wait_idle(30)
        attached = person.activity()
        _next_second(attached)
        running.pane.send_text("x = 'sent'")  # tmux send-keys, as kronii types
        running.pane.wait_text("x = 'sent'", 10)
        assert client_activity(running.socket) == {person.name: attached}
        assert running.pane.capture(escapes=False).count("\n") == 40, (
            "the person's client kept the 120x40 window"
        )
        person.type("  # typed")
        running.pane.wait_text("x = 'sent'  # typed", 10)
        assert person.activity() > attached


def test_claude_code_keeps_a_pasted_ten_line_prompt_whole_in_its_history(tmp_path: Path) -> None:
    """Claude Code shows a pasted block as `[Pasted text #1 +9 lines]` in its box and its history.jsonl
    keeps that label with the text beside it: the reader puts the text back."""
    from tests.agents.tui_agents import CLAUDE

    _fail_if_missing(CLAUDE)
    prompt = "\n".join(f"line {n} of the task" for n in range(10))
    with run_agent(CLAUDE, tmp_path) as running:
        running.wait_idle(60)
        running.pane.paste(prompt)
        running.pane.wait_text("[Pasted text #1 +9 lines]", 10)
        running.pane.keys("Enter")
        found = running.wait_history(prompt, 30)
        assert found == [prompt]
        running.pane.wait_screen(CLAUDE.is_idle, 30, "the idle screen after the refused turn")
