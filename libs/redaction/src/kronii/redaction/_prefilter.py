"""One pass over the text before the detectors: which of them could find anything in it at all.

A detector may declare `anchors`: ASCII literals, in lower case, at least one of which occurs (in the text
lowered) wherever it could report anything (`"://"` for credentials in URLs, `"eyj"` for JWTs). One compiled
regex, a trie of every detector's anchors, finds the anchors present in one C-level `findall`; a detector none
of whose anchors occurs is skipped. A detector without anchors always runs, so a new detector is never
silenced by the filter, only not sped up.

The filter decides per text, not per line: several detectors read beyond the anchor's line (the answer on the
line after "password:", a private key's body), so one text is scanned whole or not at all. On a window title,
an OCR line or a log line the text is the line. Long texts are read in windows, and reading stops once every
anchored detector is known to be needed: on text dense with secrets, within the first window.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._hyperscan import LiteralScan
from .detectors import Detector, ScanText
from .detectors._base import literal_alternation

__all__ = ["Prefilter", "anchors_of"]


def anchors_of(detector: Detector) -> tuple[str, ...] | None:
    """The detector's anchors, or None when it must always run (none declared, or not plain lower ASCII)."""
    anchors = getattr(detector, "anchors", None)
    if not anchors or not isinstance(anchors, tuple):
        return None
    if not all(isinstance(a, str) and a and a.isascii() and a == a.lower() for a in anchors):
        return None  # a malformed declaration must cost speed, never a finding
    return anchors


_WINDOW = 16_384  # characters per `findall` on long texts, so that reading can stop early


class Prefilter:
    """Chooses, for one text, the detectors that need to run. Built once per engine; keeps no per-call state."""

    def __init__(self, detectors: Sequence[Detector], *, compiled: bool = True) -> None:
        self._detectors = tuple(detectors)
        owners: dict[str, set[int]] = {}
        always: set[int] = set()
        for index, detector in enumerate(self._detectors):
            anchors = anchors_of(detector)
            if anchors is None:
                always.add(index)
                continue
            for anchor in anchors:
                owners.setdefault(anchor, set()).add(index)
        self._always = frozenset(always)
        self._owners = owners
        # Every prefix of every anchor -> the anchors that start with it: what a found word's suffix may begin.
        self._by_prefix: dict[str, set[str]] = {}
        for anchor in owners:
            for cut in range(1, len(anchor) + 1):
                self._by_prefix.setdefault(anchor[:cut], set()).add(anchor)
        # Filled as words are found: a few thousand anchors make the full table a second of start-up.
        self._needs: dict[str, frozenset[int]] = {}
        self._overlap = max((len(word) for word in owners), default=1) - 1
        self._pattern = re.compile(literal_alternation(owners)) if owners else None
        # The same question in one hyperscan pass over the lower-case view, each anchor reported once: exact
        # (every occurrence, overlapping or not), so no anchor hides another.
        self._literals = LiteralScan(sorted(owners), enabled=compiled)

    def select(self, scan: ScanText, *, compiled: bool = False) -> tuple[Detector, ...]:
        """The detectors to run on `scan`, in their original order (with one hyperscan pass if `compiled`)."""
        if self._pattern is None:
            return self._detectors
        lower = scan.lower
        needed = set(self._always)
        present = self._found(lower) if compiled else None
        if present is not None:
            for anchor in present:
                needed |= self._owners[anchor]
            return tuple(d for i, d in enumerate(self._detectors) if i in needed)
        for start in range(0, len(lower), _WINDOW):
            # Windows overlap by the longest anchor less one: every occurrence lies whole in one of them.
            for word in set(self._pattern.findall(lower, start, start + _WINDOW + self._overlap)):
                needs = self._needs.get(word)
                if needs is None:
                    needs = self._needs[word] = self._needs_of(word)
                needed |= needs
            if len(needed) == len(self._detectors):
                return self._detectors
        return tuple(d for i, d in enumerate(self._detectors) if i in needed)

    def _found(self, lower: str) -> set[str] | None:
        try:
            return self._literals.found(lower)
        except Exception:  # hyperscan failed on this text: the regex below decides as well
            return None

    def _needs_of(self, found: str) -> frozenset[int]:
        """The detectors a found anchor stands for: its own, and those of every anchor it may hide from a scan
        that does not overlap matches.

        The trie takes the longest anchor at each position and resumes after it. An anchor inside the match is a
        substring of it; one that starts inside the match and runs past its end begins with a suffix of it
        ("secretoken": "token" starts in "secret"). Either way the found anchor stands for it too.
        """
        covered = {
            found[a:b] for a in range(len(found)) for b in range(a + 1, len(found) + 1)
        } & self._owners.keys()
        for cut in range(1, len(found)):
            covered |= self._by_prefix.get(found[cut:], set())
        return frozenset(index for anchor in covered for index in self._owners[anchor])
