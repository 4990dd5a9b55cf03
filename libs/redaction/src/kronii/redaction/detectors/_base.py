"""What every detector shares: the text it scans, the candidates it reports, and boundary helpers."""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import Any, NamedTuple, Protocol, TypeVar, cast

__all__ = [
    "ANY_DIGIT",
    "Candidate",
    "CandidatePart",
    "Detector",
    "DistinctLines",
    "ScanText",
    "continues_token",
    "hyperscan_literal",
    "line_bounds",
    "line_local_findings",
    "literal_alternation",
    "may_occur",
    "reads_as_words",
    "shannon_entropy",
]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A span a detector thinks is sensitive. Detectors never copy the value out of the text."""

    type: str
    start: int
    end: int
    confidence: float
    detector: str


@dataclass(frozen=True, eq=False, slots=True)
class CandidatePart:
    """Where one line-local part of a detector could find anything: hyperscan patterns for the compiled scan.

    A detector lists its parts in a class attribute `candidate_parts` and passes each to the
    `line_local_findings` call it belongs to. Once the engine's compiled scan (`_scanner.py`) has run, that call
    reads only the lines on which a pattern of its part matched, instead of every line of the text; without the
    scan (hyperscan missing, a pattern it rejects, text it cannot encode) the call reads every line as before.

    The patterns are a filter, never the validation: wherever `find` reports anything on a line, one of them
    must match with its last character on that line (a superset: a pattern matching a few lines too many costs
    time, never a finding). A match stands for the line of its last character: it may begin on the newline
    before (`(?:^|[^a-z])word`, a word's start) but must not run past the line's end. The patterns are
    hyperscan syntax (no backreferences, no lookaround), matched in the text, or in its lower-case view for
    `lower_patterns` (exact for lower-case words, whatever the script), case-sensitive unless `caseless` (ASCII letters
    only), with ASCII classes unless `unicode` (Python's `\\d`, `\\w`, `\\s` in a
    str take every script's: a superset must too). Identity is by object: declare each part once, at module
    level.
    """

    name: str
    patterns: tuple[str, ...]  # matched in the text
    lower_patterns: tuple[str, ...] = ()  # matched in `scan.lower`: lower-case words, exact in every script
    caseless: bool = False  # ASCII letters only: a non-ASCII letter of either case needs its own class
    # Read as characters, with Unicode classes (`\d` any script's digit, as Python reads a str). Otherwise the
    # patterns read bytes: a non-ASCII letter matches as its UTF-8 bytes, but `.` or a class reads one byte.
    unicode: bool = False


class DistinctLines(NamedTuple):
    """The lines of a text with each distinct one kept once, and where each line of the text came from."""

    compact: str  # the distinct lines in their first order, joined by "\n"
    compact_starts: list[int]  # where distinct line i starts in `compact`
    order: list[int]  # for each line of the text, in order, the number of its distinct line
    starts: list[int]  # where each line of the text starts in it


# Below this size, or when the distinct lines are more than half the text, the whole text is scanned instead.
_DISTINCT_MIN_CHARS = 16_384


def _distinct_lines(text: str) -> DistinctLines | None:
    if len(text) < _DISTINCT_MIN_CHARS:
        return None
    lines = text.split("\n")
    numbers = {line: number for number, line in enumerate(dict.fromkeys(lines))}
    compact = "\n".join(numbers)
    if len(compact) * 2 > len(text):
        return None
    compact_starts = [0, *accumulate(len(line) + 1 for line in numbers)][:-1]
    starts = [0, *accumulate(len(line) + 1 for line in lines)][:-1]
    return DistinctLines(compact, compact_starts, [numbers[line] for line in lines], starts)


_A = TypeVar("_A", bound=Hashable)
_T = TypeVar("_T")


class ScanText:
    """The text under scan, with views that several detectors want, computed at most once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._memo: dict[tuple[Callable[[Any], object], Hashable], object] = {}
        # Set by the engine's compiled scan: for each candidate part, the (start, end) of the lines, in order,
        # on which its patterns matched. None: no compiled scan, every part reads every line.
        self.candidate_lines: Mapping[CandidatePart, Sequence[tuple[int, int]]] | None = None
        # Whether those lines are spans of `distinct_lines.compact` (a text of repeated lines is scanned once
        # per distinct line) rather than of the text.
        self.candidates_in_distinct = False

    def memo(self, function: Callable[[_A], _T], argument: _A) -> _T:
        """`function(argument)` for a pure `function`, computed once per distinct argument in this text.

        Logs and configs repeat the same keys and values line after line. The results live as long as this
        ScanText (one engine call), so no value from one text stays in memory after it.
        """
        key = (function, argument)
        if key in self._memo:
            return cast(_T, self._memo[key])
        result = self._memo[key] = function(argument)
        return result

    @cached_property
    def lower(self) -> str:
        """The text in lower case, index for index (detectors slice both with the same offsets)."""
        lowered = self.text.lower()
        # str.lower turns a few characters into two ("İ" -> "i̇"), which would shift every later offset;
        # equal lengths mean every character stayed one. Otherwise lower ASCII only (slower, but exact).
        return lowered if len(lowered) == len(self.text) else self.text.translate(_ASCII_LOWER)

    @cached_property
    def reversed(self) -> str:
        """The text backwards: a regex `match` at `len(text) - i` reads leftwards from text[i - 1], in C."""
        return self.text[::-1]

    @cached_property
    def distinct_lines(self) -> DistinctLines | None:
        """Each distinct line once, for `line_local_findings`; None when that would not halve the text."""
        return _distinct_lines(self.text)

    def contains_any(self, needles: tuple[str, ...]) -> bool:
        text = self.text
        return any(needle in text for needle in needles)

    def lower_contains_any(self, needles: tuple[str, ...]) -> bool:
        lower = self.lower
        return any(needle in lower for needle in needles)


_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


class Detector(Protocol):
    """A small unit that finds one family of sensitive values. `name` appears in findings and policy.

    Optionally a class attribute `anchors: tuple[str, ...]`: lower-case ASCII literals, at least one of which
    occurs in `scan.lower` wherever the detector could report anything. The engine's pre-filter then skips the
    detector on texts holding none of them. Declare only what `detect` itself requires; without `anchors`
    the detector always runs.
    """

    @property
    def name(self) -> str: ...

    def detect(self, scan: ScanText) -> Iterator[Candidate]: ...


# In a byte-wise candidate pattern, a superset of Python's `\d` in a str: an ASCII digit, or any non-ASCII
# character (its UTF-8 bytes are all above 0x7f). Exact whatever Unicode version either side knows.
ANY_DIGIT = r"(?:[0-9]|[\x80-\xff]+)"


def may_occur(scan: ScanText, part: CandidatePart) -> bool:
    """False only when the engine's compiled scan ran on this text and no pattern of `part` matched anywhere: a
    gate for a whole-text step that finds nothing without such a match (the part must be declared, as any)."""
    lines = scan.candidate_lines.get(part, True) if scan.candidate_lines is not None else True
    return bool(lines)


def hyperscan_literal(word: str) -> str:
    """`word` as a hyperscan pattern matching it literally: ASCII punctuation and spaces escaped."""
    return "".join("\\" + char if char.isascii() and not char.isalnum() else char for char in word)


def line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """The start and end of the line(s) holding text[start:end]."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    return line_start, len(text) if line_end < 0 else line_end


def line_local_findings(
    scan: ScanText,
    find: Callable[[ScanText], Iterable[Candidate]],
    part: CandidatePart | tuple[CandidatePart, ...] | None = None,
) -> Iterator[Candidate]:
    """What `find` finds in the text, found once per distinct line and repeated wherever that line repeats.

    Only for a `find` whose findings on a line depend on that line alone and never cross its newline: then a
    line gives the same findings, shifted, wherever it stands, and at the start or end of the text as between
    two others. Logs and dense configs repeat many lines; each regex then walks the distinct lines only.
    The findings come in the order `find` gives them on the whole text when it reports line after line.

    With a `part` the engine's compiled scan has read, only the lines its patterns matched on are read (none:
    `find` does not run at all); with several parts, the lines any of them matched on.
    """
    chosen = _candidate_lines(scan, part)
    if chosen is not None:
        yield from (_on_distinct_lines if scan.candidates_in_distinct else _on_lines)(scan, find, chosen)
        return
    lines = scan.distinct_lines
    if lines is None:
        yield from find(scan)
        return
    yield from _repeated(scan, find, lines)


def _candidate_lines(
    scan: ScanText, part: CandidatePart | tuple[CandidatePart, ...] | None
) -> Sequence[tuple[int, int]] | None:
    if part is None or scan.candidate_lines is None:
        return None
    if isinstance(part, CandidatePart):
        return scan.candidate_lines.get(part)
    found = [scan.candidate_lines.get(each) for each in part]
    if any(lines is None for lines in found):
        return None  # one of them was not scanned: every line
    return sorted({line for lines in found if lines is not None for line in lines})


def _on_lines(
    scan: ScanText, find: Callable[[ScanText], Iterable[Candidate]], chosen: Sequence[tuple[int, int]]
) -> Iterator[Candidate]:
    """`find` on the chosen lines only, each distinct one once, as one text of those lines joined by newlines."""
    if not chosen:
        return
    text = scan.text
    if len(chosen) == 1 and chosen[0] == (0, len(text)):
        yield from find(scan)  # the one line is the whole text
        return
    numbers: dict[str, int] = {}
    firsts: list[tuple[int, int]] = []
    order = []
    for start, end in chosen:
        line = text[start:end]
        number = numbers.get(line)
        if number is None:
            number = numbers[line] = len(firsts)
            firsts.append((start, end))
        order.append(number)
    compact_starts = [0, *accumulate(len(line) + 1 for line in numbers)][:-1]
    lines = DistinctLines("\n".join(numbers), compact_starts, order, [start for start, _end in chosen])
    # The lines' lower-case view is the text's: where one character of the text lowers to two, the text's view
    # is lowered in ASCII only, and so must these lines be, far as they may stand from that character.
    lower = scan.lower
    compact_scan = scan.memo(_lines_scan, (lines.compact, "\n".join(lower[s:e] for s, e in firsts)))
    yield from _repeated(scan, find, lines, compact_scan)


def _on_distinct_lines(
    scan: ScanText, find: Callable[[ScanText], Iterable[Candidate]], chosen: Sequence[tuple[int, int]]
) -> Iterator[Candidate]:
    """`find` on the chosen distinct lines (spans of `scan.distinct_lines.compact`), repeated wherever they
    stand in the text."""
    lines = scan.distinct_lines
    if not chosen or lines is None:
        return
    compact = lines.compact
    renumber = {
        bisect_right(lines.compact_starts, start) - 1: index for index, (start, _end) in enumerate(chosen)
    }
    pieces = [compact[start:end] for start, end in chosen]
    chosen_lines = DistinctLines(
        "\n".join(pieces),
        [0, *accumulate(len(piece) + 1 for piece in pieces)][:-1],
        [renumber.get(number, -1) for number in lines.order],  # -1: a line not chosen, never found on
        lines.starts,
    )
    # Lowered as the distinct lines are (the same characters as the text: the same choice of lowering).
    compact_lower = scan.memo(ScanText, compact).lower
    lower = "\n".join(compact_lower[start:end] for start, end in chosen)
    yield from _repeated(scan, find, chosen_lines, scan.memo(_lines_scan, (chosen_lines.compact, lower)))


def _lines_scan(texts: tuple[str, str]) -> ScanText:
    compact, lower = texts
    scan = ScanText(compact)
    scan.lower = lower  # cached_property: set once, before any detector reads it
    return scan


def _repeated(
    scan: ScanText,
    find: Callable[[ScanText], Iterable[Candidate]],
    lines: DistinctLines,
    compact_scan: ScanText | None = None,
) -> Iterator[Candidate]:
    compact_starts = lines.compact_starts
    per_line: dict[int, list[Candidate]] = {}
    # One ScanText of the distinct lines per text, shared by the detectors. Its lower-case view equals the
    # text's, line for line: it holds the same characters, and str.lower reads no context across a newline.
    if compact_scan is None:
        compact_scan = scan.memo(ScanText, lines.compact)
    for found in find(compact_scan):
        number = bisect_right(compact_starts, found.start) - 1
        base = compact_starts[number]
        shifted = Candidate(
            found.type, found.start - base, found.end - base, found.confidence, found.detector
        )
        per_line.setdefault(number, []).append(shifted)
    if not per_line:
        return
    for line_start, number in zip(lines.starts, lines.order, strict=True):
        on_line = per_line.get(number)
        if on_line is not None:
            for found in on_line:
                yield Candidate(
                    found.type,
                    line_start + found.start,
                    line_start + found.end,
                    found.confidence,
                    found.detector,
                )


def shannon_entropy(value: str) -> float:
    length = len(value)
    if length == 0:
        return 0.0
    return -sum(count / length * math.log2(count / length) for count in Counter(value).values())


def literal_alternation(words: Iterable[str]) -> str:
    """A regex matching any of `words`, factored as a trie: `gh(?:o_|p_|s_)` rather than `ghp_|gho_|ghs_`.

    CPython's regex engine tries the branches of a flat alternation one by one at every position; a factored
    one rejects most positions at the first character, which made the vendor prefix scan several times faster.
    Longer words are tried before their own prefixes, so the longest literal wins.
    """
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _trie_pattern(trie)


def _trie_pattern(node: dict[str, Any]) -> str:
    branches = [re.escape(char) + _trie_pattern(child) for char, child in sorted(node.items()) if char]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if "" in node:  # a word ends here: the continuation is optional, tried first
        return "(?:" + body + ")?" if len(branches) == 1 else body + "?"
    return body


_LETTER_RUN = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}")
_VOWELS = frozenset("aeiouyAEIOUY")


def reads_as_words(token: str) -> bool:
    """Whether more than half of `token` is letter runs that read like words (`GetSlowCompTau`, `NEIPv6Settings`).

    A short run reads as a word when it has a vowel, a longer one when a fifth of it is vowels. Random Base62
    of 20 to 40 characters passes this in 1 to 3 cases in a hundred; identifiers made of words nearly always.
    """
    covered = 0
    for run in _LETTER_RUN.findall(token):
        vowels = sum(char in _VOWELS for char in run)
        if (vowels >= 1) if len(run) <= 5 else (vowels * 5 >= len(run)):
            covered += len(run)
    return covered * 2 > len(token)


def continues_token(
    text: str, index: int, step: int, joiners: str, follower: Callable[[str], bool] = str.isalnum
) -> bool:
    """Whether the character at `index`, beside a match (`step` -1 before it, 1 after it), continues the
    token, making the match part of a longer id or version: a letter, a digit or "_", or one of `joiners`
    with a `follower` beyond it ("123-45-6789." ends a sentence, "123-45-6789-01" is something else)."""
    if not 0 <= index < len(text):
        return False
    char = text[index]
    if char.isalnum() or char == "_":
        return True
    beyond = index + step
    return char in joiners and 0 <= beyond < len(text) and follower(text[beyond])
