"""Capture's settings of kronii.edge's caller machinery keep what a capture client and the audit
log saw before the machinery moved: the same sentences, audit actions and Redis keys."""

from __future__ import annotations

from typing import Any

from kronii.capture.adapters.callers import READ_SCREENSHOTS, capture_clients, client_sessions
from kronii.capture.core.capabilities import HUMAN_WINDOW, names
from kronii.edge.peers import ProcFacts
from kronii.edge.presence_rules import polkit_refusal, tty_refusal

HEADLESS = ProcFacts(
    pid=42, uid=1000, session=40, tty=None, start_ticks=7, stdin=None, leader_start_ticks=None
)


def test_a_refused_reader_hears_capture_s_own_sentences() -> None:
    assert tty_refusal(None, HEADLESS, READ_SCREENSHOTS) == (
        "reading screenshots needs a person at a terminal: run kronii capture from an interactive "
        "terminal (its standard input is not a terminal)"
    )
    assert polkit_refusal(READ_SCREENSHOTS, challenge=False) == (
        "polkit does not allow this user to read screenshots"
    )
    assert polkit_refusal(READ_SCREENSHOTS, challenge=True) == (
        "polkit did not authorize reading screenshots: nobody confirmed with their password "
        "(no authentication agent asked, or it was dismissed)"
    )


def test_a_persons_window_keeps_capture_s_action_keys_and_capabilities() -> None:
    assert READ_SCREENSHOTS.polkit_action == "org.kronii.read-screenshots"
    assert READ_SCREENSHOTS.audit_action == "capture.presence"
    assert READ_SCREENSHOTS.window_prefix == "kronii:capture:presence:"
    assert list(READ_SCREENSHOTS.grants) == names(HUMAN_WINDOW)


class _Redis:
    """Only what ClientSessions.begin touches."""

    def __init__(self) -> None:
        self.keys: dict[str, int] = {}

    async def set(self, key: str, value: Any, ex: int) -> None:
        self.keys[key] = ex


async def test_agents_challenges_live_under_capture_s_keys_in_capture_s_table() -> None:
    redis = _Redis()
    book = client_sessions(redis, None)  # type: ignore[arg-type]  # begin() never opens the database

    challenge = await book.begin("agent-1")

    assert redis.keys == {f"kronii:capture:challenge:{challenge.challenge_id}": 30}
    assert capture_clients.name == "capture_clients"
