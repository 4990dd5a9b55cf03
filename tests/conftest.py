"""Fixtures shared by the whole suite. Infrastructure is real and started once per run."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from kronii.stores.db import make_engine, make_sessionmaker, migrate_up

from tests.infra import InfraUrls, create_database, start_test_infra
from tests.mesh import note_last_users, share_httpx_ssl_contexts, stop_what_item_used_last

# A person's own ~/.config/kronii/config.toml must not change what the suite tests; tests of the
# config file point KRONII_CONFIG (or XDG_CONFIG_HOME) at their own.
os.environ.setdefault("KRONII_CONFIG", str(Path(tempfile.gettempdir()) / "kronii-tests" / "no-config.toml"))
# The tests choose their desktop sessions (Xvfb, a headless sway): run from a person's Wayland desktop,
# the host agents of an X11 test must not follow that person's compositor instead.
os.environ.pop("WAYLAND_DISPLAY", None)
share_httpx_ssl_contexts()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    note_last_users(items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield
    stop_what_item_used_last(item)


@pytest.fixture(scope="session")
def infra() -> Iterator[InfraUrls]:
    with start_test_infra() as urls:
        yield urls


@pytest.fixture(scope="session")
def migrated_database(infra: InfraUrls) -> str:
    """A database with every migration applied, shared by the tests that only append."""
    url = create_database(infra.database, "kronii_test")
    migrate_up(url)
    return url


@pytest.fixture
def fresh_database(infra: InfraUrls, request: pytest.FixtureRequest) -> str:
    name = "t_" + "".join(ch if ch.isalnum() else "_" for ch in request.node.name)[:50].lower()
    return create_database(infra.database, name)


@pytest_asyncio.fixture
async def sessions(migrated_database: str) -> AsyncIterator[object]:
    engine = make_engine(migrated_database)
    try:
        yield make_sessionmaker(engine)
    finally:
        await engine.dispose()
