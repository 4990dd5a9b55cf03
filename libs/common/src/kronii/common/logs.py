"""Structured logs: one JSON object per line with service name and trace id, redacted before output."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

__all__ = ["JsonFormatter", "TextFormatter", "configure_logging"]

_STANDARD_ATTRS = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys()
    | {"message", "asctime", "taskName", "color_message"}
)


def _trace_fields() -> dict[str, str]:
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}


def _exception_text(record: logging.LogRecord, formatter: logging.Formatter) -> str:
    """The traceback to write: the redaction filter leaves its redacted copy in `exc_text` and clears
    `exc_info`, so `exc_text` comes first; `exc_info` only for a record no filter has seen."""
    if record.exc_text:
        return record.exc_text
    if record.exc_info:
        return formatter.formatException(record.exc_info)
    return ""


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "service": self.service,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(_trace_fields())
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = value if isinstance(value, str | int | float | bool | None) else str(value)
        exc = _exception_text(record, self)
        if exc:
            entry["exc"] = exc
        if record.stack_info:
            entry["stack"] = record.stack_info
        return json.dumps(entry, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__("%(asctime)s %(levelname)-7s " + service + " %(name)s: %(message)s")


def configure_logging(service: str, level: str = "INFO", fmt: str = "json") -> None:
    """Route every log record through the redaction filter, then one formatter, to stderr."""
    from kronii.redaction import RedactingLogFilter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(service) if fmt == "json" else TextFormatter(service))
    # A handler filter (not a logger filter) so records from every logger are redacted.
    handler.addFilter(RedactingLogFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("uvicorn.access", "nats", "asyncio"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
