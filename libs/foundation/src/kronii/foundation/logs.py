"""Structured logs: one JSON object per line with service name and trace id, redacted before output."""

from __future__ import annotations

import json
import logging
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

__all__ = ["JsonFormatter", "LinePrefixFormatter", "TextFormatter", "configure_logging", "current_service"]

# Which service a record comes from when several share a process (kronii.runtime.service_group): each
# service's task runs in a context where this is set, and every task and callback it starts inherits it.
current_service: ContextVar[str | None] = ContextVar("kronii_current_service", default=None)

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
            "service": current_service.get() or self.service,
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
        super().__init__("%(asctime)s %(levelname)-7s %(_kronii_service)s %(name)s: %(message)s")
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        # Underscored, so a JSON formatter that sees the same record never prints it as an extra field.
        record._kronii_service = current_service.get() or self.service
        return super().format(record)


class LinePrefixFormatter(logging.Formatter):
    """Every line of a record (a traceback's too) starts with "<service> | ", so that `kronii up` can show
    each line of a process shared by several services under the right name."""

    def __init__(self, inner: logging.Formatter, service: str) -> None:
        super().__init__()
        self.inner = inner
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"{current_service.get() or self.service} | "
        return "\n".join(prefix + line for line in self.inner.format(record).splitlines() or [""])


def configure_logging(
    service: str, level: str = "INFO", fmt: str = "json", *, prefix_lines: bool = False
) -> None:
    """Route every log record through the redaction filter, then one formatter, to stderr.

    `prefix_lines` starts every line with its service's name (see `LinePrefixFormatter`)."""
    from kronii.redaction import RedactingLogFilter

    handler = logging.StreamHandler(sys.stderr)
    formatter: logging.Formatter = JsonFormatter(service) if fmt == "json" else TextFormatter(service)
    handler.setFormatter(LinePrefixFormatter(formatter, service) if prefix_lines else formatter)
    # A handler filter (not a logger filter) so records from every logger are redacted.
    handler.addFilter(RedactingLogFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # httpx says every request it makes at INFO: the console polls its services every few seconds.
    for noisy in ("uvicorn.access", "nats", "asyncio", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, logging.getLevelName(level)))
