"""The compiled scan: one hyperscan pass over a text tells each line-local detector part where to read.

Every detector lists its line-local parts (`CandidatePart`: hyperscan patterns that match wherever the part
could find anything). The engine compiles each part's patterns into a hyperscan database (block mode) of its
own, and scans each text with them, in C, before the detectors run. Each part then reads only the lines on
which one of its patterns matched (`line_local_findings`), not the whole text with Python's `re`. One database
of every part scanned twice as fast, but took ten times as long to compile (half a second, more than it saves
on a few megabytes); the databases are compiled on the first long text (`compile_at`), and texts too short to
gain from the scan (`shortest`) are read whole.

Hyperscan reports byte offsets in the text's UTF-8 encoding. A pattern never matches a newline, so a match
stands for the line of its last byte; lines are found in the bytes (a newline byte never occurs inside a
multi-byte character) and turned into string offsets line by line, so non-ASCII text costs one decode per
chosen line, and ASCII text none.

Findings never depend on hyperscan: without it (not installed, a text holding a lone surrogate it cannot be
given) every part reads every line, as before; a part whose pattern it rejects reads every line. The failure is
logged once.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial
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
def _part_database(part: CandidatePart, lower: bool) -> tuple[Any, Any] | None:
    """The compiled database of the part's patterns (or its `lower_patterns`), and the module."""
    hyperscan = hyperscan_module()
    if hyperscan is None:
        warn_once("hyperscan is not installed")
        return None
    expressions = [pattern.encode("utf-8") for pattern in (part.lower_patterns if lower else part.patterns)]
    flag = hyperscan.HS_FLAG_CASELESS if part.caseless else 0
    if part.unicode:
        flag |= hyperscan.HS_FLAG_UTF8 | hyperscan.HS_FLAG_UCP
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(
            expressions=expressions, ids=[0] * len(expressions), elements=len(expressions), flags=flag
        )
    except Exception as error:  # hyperscan.CompilerError names the pattern's index, never text
        warn_once(f"a candidate pattern of {part.name} does not compile ({type(error).__name__}: {error})")
        return None
    return database, hyperscan


class CompiledScan:
    """The compiled scan of a set of parts, in the text and in its lower-case view. Built once per engine;
    thread-safe (one scratch per thread and database)."""

    def __init__(
        self,
        parts: Sequence[CandidatePart],
        *,
        enabled: bool = True,
        shortest: int = 0,
        compile_at: int = 0,
    ) -> None:
        self._in_text = [_PartDatabase(part, lower=False) for part in parts if part.patterns and enabled]
        self._in_lower = [
            _PartDatabase(part, lower=True) for part in parts if part.lower_patterns and enabled
        ]
        self._shortest = shortest
        self._compile_at = max(compile_at, shortest)
        self._compiled = False

    @property
    def active(self) -> bool:
        """Whether there are parts and every one compiled (compiling them now if they have not been)."""
        self._compiled = True
        databases = [*self._in_text, *self._in_lower]
        return bool(databases) and all(database.active for database in databases)

    def lines(self, scan: ScanText) -> dict[CandidatePart, list[tuple[int, int]]] | None:
        """For each part, the (start, end) of the lines of the text its patterns match on, in order; None when
        the scan cannot run here (every part then reads every line): a text shorter than `shortest` (reading it
        whole costs less than the scans), or shorter than `compile_at` while nothing has had the databases
        compiled. A part that did not compile is left out. A text that repeats its lines is scanned once per
        distinct line: the spans are then lines of `scan.distinct_lines.compact`, and `scan.candidates_in_distinct`
        says so."""
        length = len(scan.text)
        if length < self._shortest or (not self._compiled and length < self._compile_at):
            return None
        if not self.active and not any(database.active for database in (*self._in_text, *self._in_lower)):
            return None
        view = scan
        distinct = scan.distinct_lines
        if distinct is not None:  # a text of repeated lines: each distinct line scanned once
            view = scan.memo(ScanText, distinct.compact)
            scan.candidates_in_distinct = True
        found = _view_lines(view.text, self._in_text)
        in_lower = _view_lines(view.lower, self._in_lower)
        if found is None or in_lower is None:
            return None
        # The same lines in both: the lower-case view is the text, index for index.
        for part, lines in in_lower.items():
            found[part] = sorted({*found[part], *lines}) if part in found else lines
        for database in (*self._in_text, *self._in_lower):
            if not database.active:  # its other view's lines alone would be too few
                found.pop(database.part, None)
        return found


class _PartDatabase(Compiled):
    def __init__(self, part: CandidatePart, *, lower: bool) -> None:
        self.part = part
        super().__init__(partial(_part_database, part, lower))

    def ends(self, data: bytes) -> list[int]:
        """Where each match ends (byte offsets), in the order reported."""
        found: list[int] = []
        self._database.scan(
            data,
            match_event_handler=lambda _id, _start, end, _flags, _context: found.append(end),
            scratch=self._scratch(),
        )
        return found


def _view_lines(
    text: str, databases: list[_PartDatabase]
) -> dict[CandidatePart, list[tuple[int, int]]] | None:
    """The lines each compiled part's patterns match on in `text` (the text or its lower-case view)."""
    active = [database for database in databases if database.active]
    if not active:
        return {}
    ascii_only = text.isascii()
    try:
        data = text.encode("ascii" if ascii_only else "utf-8")
    except UnicodeEncodeError:  # a lone surrogate: not UTF-8, so not for hyperscan
        return None
    byte_lines = {database.part: _lines_of(data, sorted(set(database.ends(data)))) for database in active}
    if ascii_only:
        return byte_lines
    to_str = string_offsets(data, {start for found in byte_lines.values() for start, _end in found})
    return {
        part: [(to_str[start], to_str[start] + len(data[start:end].decode("utf-8"))) for start, end in found]
        for part, found in byte_lines.items()
    }


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
