"""Words that announce a value of a family (data/context_words.toml), and whether one stands before a position.

Latin-script words match as whole words ("vin" not in "vinyl"); words of other scripts anywhere (Chinese and
Japanese write no spaces). One trie per family, read once; the matches of a line are found once per text.

A detector that starts from the words splits in two: one for the ASCII words, which declares them as its
anchors (the engine's one shared pre-filter scan then skips it on texts without any), and one for the words of
other scripts, which returns at once on an ASCII text (`str.isascii` is a C-speed test).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from functools import cache
from importlib.resources import files

from ._base import ScanText, literal_alternation

__all__ = ["announced_before", "ascii_words", "family_words", "whole_word", "word_matches"]


@cache
def family_words(family: str) -> tuple[str, ...]:
    raw = tomllib.loads(
        files("kronii.redaction").joinpath("data", "context_words.toml").read_text(encoding="utf-8")
    )
    return tuple(word.lower() for word in raw[family]["words"])


def ascii_words(family: str) -> tuple[str, ...]:
    return tuple(word for word in family_words(family) if word.isascii())


@cache
def _pattern(family: str, script: str = "all") -> re.Pattern[str]:
    words = family_words(family)
    if script != "all":
        words = tuple(word for word in words if word.isascii() == (script == "ascii"))
    return re.compile(literal_alternation(words))


def whole_word(line: str, start: int, end: int, word: str) -> bool:
    """Whether `word`, found at line[start:end], stands whole: a Latin word not inside a longer ASCII word; a
    word of another script always (those scripts write words without spaces)."""
    if not word.isascii():
        return True
    before = line[start - 1] if start > 0 else " "
    after = line[end] if end < len(line) else " "
    return not (before.isascii() and before.isalnum()) and not (after.isascii() and after.isalnum())


@cache
def _other_firsts(family: str) -> re.Pattern[str]:
    firsts = {re.escape(word[0]) for word in family_words(family) if not word.isascii()}
    return re.compile(f"[{''.join(sorted(firsts))}]")


def word_matches(family: str, lower: str, script: str = "all") -> Iterator[tuple[int, int, str]]:
    """Where the family's words stand in a lower-cased text: (start, end, word), Latin ones as whole words.
    `script` "ascii" or "other" takes that half of the words only; the other scripts' trie runs only on a
    text holding one of its words' first letters (a title's em dash is not one)."""
    if script == "other" and _other_firsts(family).search(lower) is None:
        return
    for match in _pattern(family, script).finditer(lower):
        if whole_word(lower, match.start(), match.end(), match.group()):
            yield match.start(), match.end(), match.group()


def _word_ends(family: str, line: str) -> tuple[int, ...]:
    return tuple(
        m.end() for m in _pattern(family).finditer(line) if whole_word(line, m.start(), m.end(), m.group())
    )


def announced_before(scan: ScanText, family: str, start: int, window: int = 48) -> bool:
    """Whether a word of `family` ends within `window` characters before `start`, on its line."""
    text = scan.text
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    line = scan.lower[line_start : len(text) if line_end < 0 else line_end]
    offset = start - line_start
    ends = scan.memo(_line_word_ends(family), line)
    return any(offset - window <= end <= offset for end in ends)


@cache
def _line_word_ends(family: str) -> _WordEnds:
    return _WordEnds(family)


class _WordEnds:
    """A callable per family, so that ScanText.memo keys the line's matches by family and line."""

    def __init__(self, family: str) -> None:
        self._family = family

    def __call__(self, line: str) -> tuple[int, ...]:
        return _word_ends(self._family, line)
