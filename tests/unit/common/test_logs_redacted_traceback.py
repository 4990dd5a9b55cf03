"""Log lines keep the traceback of the exception they report, redacted like the message: the JSON line's
`exc` field and the text format's trailing lines."""

from __future__ import annotations

import io
import json
import logging
import secrets
import string

import pytest
from kronii.foundation.logs import JsonFormatter, TextFormatter
from kronii.redaction import RedactingLogFilter


@pytest.fixture
def secret_text() -> tuple[str, str, str]:
    password = "Pw" + secrets.token_hex(10)
    aws_key = "AKIA" + "".join(secrets.choice(string.ascii_uppercase + "234567") for _ in range(16))
    return password, aws_key, f"postgresql://kronii:{password}@db.internal:5432/kronii, key {aws_key}"


def _logger(formatter: logging.Formatter, *, redact: bool = True) -> tuple[logging.Logger, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    if redact:
        handler.addFilter(RedactingLogFilter())
    logger = logging.getLogger(f"kronii.test.logs.{secrets.token_hex(4)}")
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger, out


@pytest.fixture
def json_logger() -> tuple[logging.Logger, io.StringIO]:
    return _logger(JsonFormatter("sensor"))


def _connect(target: str) -> None:
    raise ConnectionError(f"cannot reach {target}")


def test_json_line_carries_the_redacted_traceback(
    json_logger: tuple[logging.Logger, io.StringIO], secret_text: tuple[str, str, str]
) -> None:
    logger, out = json_logger
    password, aws_key, target = secret_text
    try:
        _connect(target)
    except ConnectionError:
        logger.exception("sensor failed")
    [line] = out.getvalue().splitlines()
    entry = json.loads(line)

    assert entry["msg"] == "sensor failed"
    assert entry["exc"].startswith("Traceback (most recent call last):")
    assert "in _connect" in entry["exc"]
    assert "ConnectionError: cannot reach postgresql://kronii:[URL_CREDENTIAL_1]@db.internal" in entry["exc"]
    assert "[AWS_ACCESS_KEY_ID_1]" in entry["exc"]
    assert password not in line and aws_key not in line


def test_json_line_masks_secrets_of_a_chained_cause(
    json_logger: tuple[logging.Logger, io.StringIO], secret_text: tuple[str, str, str]
) -> None:
    logger, out = json_logger
    password, aws_key, target = secret_text
    try:
        try:
            _connect(target)
        except ConnectionError as error:
            raise RuntimeError("the snapshot store is down") from error
    except RuntimeError:
        logger.exception("storing the snapshot failed")
    entry = json.loads(out.getvalue())

    assert "The above exception was the direct cause" in entry["exc"]
    assert "RuntimeError: the snapshot store is down" in entry["exc"]
    assert password not in entry["exc"] and aws_key not in entry["exc"]


def test_json_line_without_an_exception_has_no_exc(json_logger: tuple[logging.Logger, io.StringIO]) -> None:
    logger, out = json_logger
    logger.error("sensor failed: the NATS server has no JetStream")

    assert "exc" not in json.loads(out.getvalue())


def test_json_formatter_alone_still_writes_the_traceback() -> None:
    logger, out = _logger(JsonFormatter("sensor"), redact=False)
    try:
        _connect("nowhere")
    except ConnectionError:
        logger.exception("failed")

    assert "ConnectionError: cannot reach nowhere" in json.loads(out.getvalue())["exc"]


def test_text_format_carries_the_redacted_traceback(secret_text: tuple[str, str, str]) -> None:
    logger, out = _logger(TextFormatter("sensor"))
    password, aws_key, target = secret_text
    try:
        _connect(target)
    except ConnectionError:
        logger.exception("sensor failed")
    lines = out.getvalue().splitlines()

    assert lines[0].endswith("sensor failed")
    assert lines[1] == "Traceback (most recent call last):"
    assert lines[-1].startswith("ConnectionError: cannot reach postgresql://kronii:[URL_CREDENTIAL_1]@")
    assert password not in out.getvalue() and aws_key not in out.getvalue()
