"""Fixtures for the pipeline adapter tests: an engine on the migrated database, a connected bus,
a private D-Bus session bus and a private tmux server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from kronii.stores.bus import Bus
from kronii.stores.db import make_engine
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.agents.harness import private_socket
from tests.desktop import start_session_bus
from tests.infra import InfraUrls
from tests.notification_server import server_bus  # noqa: F401  (a fixture, shared)


@pytest_asyncio.fixture
async def engine(migrated_database: str) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(migrated_database)
    try:
        yield engine
    finally:
        await engine.dispose()


@pytest_asyncio.fixture
async def bus(infra: InfraUrls) -> AsyncIterator[Bus]:
    connected = Bus("pipeline-adapters-test")
    await connected.connect(infra.nats)
    try:
        yield connected
    finally:
        await connected.close()


@pytest.fixture
def session_bus() -> Iterator[str]:
    with start_session_bus() as address:
        yield address


@pytest.fixture
def tmux_socket() -> Iterator[str]:
    with private_socket() as socket:
        yield socket
