"""Window titles pass through the redaction engine before they leave the sensor.

Fail closed: if the engine raises or says red, the title is replaced, never passed through.
"""

from __future__ import annotations

import logging
import secrets
from collections import OrderedDict
from dataclasses import replace

from kronii.redaction import Level, RedactionContext, RedactionEngine, shared_engine
from kronii.sensor.core.model import Focus

__all__ = ["REDACTED_TITLE", "TitleRedactor"]

log = logging.getLogger(__name__)
REDACTED_TITLE = "[redacted]"


class TitleRedactor:
    def __init__(self, engine: RedactionEngine | None = None, cache_size: int = 512) -> None:
        self._engine = engine or shared_engine()
        # One context for the sensor's lifetime: the same address is [EMAIL_1] in every event.
        self._context = RedactionContext(key=secrets.token_bytes(32))
        self._cache: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._cache_size = cache_size

    def redact(self, title: str, app: str = "") -> str:
        if not title:
            return title
        key = (app, title)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        try:
            result = self._engine.redact(title, context=self._context, app=app or None)
            clean = REDACTED_TITLE if result.level is Level.RED else result.text
        except Exception:
            log.exception("title redaction failed; the title is withheld")
            return REDACTED_TITLE
        self._cache[key] = clean
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return clean

    def clean(self, focus: Focus) -> Focus:
        return replace(focus, title=self.redact(focus.title, focus.app_name)) if focus.title else focus
