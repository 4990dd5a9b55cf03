"""Fixtures for the image redaction tests that run the real Tesseract, Xvfb and the CLI."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kronii.redaction import RedactionEngine

from tests.desktop import start_xvfb


@pytest.fixture(scope="session")
def engine() -> RedactionEngine:
    return RedactionEngine()


@pytest.fixture(scope="module")
def x_display() -> Iterator[str]:
    """A private 1024x768 Xvfb with openbox, shared by the tests of one module."""
    with start_xvfb(screen="1024x768x24") as display:
        yield display
