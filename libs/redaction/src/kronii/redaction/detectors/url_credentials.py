"""Passwords inside URLs (RFC 3986 userinfo): `scheme://user:password@host`.

Only the password is masked: the scheme, user and host tell an LLM what is being connected to, and the
user name alone is no credential, unless it is a key itself (`https://<key>@host`, as in Sentry DSNs). Placeholders that document the shape (`user:password@`, `${DB_PASS}`)
are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, ScanText
from ._values import is_placeholder_value

__all__ = ["UrlCredentialDetector"]

# Starts with the literal "://" so the scan is a fast literal search; the scheme is checked afterwards.
# The password runs to the last "@" before the host, since unencoded "@" in passwords is common.
# Unencoded "#" and "?" are tolerated too: the "@host" that must follow keeps this from running into a path.
_USERINFO = re.compile(r"://([^\s:/?#@\[\]\"'<>]*):([^\s/\"'<>]+)@(?=[^\s@/])")
# A key alone as the user (`https://<key>@o123.ingest.sentry.io`, `https://<token>@github.com`).
_TOKEN_USERINFO = re.compile(r"://([A-Za-z0-9_\-]{16,})@(?=[^\s@/])")
_SCHEME_CHAR = re.compile(r"[A-Za-z0-9+.\-]")


class UrlCredentialDetector:
    name = "url_credentials"
    anchors = ("://",)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        if "://" not in text or "@" not in text:
            return
        for match in _USERINFO.finditer(text):
            if not _has_scheme(text, match.start()):
                continue
            password = match.group(2)
            if is_placeholder_value(password) or password.lower() in _DOCUMENTATION_PASSWORDS:
                continue
            yield Candidate(FindingType.URL_CREDENTIAL, match.start(2), match.end(2), 0.95, self.name)
        for match in _TOKEN_USERINFO.finditer(text):
            token = match.group(1)
            if _has_scheme(text, match.start()) and _looks_like_key(token):
                yield Candidate(FindingType.URL_CREDENTIAL, match.start(1), match.end(1), 0.95, self.name)


# Words that stand for "a password goes here" in docs and templates, not passwords.
_DOCUMENTATION_PASSWORDS = frozenset({"password", "pass", "passwd", "pwd", "secret", "token", "pw"})


def _looks_like_key(token: str) -> bool:
    # Long and mixing letters with digits: a user name is rarely both.
    return (
        any(char.isdigit() for char in token)
        and any(char.isalpha() for char in token)
        and len(set(token)) >= 10
    )


def _has_scheme(text: str, colon: int) -> bool:
    return colon > 0 and _SCHEME_CHAR.match(text, colon - 1) is not None and text[colon - 1] != "."
