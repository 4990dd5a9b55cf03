"""`kronii status` speaks to the real servers itself (NATS, Redis's RESP, HTTP) and loads the PostgreSQL
driver only for a port that answers; each check against the test run's real servers."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit, urlunsplit

import pytest
from kronii.common.infra import free_port
from kronii.common.status import _check_nats, _check_postgres, _check_redis

from tests.infra import InfraUrls


def test_status_reads_the_redis_version_over_resp_with_the_password(infra: InfraUrls) -> None:
    assert asyncio.run(_check_redis(infra.redis)).startswith("redis ")
    assert asyncio.run(_check_redis(infra.redis)) != "redis ?"


def test_status_redis_with_a_wrong_password_is_not_ready_with_the_servers_reason(infra: InfraUrls) -> None:
    parts = urlsplit(infra.redis)
    if not parts.password:
        pytest.skip("this run's Redis has no password (configured from the environment)")
    wrong = urlunsplit(parts._replace(netloc=f":not-the-password@{parts.hostname}:{parts.port}"))
    with pytest.raises(ConnectionError, match=r"WRONGPASS|invalid"):
        asyncio.run(_check_redis(wrong))


def test_status_nats_and_postgres_answer_with_their_versions(infra: InfraUrls) -> None:
    assert asyncio.run(_check_nats(infra.nats)).startswith("nats-server ")
    assert asyncio.run(_check_postgres(infra.database)).startswith("PostgreSQL ")


def test_status_postgres_port_closed_is_refused_before_the_driver_loads() -> None:
    with pytest.raises(OSError):
        asyncio.run(_check_postgres(f"postgresql://kronii:x@127.0.0.1:{free_port()}/kronii"))
