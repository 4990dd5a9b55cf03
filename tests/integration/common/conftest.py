"""The five services as real processes, started once for the hostile-input, malformed-protobuf and
OpenAPI tests of this folder (starting them takes seconds). They have a NATS and a Redis of their
own, so they never take messages or keys meant for other tests' services while they run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from tests.infra import InfraUrls
from tests.integration.common.hostile_support import Mesh, mesh_of_five
from tests.mesh import stop_after_last_use


@pytest.fixture(scope="session")
def mesh(
    infra: InfraUrls, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Mesh]:
    """Stopped after the last test that uses it (its eight idle services would slow every later test)."""
    with contextlib.ExitStack() as stack:
        running = stack.enter_context(mesh_of_five(infra, tmp_path_factory.mktemp("mesh")))
        stop_after_last_use(request, stack)
        yield running
