"""Tokens whose vendor documents a recognisable format (GitHub, Slack, Stripe, OpenAI, ...)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .._types import FindingType
from ._base import Candidate, CandidatePart, ScanText, line_local_findings, literal_alternation
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
# A Discord bot token is base64url(the bot's user id) . base64url(timestamp) . HMAC. The id is a snowflake, a
# decimal number of 17 to 20 digits, so its Base64 starts M, N or O and decodes to digits only: that check
# finds the token without the word "discord" nearby, and keeps the id half from surviving next to a secret half
# masked as high entropy.
_DISCORD_SHAPE = re.compile(r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}")
_URLSAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


# For the compiled scan: every literal prefix (each token the prefixed rules find starts with one).
_PREFIXED_PART = CandidatePart(
    "vendor_tokens.prefixed",
    tuple(sorted({re.escape(prefix) for rule in PREFIX_RULES for prefix in rule.prefixes})),
)


class VendorTokenDetector:
    name = "vendor_tokens"
    candidate_parts = (_PREFIXED_PART,)

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
        yield from line_local_findings(scan, self._prefixed_tokens, _PREFIXED_PART)
        yield from _discord_bot_tokens(text, self.name)
        for context_rule in self._contextual:
            if not scan.lower_contains_any(context_rule.keywords):
                continue
            for match in context_rule.regex.finditer(text):
                yield Candidate(
                    context_rule.type, match.start(), match.end(), context_rule.confidence, self.name
                )

    def _prefixed_tokens(self, scan: ScanText) -> Iterator[Candidate]:
        """The prefixed formats. Line-local: no prefix, head or body matches a newline, and what is read
        around a hit (the character before it, a URL scheme) is on its line or is the newline itself."""
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


def _with_scheme(text: str, start: int) -> int:
    for scheme in _SCHEMES:
        if start >= len(scheme) and text.startswith(scheme, start - len(scheme)):
            return start - len(scheme)
    return start


def _discord_bot_tokens(text: str, detector: str) -> Iterator[Candidate]:
    if text.count(".") < 2:
        return
    for match in _DISCORD_SHAPE.finditer(text):
        start, end = match.span()
        if (start > 0 and text[start - 1] in _URLSAFE) or (end < len(text) and text[end] in _URLSAFE):
            continue
        if _is_snowflake_base64(match.group().partition(".")[0]):
            yield Candidate(FindingType.DISCORD_TOKEN, start, end, 0.95, detector)


def _is_snowflake_base64(part: str) -> bool:
    try:
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(decoded) <= 20 and decoded.isdigit()
