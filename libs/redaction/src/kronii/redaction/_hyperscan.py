"""Hyperscan, where it helps and nowhere else: compiled databases, one scratch space per thread, literal search.

Everything here is an optional speed-up. Without hyperscan (not installed, a pattern it refuses, a text it cannot
be given) each caller takes its plain Python path, which finds the same; the reason is logged once. This module
imports no detector, so that detectors and the engine's scanner can both use it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import Any

__all__ = ["Compiled", "LiteralScan", "Occurrences", "hyperscan_module", "warn_once"]

_LOG = logging.getLogger("kronii.redaction._scanner")
_warned: set[str] = set()


def warn_once(reason: str) -> None:
    if reason not in _warned:
        _warned.add(reason)
        _LOG.warning("compiled redaction scan off, every detector reads the whole text: %s", reason)


def hyperscan_module() -> Any:
    try:
        import hyperscan
    except ImportError:  # an optional speed-up: the engine finds the same without it
        return None
    return hyperscan


class Compiled:
    """A database compiled on first use (or none), and one scratch space per thread: hyperscan's scratch is not
    shared. Compiling takes up to a few tenths of a second, which a process that redacts only short texts (a
    one-line `kronii redact`, a service's log filter) never pays."""

    def __init__(self, build: Callable[[], tuple[Any, Any] | None] | None) -> None:
        self._build = build
        self._built = False
        self._database: Any = None
        self._hyperscan: Any = None
        self._local = threading.local()
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """Whether the database compiled (compiling it now if it has not been)."""
        if not self._built:
            with self._lock:
                if not self._built:
                    compiled = self._build() if self._build is not None else None
                    if compiled is not None:
                        self._database, self._hyperscan = compiled
                    self._built = True
        return self._database is not None

    def _scratch(self) -> Any:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._hyperscan.Scratch(self._database)
        return scratch


@cache
def _literal_database(literals: tuple[str, ...], single_match: bool) -> tuple[Any, Any] | None:
    hyperscan = hyperscan_module()
    if hyperscan is None:
        warn_once("hyperscan is not installed")
        return None
    database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        database.compile(
            expressions=[literal.encode("utf-8") for literal in literals],
            ids=list(range(len(literals))),
            elements=len(literals),
            flags=[hyperscan.HS_FLAG_SINGLEMATCH if single_match else 0] * len(literals),
            literal=True,
        )
    except Exception as error:
        warn_once(f"a literal does not compile ({type(error).__name__}: {error})")
        return None
    return database, hyperscan


class LiteralScan(Compiled):
    """Which of a set of literals occur in a text (case as given), in one hyperscan pass; for the pre-filter."""

    def __init__(self, literals: Sequence[str], *, enabled: bool = True) -> None:
        self._literals = tuple(literals)
        super().__init__(
            partial(_literal_database, self._literals, True) if enabled and self._literals else None
        )

    def found(self, text: str) -> set[str] | None:
        """The literals that occur in `text`, or None when the scan cannot run here."""
        if not self.active:
            return None
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        literals = self._literals
        found: set[str] = set()

        def on_match(index: int, _start: int, _end: int, _flags: int, _context: object) -> None:
            found.add(literals[index])

        self._database.scan(data, match_event_handler=on_match, scratch=self._scratch())
        return found


class Occurrences(Compiled):
    """Every occurrence of every literal of a set in a text, overlapping ones too, in one hyperscan pass."""

    def __init__(self, literals: Sequence[str]) -> None:
        self.literals = tuple(literals)
        self._lengths = tuple(len(literal.encode("utf-8")) for literal in self.literals)
        super().__init__(partial(_literal_database, self.literals, False) if self.literals else None)

    def of(self, text: str) -> list[tuple[int, int, int]] | None:
        """(start, end, literal's index) of each occurrence, string offsets, in no set order; None when the scan
        cannot run here. A literal matches whole characters only: UTF-8 lets no character start inside another."""
        if not self.active:
            return None
        ascii_only = text.isascii()
        try:
            data = text.encode("ascii" if ascii_only else "utf-8")
        except UnicodeEncodeError:
            return None
        lengths = self._lengths
        found: list[tuple[int, int, int]] = []

        def on_match(index: int, _start: int, end: int, _flags: int, _context: object) -> None:
            found.append((end - lengths[index], end, index))

        self._database.scan(data, match_event_handler=on_match, scratch=self._scratch())
        if ascii_only or not found:
            return found
        to_str = string_offsets(data, {offset for start, end, _index in found for offset in (start, end)})
        return [(to_str[start], to_str[end], index) for start, end, index in found]


def string_offsets(data: bytes, offsets: set[int]) -> dict[int, int]:
    """Each byte offset of `offsets` (all at character boundaries) as a string offset, decoding each gap once."""
    converted: dict[int, int] = {}
    byte_at = char_at = 0
    for offset in sorted(offsets):
        char_at += len(data[byte_at:offset].decode("utf-8"))
        byte_at = offset
        converted[offset] = char_at
    return converted
