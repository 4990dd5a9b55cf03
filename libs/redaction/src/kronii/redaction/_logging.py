"""A logging filter that redacts every record before any handler formats it.

Attach it to handlers (not only loggers: a logger's filters do not run for records propagated from its
children). It formats the message with its args first, redacts the result, and stores it as the message with
no args, so no formatter can put a raw argument back. Tracebacks and stack info are redacted the same way.
"""

from __future__ import annotations

import logging

from ._context import RedactionContext
from ._engine import RedactionEngine
from ._model import ENGINE_ERROR_TEXT
from ._shared import shared_engine

__all__ = ["RedactingLogFilter"]

_MARK = "_kronii_redacted"
_FORMATTER = logging.Formatter()


class RedactingLogFilter(logging.Filter):
    """Redacts log records in place; never drops one (a log line with placeholders beats a silent gap).

    Placeholders are numbered per record, so the filter holds no growing state in a long-lived service.
    """

    def __init__(self, engine: RedactionEngine | None = None, name: str = "") -> None:
        super().__init__(name)
        self._engine = engine if engine is not None else shared_engine()

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, _MARK, False):
            return True  # already redacted by another handler's filter
        context = RedactionContext.random()
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: its args may hold anything, so keep none of it
            message = ENGINE_ERROR_TEXT
        record.msg = self._engine.redact(message, context=context).text
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = _FORMATTER.formatException(record.exc_info)
        record.exc_info = None  # the formatter would otherwise re-render the raw traceback
        if record.exc_text:
            record.exc_text = self._engine.redact(record.exc_text, context=context).text
        if record.stack_info:
            record.stack_info = self._engine.redact(record.stack_info, context=context).text
        setattr(record, _MARK, True)
        return True
