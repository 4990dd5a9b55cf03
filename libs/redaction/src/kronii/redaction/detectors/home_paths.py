"""User names revealed by home-directory paths and shell prompts. Only the name is masked: the rest of the
path (`/home/[USERNAME_1]/src/kronii`) is what an LLM needs to reason about the work.

Covers /home/NAME (and /var/home for Fedora Atomic), macOS /Users/NAME, Windows C:\\Users\\NAME (also with
doubled backslashes in JSON and with forward slashes), `~NAME/`, and prompts `NAME@host:~$`.
Generic account names that identify nobody (`user`, `Public`, `runner` on CI) stay.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["HomePathDetector"]

_NAME = r"(?P<name>[^\s/\\:\"'*?<>|`$%{}()\[\],;]{1,64})"
_POSIX_HOME = re.compile(r"/(?:home|Users)/" + _NAME)
_WINDOWS_HOME = re.compile(r"(?i)(?<![A-Za-z])[A-Z]:(?:\\{1,2}|/)Users(?:\\{1,2}|/)" + _NAME)
# What follows the drive letter: a literal ":" opens it, so CPython skips to each colon, where the full pattern
# (whose opening look-behind made it be tried at every position, 25 times slower) then runs once.
_WINDOWS_AFTER_DRIVE = re.compile(r"(?i):(?:\\{1,2}|/)Users(?:\\{1,2}|/)")
_TILDE_HOME = re.compile(r"~(?P<name>[a-z_][a-z0-9_\-]{1,31})(?=/)")
# A prompt at the start of a line, optionally after a virtualenv marker: `(venv) alice@laptop:~/src$`.
_PROMPT = re.compile(r"[ \t]*(?:\([\w.\-]+\)[ \t]*)?(?P<name>[a-z_][a-z0-9_\-]{0,31})@[\w.\-]+:[ \t]*[~/]")
_GENERIC_NAMES = frozenset(
    {
        "user",
        "username",
        "users",
        "shared",
        "public",
        "default",
        "default user",
        "all users",
        "runner",
        "linuxbrew",
        "me",
        "you",
        "name",
        "your_user",
        "yourname",
        "your-name",
        "your_username",
        "home",
        "...",
        ".",
        "..",
    }
)


class HomePathDetector:
    name = "home_paths"
    anchors = ("/home/", "/users/", ":\\users\\", ":\\\\users\\\\", ":/users/", "~", "@")

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        if "/home/" in text or "/Users/" in text:
            yield from self._names(_POSIX_HOME, text)
        if scan.lower_contains_any((":\\users\\", ":\\\\users\\\\", ":/users/")):
            yield from self._names(_WINDOWS_HOME, text, _windows_homes(text))
        if "~" in text:
            yield from self._names(_TILDE_HOME, text)
        yield from self._prompts(text)

    def _prompts(self, text: str) -> Iterator[Candidate]:
        """Looked for from each "@" back to its line's start, rather than by a regex tried at every line."""
        at = text.find("@")
        while at >= 0:
            line_start = text.rfind("\n", 0, at) + 1
            match = _PROMPT.match(text, line_start) if at - line_start <= 64 else None
            if match is not None and match.end("name") == at and match.group("name") not in _GENERIC_NAMES:
                yield Candidate(FindingType.USERNAME, match.start("name"), at, 0.8, self.name)
            at = text.find("@", at + 1)

    def _names(
        self, pattern: re.Pattern[str], text: str, matches: Iterable[re.Match[str]] | None = None
    ) -> Iterator[Candidate]:
        for match in pattern.finditer(text) if matches is None else matches:
            name = match.group("name")
            if name.lower() in _GENERIC_NAMES or name.startswith("."):
                continue
            if pattern is _TILDE_HOME and match.start() > 0 and _continues_word(text[match.start() - 1]):
                continue  # `a~b/` is not `~user/`, which starts a word
            yield Candidate(FindingType.USERNAME, match.start("name"), match.end("name"), 0.8, self.name)


def _windows_homes(text: str) -> Iterator[re.Match[str]]:
    """What `_WINDOWS_HOME.finditer(text)` yields: every match has its drive letter right before a colon."""
    position = 0
    while (colon := _WINDOWS_AFTER_DRIVE.search(text, position)) is not None:
        match = _WINDOWS_HOME.match(text, colon.start() - 1) if colon.start() > 0 else None
        if match is None:
            position = colon.start() + 1
            continue
        yield match
        position = match.end()


def _continues_word(char: str) -> bool:
    return char.isalnum() or char in "_~"
