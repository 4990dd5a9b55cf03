"""Fixtures for the redaction unit tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kronii.redaction import RedactionEngine


@pytest.fixture(scope="session")
def engine() -> RedactionEngine:
    return RedactionEngine()


@pytest.fixture(scope="session")
def masked(engine: RedactionEngine) -> Callable[[str], list[tuple[str, str]]]:
    """What the whole engine masks in a text, as (type, original text of the masked span)."""

    def run(text: str) -> list[tuple[str, str]]:
        result = engine.redact(text)
        return [(f.type, text[f.start : f.end]) for f in result.findings]

    return run
