"""Fixtures of the tests that run the real Codex CLI (tests/agents/node_modules, `make deps`) offline
in a private tmux server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.real_codex import RealCodex, real_codex


@pytest.fixture
def codex(tmp_path: Path) -> Iterator[RealCodex]:
    """A private CODEX_HOME, a trusted project folder and a private tmux server; `codex.start()`
    launches the TUI."""
    with real_codex(tmp_path) as run:
        yield run


@pytest.fixture
def untrusted_codex(tmp_path: Path) -> Iterator[RealCodex]:
    """The same, but the project folder is not trusted."""
    with real_codex(tmp_path, trusted=False) as run:
        yield run
