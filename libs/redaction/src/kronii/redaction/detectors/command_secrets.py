"""Passwords passed on command lines through short flags whose meaning depends on the command
(`mysql -pSECRET`, `sshpass -p SECRET`, `curl -u user:SECRET`, `redis-cli -a SECRET`), as they show up in
shell history and terminals. Long flags (`--password x`) are the keyword detector's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .._types import FindingType
from ._base import Candidate, ScanText, line_bounds
from ._values import is_placeholder_value

__all__ = ["CommandSecretDetector"]

_ARG = r"""(?:'([^'\n]*)'|"([^"\n]*)"|([^\s'"|;&]+))"""


@dataclass(frozen=True, slots=True)
class _CommandRule:
    keyword: str  # lower-case command name that must occur in the text
    regex: re.Pattern[str]


# Each regex stays on one line ([^\n]) and names the command, so a `-p` elsewhere is not taken for one.
_RULES = (
    _CommandRule("mysql", re.compile(r"\b(?:mysql|mysqldump|mysqladmin)\b[^\n]*?\s-p" + _ARG)),
    _CommandRule("mariadb", re.compile(r"\bmariadb(?:-dump)?\b[^\n]*?\s-p" + _ARG)),
    _CommandRule("sshpass", re.compile(r"\bsshpass\b[^\n]*?\s-p\s*" + _ARG)),
    _CommandRule("redis-cli", re.compile(r"\bredis-cli\b[^\n]*?\s-a\s+" + _ARG)),
    _CommandRule(
        "login", re.compile(r"\b(?:docker|podman|helm|buildah|skopeo)\s+login\b[^\n]*?\s-p\s+" + _ARG)
    ),
    _CommandRule("mongo", re.compile(r"\bmongo(?:sh|dump|restore)?\b[^\n]*?\s-p\s+" + _ARG)),
    _CommandRule("curl", re.compile(r"\bcurl\b[^\n]*?\s(?:-u|--user)\s*['\"]?[^\s:'\"]+:" + _ARG)),
    _CommandRule("smbclient", re.compile(r"\bsmbclient\b[^\n]*?\s-U\s*['\"]?[^\s%'\"]+%" + _ARG)),
    _CommandRule("htpasswd", re.compile(r"\bhtpasswd\s+-[a-zA-Z]*b[a-zA-Z]*\s+\S+\s+\S+\s+" + _ARG)),
    _CommandRule("net use", re.compile(r"(?i)\bnet\s+use\b[^\n]*?/user:\S+\s+" + _ARG)),
)


class CommandSecretDetector:
    name = "command_secrets"
    anchors = tuple(rule.keyword for rule in _RULES)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text, lower = scan.text, scan.lower
        for rule in _RULES:
            for line_start, line_end in _lines_with(lower, rule.keyword):
                yield from self._matches(rule, text, line_start, line_end)

    def _matches(self, rule: _CommandRule, text: str, line_start: int, line_end: int) -> Iterator[Candidate]:
        for match in rule.regex.finditer(text, line_start, line_end):
            group = next(index for index in (1, 2, 3) if match.group(index) is not None)
            value = match.group(group)
            if len(value) < 3 or is_placeholder_value(value):
                continue
            yield Candidate(FindingType.PASSWORD, match.start(group), match.end(group), 0.85, self.name)


def _lines_with(lower: str, keyword: str) -> Iterator[tuple[int, int]]:
    """The lines holding `keyword`: the command regexes then run on those lines only, not on the whole text."""
    position = lower.find(keyword)
    while position >= 0:
        line_start, line_end = line_bounds(lower, position, position)
        yield line_start, line_end
        position = lower.find(keyword, line_end)
