"""The Agents page's adapter and use cases against a REAL supervisor process (real tmux, Redis,
PostgreSQL, NATS) and a `python3 -i` agent in a real pane: the console's own token, made from the
host's supervisor secret and sent only after the server proved it holds it; the runtime's live state;
a trigger's true outcome; the deferred queue; force with a human override; pause and resume; the
pane's text redacted before it reaches the console."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from kronii.console.adapters.supervisor_api import SupervisorApi, supervisor_secret
from kronii.console.ports import ServiceNotAnswering
from kronii.console.usecases.show_agents import ShowAgents
from kronii.console.usecases.steer_agent import SteerAgent
from kronii.foundation.errors import NotFound

from tests.agents.harness import private_socket
from tests.infra import InfraUrls
from tests.integration.supervisor.conftest import SECRET, Supervisor, start_supervisor, wait_ready_pane

PERSON = "person:uid:test"
# A GitHub token's shape: the supervisor's redaction engine finds it in the pane's text.
SECRET_VALUE_CODE = '"ghp_" + "a1B2c3D4" * 4 + "e5F6"'
SECRET_VALUE = "ghp_" + "a1B2c3D4" * 4 + "e5F6"


class Rows:
    def __init__(self) -> None:
        self.rows: list[dict[str, object]] = []

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: object
    ) -> None:
        self.rows.append({"actor": actor, "action": action, "subject": subject, "outcome": outcome, **detail})


@pytest.fixture(scope="module")
def supervisor(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Supervisor]:
    folder = tmp_path_factory.mktemp("console-supervisor")
    with private_socket() as socket, start_supervisor(infra, migrated_database, folder, socket) as sup:
        yield sup


@pytest_asyncio.fixture
async def api(supervisor: Supervisor) -> AsyncIterator[SupervisorApi]:
    client = SupervisorApi(supervisor.url, SECRET.encode(), timeout_secs=10)
    yield client
    await client.close()


def _python_agent(supervisor: Supervisor) -> tuple[str, str]:
    agent = f"console-{uuid.uuid4().hex[:6]}"
    runtime = supervisor.spawn(agent, kind="python", command=[sys.executable, "-i", "-q"])["runtime"]
    wait_ready_pane(supervisor, runtime["runtime_id"], ">>>")
    return agent, str(runtime["runtime_id"])


async def test_a_trigger_from_the_console_runs_and_its_true_outcome_is_on_the_agents_card(
    supervisor: Supervisor, api: SupervisorApi
) -> None:
    agent, runtime_id = _python_agent(supervisor)
    audit = Rows()
    steer, show = SteerAgent(api, audit, lambda: uuid.uuid4().hex[:8]), ShowAgents(api)

    outcome = await steer.trigger(PERSON, "ws1", agent, "print(6 * 7)")
    assert outcome.result == "delivered" and outcome.runtime_id == runtime_id, outcome
    assert audit.rows[-1]["action"] == "console.agents.trigger" and audit.rows[-1]["outcome"] == "delivered"
    pane = await show.pane(runtime_id, 20)
    assert "42" in [line.strip() for line in pane], pane

    async def card_shows_it() -> bool:
        view = await show.view()
        card = next(c for c in view.cards if c.runtime.runtime_id == runtime_id)
        return card.runtime.state == "idle" and [t.trigger_id for t in card.triggers][:1] == [
            outcome.trigger_id
        ]

    await _eventually(card_shows_it, "the card with the idle runtime and its trigger")


async def test_a_deferred_trigger_is_in_the_queue_and_force_from_the_console_delivers_it(
    supervisor: Supervisor, api: SupervisorApi
) -> None:
    agent, runtime_id = _python_agent(supervisor)
    steer, show = SteerAgent(api, Rows(), lambda: uuid.uuid4().hex[:8]), ShowAgents(api)
    paused = await steer.pause(PERSON, runtime_id, "a test holds it")
    assert paused.paused is True
    waiting = await steer.trigger(PERSON, "ws1", agent, "print('held')")
    assert waiting.result == "deferred" and waiting.error_code == "RUNTIME_PAUSED", waiting

    view = await show.view()
    assert waiting.trigger_id in [t.trigger_id for t in view.deferred]
    assert next(c for c in view.cards if c.runtime.runtime_id == runtime_id).runtime.paused

    forced = await steer.force(PERSON, waiting.trigger_id, "the person wants it now")
    assert forced.result == "delivered", forced
    assert (await steer.resume(PERSON, runtime_id)).paused is False
    assert "held" in [line.strip() for line in await show.pane(runtime_id, 20)]


async def test_the_pane_reaches_the_console_redacted(supervisor: Supervisor, api: SupervisorApi) -> None:
    agent, runtime_id = _python_agent(supervisor)
    outcome = await SteerAgent(api, Rows(), lambda: "r" + uuid.uuid4().hex[:8]).trigger(
        PERSON, "ws1", agent, f"print({SECRET_VALUE_CODE})"
    )
    assert outcome.result == "delivered", outcome
    lines = await ShowAgents(api).pane(runtime_id, 30)
    assert any("print(" in line for line in lines), lines
    assert not any(SECRET_VALUE in line for line in lines), "the token's value reached the console"
    assert not any("a1B2c3D4a1B2c3D4" in line for line in lines), lines
    assert any(line.strip().startswith("[GITHUB_TOKEN") for line in lines), (
        "the printed line is not its placeholder"
    )


async def test_a_server_without_the_hosts_secret_gets_no_token(
    supervisor: Supervisor, tmp_path: Path
) -> None:
    wrong = SupervisorApi(supervisor.url, b"not-the-secret-of-this-host-0123", timeout_secs=10)
    try:
        with pytest.raises(ServiceNotAnswering, match="not this host's supervisor"):
            await wrong.runtimes()
    finally:
        await wrong.close()
    assert supervisor_secret(tmp_path, environ={}) is None, "no key file, no environment: no secret"
    (tmp_path / "supervisor").mkdir()
    (tmp_path / "supervisor" / "token.key").write_bytes(b"from-the-file-0123456789\n")
    assert supervisor_secret(tmp_path, environ={}) == b"from-the-file-0123456789"


async def test_a_refusal_keeps_the_supervisors_sentence(supervisor: Supervisor, api: SupervisorApi) -> None:
    steer = SteerAgent(api, Rows(), lambda: "x")
    with pytest.raises(NotFound, match=r"the supervisor refused: .*no trigger"):
        await steer.force(PERSON, "no-such-trigger", "")


async def _eventually(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")
