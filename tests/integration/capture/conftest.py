"""Fixtures of the capture service's integration tests: Xvfb with openbox, the service as a process
on real NATS/Redis/PostgreSQL, and a stand-in sensor."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.desktop import start_xvfb
from tests.infra import InfraUrls, create_database
from tests.integration.capture.capture_support import CaptureProc, FakeSensor, capture_env, start_capture


@pytest.fixture(scope="module")
def x_display() -> Iterator[str]:
    with start_xvfb(screen="1280x800x24") as display:
        yield display


@pytest.fixture(scope="module")
def capture_database(infra: InfraUrls) -> str:
    from kronii.stores.db import migrate_up

    url = create_database(infra.database, "kronii_capture_it")
    migrate_up(url)
    return url


@pytest.fixture(scope="module")
def capture_service(
    infra: InfraUrls, capture_database: str, x_display: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CaptureProc]:
    data_dir: Path = tmp_path_factory.mktemp("capture-data")
    with start_capture(capture_env(infra, capture_database, data_dir, x_display)) as service:
        yield service


@pytest_asyncio.fixture(scope="module")
async def sensor(infra: InfraUrls) -> AsyncIterator[FakeSensor]:
    fake = FakeSensor(infra)
    await fake.start()
    try:
        yield fake
    finally:
        await fake.close()
