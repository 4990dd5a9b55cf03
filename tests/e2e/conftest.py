"""End-to-end fixtures: a real X server with a window manager and a private session bus."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.desktop import start_session_bus, start_xvfb


@pytest.fixture(scope="module")
def xdisplay() -> Iterator[str]:
    with start_xvfb() as display:
        yield display


@pytest.fixture(scope="module")
def session_bus() -> Iterator[str]:
    with start_session_bus() as address:
        yield address
