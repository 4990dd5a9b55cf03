"""Passwords that no `key = value` syntax introduces, as people write them in chat, tickets and tables:
"admin / R0uter!Home77", "what's the password?" answered by "it's CgM7yQ_w_6i" on the next line, a table
whose "Password" column holds "Xq9!vLm2#Rt7", a pgpass line under its `username:password` header.

On a line that names a password (or right after one), a token is taken for a password when it looks generated
or deliberately strong: upper and lower case letters and a digit, and either no reading as words or a symbol
in it. Identifiers in code rarely mix all three without reading as words, which keeps code lines quiet.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, ScanText, reads_as_words

__all__ = ["ContextualPasswordDetector"]

# Checked for whole words in Python ("_" counts as a separator: `db_password` yes, `ASPasswordCredential` no);
# a pattern without look-behind is scanned much faster.
_CONTEXT = re.compile(r"p(?:ass(?:words?|wd|phrase|code)|wd?)|cred(?:s|entials)|log ?in(?:to)?|sign in")
_MAX_LINE = 400  # chat lines, table rows and config lines are short; long ones are data or minified code
_MAX_PASSWORD = 48
_TOKEN = re.compile(r"[^\s:/\\,;|'\"`()<>\[\]{}=]{8,48}")
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")
_UPPER, _LOWER, _DIGIT = re.compile("[A-Z]"), re.compile("[a-z]"), re.compile("[0-9]")
_SYMBOL = re.compile(r"[^A-Za-z0-9_.]")
# URLs, addresses, file names (`...-debug-0.log`) and timestamps are not passwords.
_NOT_PASSWORDS = re.compile(r"https?.*|www\..*|.*@.*\..*|.*\.[A-Za-z]{1,5}|.*[0-9]{4}-[0-9]{2}-[0-9]{2}.*")


class ContextualPasswordDetector:
    name = "password_context"
    anchors = ("pass", "pw", "cred", "login", "log in", "sign in")  # what `_CONTEXT` can match

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        scanned_until = 0
        lower = scan.lower
        for hit in _CONTEXT.finditer(lower):
            if _glued(lower, hit.start() - 1) or _glued(lower, hit.end()):
                continue
            line_start = text.rfind("\n", 0, hit.start()) + 1
            # The line that names the password, and the next one (a chat answer, a table row).
            first_end = text.find("\n", hit.end())
            second_end = -1 if first_end < 0 else text.find("\n", first_end + 1)
            region_end = len(text) if second_end < 0 else second_end
            # On the naming line a password follows its name ("password: X", "log in as admin / X").
            start = max(hit.end(), scanned_until)
            if start >= region_end or region_end - line_start > 2 * _MAX_LINE:
                continue
            scanned_until = region_end
            for token in _TOKEN.finditer(text, start, region_end):
                if scan.memo(_looks_like_password, token.group()) and not _inside_blob(
                    text, token.start(), token.end()
                ):
                    yield Candidate(FindingType.PASSWORD, token.start(), token.end(), 0.6, self.name)


def _glued(lower: str, index: int) -> bool:
    return 0 <= index < len(lower) and "a" <= lower[index] <= "z"


def _inside_blob(text: str, start: int, end: int) -> bool:
    """Part of a longer Base64 run (an integrity hash, a key body) rather than a password on its own."""
    while start > 0 and text[start - 1] in _BASE64:
        start -= 1
    while end < len(text) and text[end] in _BASE64:
        end += 1
    return end - start > _MAX_PASSWORD


def _looks_like_password(token: str) -> bool:

    if not (_UPPER.search(token) and _LOWER.search(token) and _DIGIT.search(token)):
        return False
    if _NOT_PASSWORDS.fullmatch(token):
        return False
    return _SYMBOL.search(token) is not None or not reads_as_words(token)
