"""E-mail addresses (the dot-atom form of RFC 5322 that people actually use).

The scan looks for "@" (a C-speed search) and grows the local part and domain around each one, rather than
running a regex that starts at every word of the text; "%40" (a percent-encoded "@") counts too. Not e-mail: `git@github.com:org/repo` (an SSH
remote), `logo@2x.png` (an asset name), `pkg@1.2.3` (a version pin), the login in `https://user:pw@host`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["EmailDetector"]

# RFC 5322 allows more symbols in the local part, but in running text they are far more often delimiters
# (`user=alice@...`, `'alice@...'`) than part of an address.
# Matched on the reversed text from the "@" leftwards: a search for the same class ending at the "@"
# (`[...]{1,64}\Z` in a 64-character window) retried every start position in that window.
# Internationalised addresses (RFC 6531/6532: `jörg@bücherstube.de`, `李雷@邮件.中国`) hold letters and digits of
# any script in both parts: `[^\W_]` is a letter or digit of any script, `\w` adds the underscore. An ASCII-only
# class cut such an address in the middle and left the rest readable.
_LOCAL_BACKWARDS = re.compile(r"[\w.%+\-]{1,64}")
_LABEL = r"[^\W_](?:[\w\-]{0,61}[^\W_])?"
_DOMAIN = re.compile(rf"(?:{_LABEL}\.)+([^\W\d_]{{2,24}})(?![\w\-])")
# Look-alikes whose "top-level domain" is a file extension (`icon@2x.png`, `main@abc.js`).
_FILE_EXTENSIONS = frozenset(
    {
        "png",
        "jpg",
        "jpeg",
        "gif",
        "svg",
        "webp",
        "ico",
        "bmp",
        "js",
        "mjs",
        "ts",
        "tsx",
        "jsx",
        "css",
        "scss",
        "json",
        "map",
        "html",
        "txt",
        "md",
        "lock",
        "yaml",
        "yml",
        "toml",
        "woff",
        "woff2",
        "ttf",
        "otf",
        "mp4",
        "webm",
        "pdf",
        "zip",
        "gz",
        "tgz",
        "so",
        "dll",
        "exe",
        "wasm",
        "vue",
        "jar",
        "class",
    }
)
_SSH_REMOTE_USERS = frozenset({"git", "hg", "svn", "ssh"})
_AUTHORITY_LOOKBACK = 128


class EmailDetector:
    name = "email"
    anchors = ("@", "%40")

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        # "%40" is "@" percent-encoded, as in `?email=jane%40example.com`.
        for separator in ("@", "%40"):
            at = text.find(separator)
            while at >= 0:
                candidate = self._around(scan, at, len(separator))
                if candidate is not None:
                    yield candidate
                at = text.find(separator, at + 1)

    def _around(self, scan: ScanText, at: int, width: int) -> Candidate | None:
        text = scan.text
        behind = len(text) - at
        local = _LOCAL_BACKWARDS.match(scan.reversed, behind)
        domain = _DOMAIN.match(text, at + width)
        if local is None or domain is None:
            return None
        start = at - (local.end() - behind)
        while start < at and text[start] in ".-":
            start += 1
        local_part = text[start:at]
        if not local_part or local_part.endswith(".") or ".." in local_part:
            return None
        if _is_url_userinfo(text, start):
            return None
        top_level = domain.group(1).lower()
        if top_level in _FILE_EXTENSIONS and domain.group().count(".") == 1:
            return None
        end = domain.end()
        if local_part.lower() in _SSH_REMOTE_USERS and text.startswith(":", end):
            return None
        return Candidate(FindingType.EMAIL, start, end, 0.9, self.name)


def _is_url_userinfo(text: str, start: int) -> bool:
    """`scheme://user@host` or `scheme://user:password@host`: the part before "@" is a login, not a mailbox."""
    scheme_end = text.rfind("://", max(0, start - _AUTHORITY_LOOKBACK), start)
    if scheme_end < 0:
        return False
    between = text[scheme_end + 3 : start]
    return not any(char.isspace() or char in "/?#@" for char in between)
