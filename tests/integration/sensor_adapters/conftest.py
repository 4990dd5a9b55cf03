"""Fixtures for the sensor adapter tests: a private Xvfb + openbox and private D-Bus daemons per test,
so no test sees another's windows, input or signals."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.desktop import start_session_bus, start_xvfb


@pytest.fixture
def x_display() -> Iterator[str]:
    with start_xvfb() as display:
        yield display


@pytest.fixture
def session_bus() -> Iterator[str]:
    with start_session_bus() as address:
        yield address


@pytest.fixture
def fake_system_bus() -> Iterator[str]:
    """A second private bus standing in for the system bus, where the test can own org.freedesktop.login1."""
    with start_session_bus() as address:
        yield address
