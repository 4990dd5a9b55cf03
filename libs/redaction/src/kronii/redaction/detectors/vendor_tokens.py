"""Tokens whose vendor documents a recognisable format (GitHub, Slack, Stripe, OpenAI, ...)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ._base import Candidate, ScanText, literal_alternation
from ._vendor_rules import CONTEXT_RULES, PREFIX_RULES

__all__ = ["VendorTokenDetector"]


@dataclass(frozen=True, slots=True)
class _CompiledPrefix:
    type: str
    prefix: str
    regex: re.Pattern[str]
    confidence: float
    mask_prefix: bool
    with_scheme: bool
    head: re.Pattern[str] | None
    head_max: int


@dataclass(frozen=True, slots=True)
class _CompiledContext:
    type: str
    keywords: tuple[str, ...]
    regex: re.Pattern[str]
    confidence: float


_SCHEMES = ("https://", "http://")


class VendorTokenDetector:
    name = "vendor_tokens"

    def __init__(self) -> None:
        # One regex per literal prefix: a pattern that starts with a literal is scanned with a fast
        # prefix search, where an alternation of prefixes would be tried at every position.
        self._prefixed = tuple(
            _CompiledPrefix(
                rule.type,
                prefix,
                re.compile(re.escape(prefix) + rule.body),
                rule.confidence,
                rule.mask_prefix,
                rule.with_scheme,
                re.compile(f"(?:{rule.head})\\Z") if rule.head else None,
                rule.head_max,
            )
            for rule in PREFIX_RULES
            for prefix in rule.prefixes
        )
        # One factored alternation of every prefix finds all hits in a single pass; each hit then runs only
        # the rules whose prefix it starts with ("sk-ant-" runs both the "sk-ant-" and the "sk-" rule).
        prefixes = {rule.prefix for rule in self._prefixed}
        self._any_prefix = re.compile(literal_alternation(prefixes))
        self._rules_for_hit = {
            hit: tuple(rule for rule in self._prefixed if hit.startswith(rule.prefix)) for hit in prefixes
        }
        self._contextual = tuple(
            _CompiledContext(rule.type, rule.keywords, re.compile(rule.pattern), rule.confidence)
            for rule in CONTEXT_RULES
        )

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for hit in self._any_prefix.finditer(text):
            position = hit.start()
            # A prefix glued to a longer word ("monkey-..." for "key-") is not the vendor's token.
            glued = position > 0 and text[position - 1].isalnum()
            for rule in self._rules_for_hit[hit.group()]:
                start = position
                if rule.head is not None:
                    head = rule.head.search(text, max(0, position - rule.head_max), position)
                    if head is None or (head.start() > 0 and text[head.start() - 1].isalnum()):
                        continue
                    start = head.start()
                elif glued:
                    continue
                match = rule.regex.match(text, position)
                if match is None:
                    continue
                if not rule.mask_prefix:
                    start += len(rule.prefix)
                elif rule.with_scheme:
                    start = _with_scheme(text, start)
                yield Candidate(rule.type, start, match.end(), rule.confidence, self.name)
        for context_rule in self._contextual:
            if not scan.lower_contains_any(context_rule.keywords):
                continue
            for match in context_rule.regex.finditer(text):
                yield Candidate(
                    context_rule.type, match.start(), match.end(), context_rule.confidence, self.name
                )


def _with_scheme(text: str, start: int) -> int:
    for scheme in _SCHEMES:
        if start >= len(scheme) and text.startswith(scheme, start - len(scheme)):
            return start - len(scheme)
    return start
