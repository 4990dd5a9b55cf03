"""Credential files that hold one line per host, where no key names the password.

- PostgreSQL's password file (`~/.pgpass`, PGPASSFILE): `hostname:port:database:username:password`, the port
  a number or `*` (PostgreSQL documentation, "The Password File");
- davfs2's secrets file (`/etc/davfs2/secrets`, `~/.davfs2/secrets`): `URL-or-mount-point username password`
  (davfs2.conf(5), "secrets");
- pppd's CHAP and PAP secrets (`/etc/ppp/chap-secrets`): `client server secret [addresses]`, recognised by their
  `*` or `"..."` columns (pppd(8), "Authentication").

.netrc (`machine ... login ... password ...`) and git's credential store (`https://user:token@host`) carry their
own words and are read by the keyword and URL detectors.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import ANY_DIGIT, Candidate, CandidatePart, ScanText, line_local_findings

__all__ = ["CredentialFileDetector"]

# `\:` escapes a colon inside a field, the password's too: a bare colon makes a sixth field (an IPv6 address,
# a MAC address), not a password. The host is `*` or holds a letter or a dot (not a time of day).
_FIELD = r"(?:[^:\s\\]|\\.)+"
_HOST = r"(?:\*|[\w.\-]+)"  # one quantifier: a nested one backtracked quadratically on long lines
# Both open on the newline before their line (the text is read with one put in front): a literal the scan
# skips to in C, where `^` in multi-line mode is tried at every position.
_ONE_LINE = re.compile(
    rf"\n(?:(?P<host>{_HOST}):(?:\d{{1,5}}|\*):(?:{_FIELD}|\*):(?:{_FIELD}|\*):(?P<pgpass>{_FIELD})"
    r"|(?:https?://\S+|/\S+)[ \t]+\S+[ \t]+(?P<davfs>\S+))[ \t]*(?=\n|\Z)"
)
# For the compiled scan: the start of a line `_ONE_LINE` reads (a host and a port, or a URL or path and two
# more fields); `\w`, `\d`, `\S` of every script as any non-ASCII byte.
_ONE_LINE_PART = CandidatePart(
    "credential_files.one_line",
    (
        rf"(?:^|\n)(?:\*|[0-9A-Za-z_.\-\x80-\xff]+):(?:{ANY_DIGIT}{{1,5}}|\*):",
        r"(?:^|\n)(?:https?://|/)[^ \t\n]*[ \t]+[^ \t\n]+[ \t]+[^ \t\n]",
    ),
)
_HOST_LIKE = re.compile(r"\*|.*[A-Za-z.]")
_PPP = re.compile(
    r'^(?:"[^"\n]*"|\S+)[ \t]+(?:\*|"[^"\n]*")[ \t]+(?P<secret>"[^"\n]+"|\S+)(?:[ \t]+\S+)*[ \t]*$', re.M
)
_PPP_FILE = (
    "chap-secrets",
    "pap-secrets",
    "# secrets for authentication using chap",
    "# client\tserver\tsecret",
)


class CredentialFileDetector:
    name = "credential_files"
    candidate_parts = (_ONE_LINE_PART,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        yield from line_local_findings(scan, self._lines, _ONE_LINE_PART)
        if scan.lower_contains_any(_PPP_FILE):
            for match in _PPP.finditer(scan.text):
                if not match.group().lstrip().startswith("#"):
                    yield Candidate(FindingType.PASSWORD, *match.span("secret"), 0.8, self.name)

    def _lines(self, scan: ScanText) -> Iterator[Candidate]:
        for match in _ONE_LINE.finditer("\n" + scan.text):
            if match.group("pgpass") is not None and not _HOST_LIKE.match(match.group("host")):
                continue  # "10:30:00:00:12" is a time of day, not a host's line
            group = "pgpass" if match.group("pgpass") is not None else "davfs"
            start, end = match.span(group)
            yield Candidate(FindingType.PASSWORD, start - 1, end - 1, 0.8, self.name)
