"""What the log keeps quiet at INFO: a client library's line per request (the console asks its services
every few seconds) is not news; its warnings still are."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from kronii.foundation.logs import configure_logging


@pytest.fixture
def restored_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in ("httpx", "httpcore", "uvicorn.access")}
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        for name, old in levels.items():
            logging.getLogger(name).setLevel(old)


def test_an_http_clients_request_lines_are_not_logged_at_info_but_its_warnings_are(
    restored_logging: None,
) -> None:
    configure_logging("console", "INFO", "text")

    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
    assert not logging.getLogger("httpcore").isEnabledFor(logging.INFO)
    assert logging.getLogger("httpx").isEnabledFor(logging.WARNING)
    assert logging.getLogger("kronii.console").isEnabledFor(logging.INFO)
