"""The logging filter redacts messages after formatting them with their args, and tracebacks too."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from kronii.redaction import RedactingLogFilter


@pytest.fixture
def logger_and_stream() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    handler.addFilter(RedactingLogFilter())
    logger = logging.getLogger("kronii.test.redaction")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    yield logger, stream
    logger.removeHandler(handler)


def test_args_are_formatted_then_redacted(logger_and_stream: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = logger_and_stream
    logger.info("user %s logged in from %s with token=%s", "alice@exemple.com", "8.8.8.8", "a1b2c3d4e5f6g7")
    line = stream.getvalue()
    assert line == "INFO user [EMAIL_1] logged in from [IP_ADDRESS_1] with token=[SECRET_1]\n"


def test_record_is_rewritten_in_place() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "mail %s", ("bob@exemple.com",), None)
    assert RedactingLogFilter().filter(record) is True
    assert (record.msg, record.args) == ("mail [EMAIL_1]", None)
    assert record.getMessage() == "mail [EMAIL_1]"


def test_tracebacks_are_redacted(logger_and_stream: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = logger_and_stream
    try:
        raise ValueError("bad password=hunter2 for carol@exemple.com")
    except ValueError:
        logger.exception("request failed")
    output = stream.getvalue()
    assert "hunter2" not in output and "carol@exemple.com" not in output
    assert "[PASSWORD_1]" in output and "Traceback" in output


def test_bad_format_args_do_not_leak() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%d items", ("secret-value",), None)
    RedactingLogFilter().filter(record)
    assert "secret-value" not in record.getMessage()


def test_filtering_twice_is_harmless() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "mail %s", ("bob@exemple.com",), None)
    log_filter = RedactingLogFilter()
    log_filter.filter(record)
    log_filter.filter(record)
    assert record.getMessage() == "mail [EMAIL_1]"
