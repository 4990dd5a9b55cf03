"""Fixtures for the kronii.crypto unit tests: a real key file provider in a private directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from kronii.crypto import KeyFileProvider


@pytest.fixture
def key_dir(tmp_path: Path) -> Path:
    return tmp_path / "data-dir-with-a-recognisable-name"


@pytest.fixture
def master(key_dir: Path) -> KeyFileProvider:
    return KeyFileProvider(key_dir)
