"""kronii's redaction engine: secrets and personal data out of text, before anything leaves a process.

    engine = RedactionEngine(RedactionPolicy.load(path))
    context = RedactionContext(key)            # one per run/conversation: stable [EMAIL_1] placeholders
    result = engine.redact(text, context=context, app="org.gnome.Terminal")
    if result.level is Level.RED: ...          # nothing leaves, not even result.text
    send(result.text)                          # amber or green: placeholders in place of findings

Findings carry type, span, detector and confidence, never the value. Errors fail closed (level red, no text).
"""

from ._context import RedactionContext
from ._engine import RedactionEngine
from ._lines import LineSpan, LinesRedaction
from ._logging import RedactingLogFilter
from ._model import ENGINE_ERROR_TEXT, WITHHELD_TEXT, Finding, Level, RedactionResult
from ._policy import CustomPattern, HintSpan, PolicyError, PolicyHints, RedactionPolicy
from ._shared import shared_engine
from ._types import Category, FindingType, category_of

__all__ = [
    "ENGINE_ERROR_TEXT",
    "WITHHELD_TEXT",
    "Category",
    "CustomPattern",
    "Finding",
    "FindingType",
    "HintSpan",
    "Level",
    "LineSpan",
    "LinesRedaction",
    "PolicyError",
    "PolicyHints",
    "RedactingLogFilter",
    "RedactionContext",
    "RedactionEngine",
    "RedactionPolicy",
    "RedactionResult",
    "category_of",
    "shared_engine",
]
