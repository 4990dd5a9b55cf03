"""The compiled scan: one hyperscan pass over a text tells each line-local detector part where to read.

Every detector lists its line-local parts (`CandidatePart`: hyperscan patterns that match wherever the part
could find anything). The engine compiles every part's patterns into one hyperscan database (block mode), once
per set of parts, and scans each text once, in C, before the detectors run. Each part then reads only the lines
on which one of its patterns matched (`line_local_findings`), not the whole text with Python's `re`.

Hyperscan reports byte offsets in the text's UTF-8 encoding. A pattern never matches a newline, so a match
stands for the line of its last byte; lines are found in the bytes (a newline byte never occurs inside a
multi-byte character) and turned into string offsets line by line, so non-ASCII text costs one decode per
chosen line, and ASCII text none.

Findings never depend on hyperscan: without it (not installed, a pattern it rejects, a text holding a lone
surrogate it cannot be given) every part reads every line, as before. The failure is logged once.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from ._hyperscan import Compiled, LiteralScan, hyperscan_module, string_offsets, warn_once
from .detectors import CandidatePart, Detector, ScanText

__all__ = ["CompiledScan", "LiteralScan", "candidate_parts_of"]


def candidate_parts_of(detectors: Sequence[Detector]) -> tuple[CandidatePart, ...]:
    """The parts the detectors declare (`candidate_parts`), each once; a malformed declaration is ignored."""
    parts: dict[CandidatePart, None] = {}
    for detector in detectors:
        declared = getattr(detector, "candidate_parts", ())
        if not isinstance(declared, tuple):
            continue
        for part in declared:
            if isinstance(part, CandidatePart) and (part.patterns or part.lower_patterns):
                parts.setdefault(part, None)
    return tuple(parts)


@cache
def _database(parts: tuple[CandidatePart, ...], lower: bool) -> tuple[Any, Any] | None:
    """The compiled database of every part's patterns, or `lower_patterns` (a pattern's id is its part's index),
    and the module."""
    hyperscan = hyperscan_module()
    if hyperscan is None:
        warn_once("hyperscan is not installed")
        return None
    expressions: list[bytes] = []
    ids: list[int] = []
    flags: list[int] = []
    for index, part in enumerate(parts):
        for pattern in part.lower_patterns if lower else part.patterns:
            expressions.append(pattern.encode("utf-8"))
            ids.append(index)
            flag = hyperscan.HS_FLAG_CASELESS if part.caseless else 0
            if part.unicode:
                flag |= hyperscan.HS_FLAG_UTF8 | hyperscan.HS_FLAG_UCP
            elif not pattern.isascii():
                flag |= hyperscan.HS_FLAG_UTF8
            flags.append(flag)
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(expressions=expressions, ids=ids, elements=len(expressions), flags=flags)
    except Exception as error:  # hyperscan.CompilerError names the pattern's index, never text
        warn_once(f"a candidate pattern does not compile ({type(error).__name__}: {error})")
        return None
    return database, hyperscan


class CompiledScan:
    """The compiled scan of a set of parts: those matched in the text and those matched in its lower-case view,
    a database each. Built once per engine; thread-safe (one scratch per thread)."""

    def __init__(self, parts: Sequence[CandidatePart], *, enabled: bool = True) -> None:
        self._in_text = _PartScan(tuple(p for p in parts if p.patterns), lower=False, enabled=enabled)
        self._in_lower = _PartScan(tuple(p for p in parts if p.lower_patterns), lower=True, enabled=enabled)

    @property
    def active(self) -> bool:
        """Whether every part is compiled (a part whose database failed reads every line)."""
        return all(scan.active or not scan.parts for scan in (self._in_text, self._in_lower)) and bool(
            self._in_text.parts or self._in_lower.parts
        )

    def lines(self, scan: ScanText) -> dict[CandidatePart, list[tuple[int, int]]] | None:
        """For each part, the (start, end) of the lines of the text its patterns match on, in order; None when
        the scan cannot run here (every part then reads every line)."""
        if not self.active:
            return None  # a part whose patterns do not all compile must read every line
        found = self._in_text.lines(scan.text) if self._in_text.parts else {}
        in_lower = self._in_lower.lines(scan.lower) if self._in_lower.parts else {}
        if found is None or in_lower is None:
            return None
        # The same lines in both: the lower-case view is the text, index for index.
        for part, lines in in_lower.items():
            found[part] = sorted({*found[part], *lines}) if part in found else lines
        return found


class _PartScan(Compiled):
    def __init__(self, parts: tuple[CandidatePart, ...], *, lower: bool, enabled: bool) -> None:
        self.parts = parts
        super().__init__(_database(parts, lower) if enabled and parts else None)

    def lines(self, text: str) -> dict[CandidatePart, list[tuple[int, int]]] | None:
        if self._database is None:
            return None
        return self._lines(text)

    def _lines(self, text: str) -> dict[CandidatePart, list[tuple[int, int]]] | None:
        ascii_only = text.isascii()
        try:
            data = text.encode("ascii" if ascii_only else "utf-8")
        except UnicodeEncodeError:  # a lone surrogate: not UTF-8, so not for hyperscan
            return None
        ends = self._match_ends(data)
        byte_lines = [_lines_of(data, sorted(set(found))) for found in ends]
        if ascii_only:
            return dict(zip(self.parts, byte_lines, strict=True))
        to_str = string_offsets(data, {start for found in byte_lines for start, _end in found})
        return {
            part: [
                (to_str[start], to_str[start] + len(data[start:end].decode("utf-8"))) for start, end in found
            ]
            for part, found in zip(self.parts, byte_lines, strict=True)
        }

    def _match_ends(self, data: bytes) -> list[list[int]]:
        ends: list[list[int]] = [[] for _ in self.parts]

        def on_match(index: int, _start: int, end: int, _flags: int, _context: object) -> None:
            ends[index].append(end)

        self._database.scan(data, match_event_handler=on_match, scratch=self._scratch())
        return ends


def _lines_of(data: bytes, ends: list[int]) -> list[tuple[int, int]]:
    """The lines (byte start, byte end without the newline) holding the byte before each match end, once each."""
    lines: list[tuple[int, int]] = []
    line_end = -1
    for end in ends:
        last = end - 1  # the match's last byte, never a newline
        if last < line_end:
            continue  # on the line already taken
        line_start = data.rfind(b"\n", 0, last) + 1
        line_end = data.find(b"\n", last)
        if line_end < 0:
            line_end = len(data)
        lines.append((line_start, line_end))
    return lines
