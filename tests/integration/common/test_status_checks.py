"""`kronii status` speaks to the real servers itself (NATS, Redis's RESP, HTTP) and loads the PostgreSQL
driver only for a port that answers; each check against the test run's real servers."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest
from kronii.launcher.infra import EmbeddedInfra, InfraPorts, free_port
from kronii.launcher.status import _check_nats, _check_postgres, _check_redis

from tests.infra import InfraUrls


@pytest.fixture(scope="module")
def redis_with_password(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The embedded Redis as `kronii up` starts it (a generated password), whatever the run's own Redis is."""
    servers = EmbeddedInfra(tmp_path_factory.mktemp("status-redis"), InfraPorts(0, free_port(), 0))
    try:
        # Only Redis is spawned: the other two count as configured elsewhere.
        url = servers.start(nats_url="nats://unused", redis_url=None, database_url="postgresql://unused")[
            "redis"
        ].url
        yield url
    finally:
        servers.stop()


def test_status_reads_the_redis_version_over_resp_with_the_password(redis_with_password: str) -> None:
    assert urlsplit(redis_with_password).password
    answer = asyncio.run(_check_redis(redis_with_password))
    assert answer.startswith("redis ") and answer != "redis ?"


def test_status_redis_with_a_wrong_password_is_not_ready_with_the_servers_reason(
    redis_with_password: str,
) -> None:
    parts = urlsplit(redis_with_password)
    wrong = urlunsplit(parts._replace(netloc=f":not-the-password@{parts.hostname}:{parts.port}"))
    with pytest.raises(ConnectionError, match=r"WRONGPASS|invalid"):
        asyncio.run(_check_redis(wrong))


def test_status_nats_and_postgres_answer_with_their_versions(infra: InfraUrls) -> None:
    assert asyncio.run(_check_nats(infra.nats)).startswith("nats-server ")
    assert asyncio.run(_check_postgres(infra.database)).startswith("PostgreSQL ")


def test_status_postgres_port_closed_is_refused_before_the_driver_loads() -> None:
    with pytest.raises(OSError):
        asyncio.run(_check_postgres(f"postgresql://kronii:x@127.0.0.1:{free_port()}/kronii"))
