"""How the console tells the person an approval from the page did not count, and how long it waits for
one: the engine's 403 (no proof of presence) becomes a sentence naming both ways that do count, the
polkit dialog and `kronii vision approve <id>` in a terminal, with the engine's own words; the console
waits for the engine longer than the engine waits for the person in polkit's dialog."""

from __future__ import annotations

import inspect

import httpx
import pytest
from kronii.console.adapters.vision_api import APPROVE_TIMEOUT_SECS, _answer, approval_refusal
from kronii.edge.polkit import PolkitClient
from kronii.foundation.errors import FailedPrecondition, PermissionDenied

ENGINE_SAID = "polkit does not allow this user to approve a plan"


def test_the_engines_refusal_names_the_polkit_dialog_the_terminal_command_and_the_engines_words() -> None:
    refused = httpx.Response(403, json={"detail": ENGINE_SAID})

    with pytest.raises(PermissionDenied) as error:
        _answer(refused, "p_123")

    said = str(error.value)
    assert "polkit's dialog" in said
    assert "kronii vision approve p_123 in a terminal" in said
    assert said.endswith(f"(the engine said: {ENGINE_SAID})")
    assert said == approval_refusal("p_123", ENGINE_SAID)


def test_a_refusal_without_a_reason_still_says_how_to_approve() -> None:
    said = approval_refusal("p_9", "HTTP 403")
    with pytest.raises(PermissionDenied, match="kronii vision approve p_9"):
        _answer(httpx.Response(403, text="not json"), "p_9")
    assert "(the engine said: HTTP 403)" in said


def test_a_plan_no_longer_waiting_is_a_conflict_not_a_presence_refusal() -> None:
    with pytest.raises(FailedPrecondition, match="the vision engine refused: plan p_1 is done"):
        _answer(httpx.Response(409, json={"detail": "plan p_1 is done"}), "p_1")


def test_the_console_waits_for_an_approval_longer_than_polkit_waits_for_the_person() -> None:
    polkit_wait = inspect.signature(PolkitClient).parameters["timeout_s"].default
    assert polkit_wait + 15 < APPROVE_TIMEOUT_SECS
