"""Real PostgreSQL (migrated to 0004_capture) and Redis for the capture vault, tokens, sessions and
front door; a real key-file master key provider in a private temporary directory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from kronii.crypto import KeyFileProvider
from kronii.stores.db import make_engine, make_sessionmaker, migrate_up
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from tests.infra import InfraUrls, create_database

Sessions = async_sessionmaker[AsyncSession]


@pytest.fixture(scope="module")
def vault_database(infra: InfraUrls, request: pytest.FixtureRequest) -> str:
    """One database per test module, migrated up to the capture tables."""
    name = "capture_vault_" + request.module.__name__.rsplit(".", 1)[-1].lower()
    url = create_database(infra.database, name[:60])
    migrate_up(url, "0004_capture")
    return url


@pytest_asyncio.fixture
async def db(vault_database: str) -> AsyncIterator[Sessions]:
    engine = make_engine(vault_database)
    try:
        yield make_sessionmaker(engine)
    finally:
        await engine.dispose()


@pytest_asyncio.fixture
async def redis(infra: InfraUrls) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(infra.redis)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
def provider(tmp_path: Path) -> KeyFileProvider:
    return KeyFileProvider(tmp_path / "keys")
