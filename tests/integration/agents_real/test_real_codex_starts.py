"""The real Codex CLI, pinned in tests/agents/package.json, runs offline in tmux: it opens on its main
screen, and a prompt typed into it is submitted (Codex then fails to reach the network: fine)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.agents.real_codex import (
    MARK,
    PLACEHOLDER_DIM,
    READY_FOOTER,
    RealCodex,
    codex_version,
    pinned_codex_version,
    plain,
)


def _eventually(check: Callable[[], object], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"not true within {timeout} s")


def test_the_installed_codex_is_the_pinned_version() -> None:
    assert codex_version() == pinned_codex_version()


def test_codex_opens_on_its_main_screen_with_the_dim_placeholder(codex: RealCodex) -> None:
    started = time.monotonic()
    pane = codex.start()
    screen = pane.wait_screen(lambda s: PLACEHOLDER_DIM in s, 30, "the dim placeholder")
    assert time.monotonic() - started < 30
    text = plain(screen)
    assert "OpenAI Codex (v0.169.0)" in text
    assert "Sign in" not in text and "Trust this folder?" not in text
    x, y = pane.cursor()
    assert text.splitlines()[y].startswith(f"{MARK} Ask Codex to do anything")
    assert x == 2


# In the slow suite: the default suite types prompts into the same real Codex through the supervisor
# and reads them in its history.jsonl (test_supervisor_real_codex.py), which is what this checks of
# the harness.
@pytest.mark.slow
def test_a_prompt_typed_into_codex_lands_in_its_history(codex: RealCodex) -> None:
    pane = codex.start()
    pane.wait_screen(lambda s: PLACEHOLDER_DIM in s and READY_FOOTER in plain(s), 30, "the main screen")
    pane.send_text("list the files in this folder")
    pane.wait_text(f"{MARK} list the files in this folder", 10)
    time.sleep(0.3)  # past Codex's paste-burst window, in which an Enter inserts a newline
    pane.keys("Enter")
    _eventually(lambda: codex.history(), 30)
    [entry] = codex.history()
    assert entry["text"] == "list the files in this folder"
    _eventually(lambda: codex.rollouts(), 10)
    [rollout] = codex.rollouts()
    assert rollout.id == entry["session_id"]
    assert rollout.cwd == str(codex.project)


def test_codex_in_an_untrusted_folder_asks_whether_to_trust_it(untrusted_codex: RealCodex) -> None:
    pane = untrusted_codex.start()
    screen = plain(pane.wait_text("Trust this folder?", 30))
    assert f"{MARK} 1. Trust and continue" in screen
    assert "Ask Codex to do anything" not in screen
    assert untrusted_codex.history() == []
