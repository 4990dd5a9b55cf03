"""The console's critic adapter and the Shell page against the REAL critic service as a process (real
PostgreSQL, its day files): commands reported to it are found by meaning (the critic's own search)
and by text, failures only when asked, with the hint kind the critic kept; a typed secret shows only
masked; the clusters route answers (none kept yet: an empty list, not an error)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import pytest_asyncio
from kronii.console.adapters.critic_api import CriticApi
from kronii.console.adapters.service_clients import HttpServiceClients
from kronii.console.usecases.search_shell import SearchShell

from tests.infra import InfraUrls
from tests.integration.critic.test_critic_service import Critic, start_critic
from tests.mesh import wait_until
from tests.unit.console.console_records_harness import build_pages

SECRET = "hunter2-Zq8v"
COMMANDS = [
    ("git push origin feature-console", 1),
    ("ls /srv/console-nowhere", 2),
    ("make console-build", 0),
    (f"mysql -u root -p{SECRET} console_db", 0),
]


@pytest.fixture(scope="module")
def critic(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Critic]:
    with start_critic(infra, migrated_database, tmp_path_factory.mktemp("console-critic")) as running:
        for line, status in COMMANDS:
            answer = httpx.post(
                f"{running.url}/v1/critic/events",
                json={
                    "shell": "bash",
                    "session": "console-it",
                    "cwd": "/srv",
                    "command_line": line,
                    "exit_status": status,
                },
                timeout=20,
            )
            answer.raise_for_status()
        wait_until(
            lambda: len(running.get("/v1/critic/search", text="", take=50)["hits"]) >= len(COMMANDS),
            20, "the reported commands kept",
        )  # fmt: skip
        yield running


@pytest_asyncio.fixture
async def clients(critic: Critic) -> AsyncIterator[HttpServiceClients]:
    services = HttpServiceClients({"critic": critic.url}, api_token=None, timeout_secs=20)
    try:
        yield services
    finally:
        await services.close()


async def test_by_text_finds_the_words_as_written_and_failures_only_keeps_failures(
    clients: HttpServiceClients,
) -> None:
    search = SearchShell(CriticApi(clients))

    pushed = await search.search("push feature-console", "text", False)
    failed = await search.search("console", "text", True)

    assert [hit.record.command_line for hit in pushed.hits] == ["git push origin feature-console"]
    assert pushed.hits[0].record.failed and pushed.hits[0].record.hint.startswith("failed")
    assert {hit.record.command_line for hit in failed.hits} == {
        "git push origin feature-console",
        "ls /srv/console-nowhere",
    }
    assert pushed.problems == () and pushed.clusters == ()


async def test_by_meaning_is_the_critics_own_search(clients: HttpServiceClients) -> None:
    view = await SearchShell(CriticApi(clients)).search("make console-build", "meaning", False)

    assert view.hits and view.hits[0].record.command_line == "make console-build"


async def test_the_page_shows_the_secret_only_masked(clients: HttpServiceClients) -> None:
    pages = await build_pages(clients)
    async with pages.session() as client:
        page = await client.get("/shell", params={"q": "mysql", "mode": "text"})

    assert page.status_code == 200 and "mysql -u root" in page.text
    assert SECRET not in page.text
    assert "a secret was typed on the command line" in page.text
