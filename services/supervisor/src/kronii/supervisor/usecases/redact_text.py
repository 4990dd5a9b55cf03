"""Text that leaves the supervisor (a pane's lines, a thread's message) goes through the redaction
engine first, with one engine and one per-process key for the whole service. When the engine cannot
make the text safe (RED) or fails, None: the caller withholds or refuses it, never shows it as is."""

from __future__ import annotations

import logging
import secrets
from typing import Any

__all__ = ["redact_text"]

log = logging.getLogger(__name__)

_redactor: Any = None


def redact_text(text: str) -> str | None:
    global _redactor
    try:
        from kronii.redaction import Level, RedactionContext, shared_engine

        if _redactor is None:
            _redactor = (shared_engine(), RedactionContext(key=secrets.token_bytes(32)))
        engine, context = _redactor
        result = engine.redact(text, context=context)
        if result.level is Level.RED:
            return None
        return str(result.text)
    except Exception:
        log.exception("redacting text failed; it is withheld")
        return None
