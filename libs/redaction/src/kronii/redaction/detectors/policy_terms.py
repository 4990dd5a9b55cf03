"""The user's own rules: deny-listed terms (always masked) and custom patterns (regex with a type name)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .._policy import CustomPattern
from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["CustomPatternDetector", "DenyTermDetector"]


class DenyTermDetector:
    """Literal terms, matched case-insensitively anywhere (also inside words: the user asked for it)."""

    name = "deny_terms"

    def __init__(self, terms: Sequence[str]) -> None:
        unique = sorted({term for term in terms if term.strip()}, key=len, reverse=True)
        # One alternation, longest first, so that "Project X Prime" wins over "Project X".
        self._regex = (
            re.compile("|".join(re.escape(term) for term in unique), re.IGNORECASE) if unique else None
        )

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        if self._regex is None:
            return
        for match in self._regex.finditer(scan.text):
            yield Candidate(FindingType.DENIED, match.start(), match.end(), 1.0, self.name)


class CustomPatternDetector:
    name = "custom_patterns"

    def __init__(self, patterns: Sequence[CustomPattern]) -> None:
        self._patterns = tuple(patterns)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        for pattern in self._patterns:
            regex = pattern.regex
            # A pattern with a group named `value` masks only that group (e.g. what follows `password=`).
            group = "value" if "value" in regex.groupindex else 0
            for match in regex.finditer(scan.text):
                start, end = match.span(group)
                if end > start >= 0:
                    yield Candidate(pattern.type, start, end, pattern.confidence, self.name)
