"""Fixtures for the sensor adapter tests: a private Xvfb + openbox and private D-Bus daemons per test,
so no test sees another's windows, input or signals."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[3]
# `pytest` run as a script (not `python -m pytest`) leaves the repository root off sys.path, and the
# workspace packages may not be installed editable; both are needed for the imports below.
for _path in (_ROOT, _ROOT / "services" / "sensor" / "src"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.desktop import start_session_bus, start_xvfb  # noqa: E402


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
