"""The five services as real processes, started once for the hostile-input, malformed-protobuf and
OpenAPI tests of this folder (starting them takes seconds). They have a NATS and a Redis of their
own, so they never take messages or keys meant for other tests' services while they run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.infra import InfraUrls
from tests.integration.common.hostile_support import Mesh, mesh_of_five


@pytest.fixture(scope="session")
def mesh(infra: InfraUrls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    with mesh_of_five(infra, tmp_path_factory.mktemp("mesh")) as running:
        yield running
