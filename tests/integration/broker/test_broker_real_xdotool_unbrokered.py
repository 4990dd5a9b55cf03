"""Automation that goes around the broker, with the real programs (issue 30): a real broker on Xvfb +
openbox in an interactive session, an agent typing under a lease the person granted from a terminal,
and the real /usr/bin/xdotool (not the PATH shadow) typing straight into the X server. Its input
takes the lease back, and the journal and the audit chain say unbrokered input, naming xdotool, never
the person; the person's own device (tests/person_hands.py, a master of its own as a VNC viewer's
is) still counts as the person."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from kronii.agents.broker_client import BrokerClient

from tests.desktop import wait_until
from tests.infra import InfraUrls
from tests.integration.broker.broker_support import Broker, start_broker
from tests.integration.broker.conftest import x_env
from tests.person_hands import PersonHands

INTERACTIVE = {"KRONII_BROKER_INTERACTIVE": "true", "KRONII_BROKER_REMOTE_VIEW": "false"}
REAL_XDOTOOL = "/usr/bin/xdotool"


@pytest.fixture
def broker(infra: InfraUrls, migrated_database: str, x_display: str, tmp_path: Path) -> Iterator[Broker]:
    with start_broker(infra, migrated_database, x_display, tmp_path, settings=INTERACTIVE) as running:
        yield running


def keep_typing(agent: BrokerClient, results: list[Any]) -> threading.Thread:
    def typing() -> None:
        for _ in range(2000):
            results.append(agent.type_text("a" * 10))
            if not results[-1].injected:
                return

    thread = threading.Thread(target=typing)
    thread.start()
    return thread


def audit_rows(broker: Broker, session_id: str) -> list[tuple[str, str, str]]:
    with psycopg.connect(broker.database.replace("postgresql+psycopg", "postgresql")) as conn:
        rows = conn.execute(
            "SELECT action, actor, outcome FROM audit_log WHERE service = 'broker' AND subject = %s"
            " ORDER BY id",
            (session_id,),
        ).fetchall()
    return [(str(action), str(actor), str(outcome)) for action, actor, outcome in rows]


def test_the_real_xdotool_during_an_interactive_lease_is_revoked_as_unbrokered_input_not_the_person(
    broker: Broker, recording_terminal: Any
) -> None:
    terminal = recording_terminal("AgentTerm")
    agent = broker.agent()
    granted = broker.grant(agent.client_id, seconds=60, window=terminal.window_id)
    assert granted["interactive"] and granted["control_mode"] == "AGENT"
    results: list[Any] = []
    typing = keep_typing(agent, results)
    wait_until(lambda: len(terminal.received()) > 50, timeout_s=10, what="the agent typing")

    # The real binary, by its absolute path: around the broker, as a script calling it directly would be.
    # It types slowly, so it is still connected to the X server when the broker looks for it.
    subprocess.run(
        [REAL_XDOTOOL, "type", "--delay", "60", "around"],
        env=x_env(broker.display),
        check=True,
        timeout=30,
    )
    typing.join(30)

    state = broker.state()
    assert state["control_mode"] == "USER" and state["agent_status"] == "STOPPED"
    assert not results[-1].injected and results[-1].dropped in ("stopped", "stale_epoch")
    # Not the person: no hold tells the mesh a person took the desktop back.
    assert not state.get("user_holds_until")
    after_grant = [row for row in broker.journal() if row["epoch"] >= int(granted["epoch"])]
    revoked = [row for row in after_grant if row["event"] == "unbrokered_input"]
    assert revoked and revoked[0]["row"] == "B1" and revoked[0]["signal"] == "unbrokered_input"
    assert revoked[0]["actor"].startswith("unbrokered:xdotool (pid "), revoked[0]
    assert not [row for row in after_grant if row["actor"] == "person"]
    wait_until(
        lambda: any(row[0] == "broker.unbrokered_input" for row in audit_rows(broker, state["session_id"])),
        timeout_s=10,
        what="the audit row",
    )
    rows = audit_rows(broker, state["session_id"])
    unbrokered = [row for row in rows if row[0] == "broker.unbrokered_input"]
    assert len(unbrokered) == 1 and unbrokered[0][1].startswith("unbrokered:xdotool (pid ")
    assert unbrokered[0][2] == "overridden_unbrokered"
    assert "broker.override" not in [row[0] for row in rows]


def test_the_persons_own_device_still_counts_as_the_person_after_xdotool_was_seen(
    broker: Broker, recording_terminal: Any
) -> None:
    terminal = recording_terminal("PersonTerm")
    agent = broker.agent()
    broker.grant(agent.client_id, seconds=60, window=terminal.window_id)
    subprocess.run([REAL_XDOTOOL, "key", "shift"], env=x_env(broker.display), check=True, timeout=30)
    wait_until(lambda: broker.state()["control_mode"] == "USER", timeout_s=10, what="xdotool's revocation")

    granted = broker.grant(agent.client_id, seconds=60, window=terminal.window_id)
    results: list[Any] = []
    typing = keep_typing(agent, results)
    wait_until(lambda: len(terminal.received()) > 50, timeout_s=10, what="the agent typing")
    with PersonHands(broker.display) as person:
        person.type("P")
    typing.join(30)

    state = broker.state()
    assert state["control_mode"] == "USER" and state["agent_status"] == "STOPPED"
    assert state.get("user_holds_until"), "the person's input starts the hold"
    overrides = [
        row
        for row in broker.journal()
        if row["epoch"] > int(granted["epoch"]) and row["event"] == "user_input"
    ]
    assert overrides and overrides[0]["actor"] == "person" and overrides[0]["signal"] == "user_input_override"
