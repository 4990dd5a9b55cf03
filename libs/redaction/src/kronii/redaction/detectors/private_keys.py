"""Private key blocks: PEM (RFC 7468: PKCS#1, PKCS#8, EC, OpenSSH, encrypted), PGP and PuTTY key files.

The whole block is masked, from BEGIN through END. A block whose END is missing (a truncated paste, a
terminal that scrolled) is masked through the key material that follows BEGIN: the run of Base64 lines (and
PEM headers such as `Proc-Type:`), however it was cut.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["PrivateKeyDetector"]

# OCR and chat clients mangle the dashes, so any run of three or more counts.
# `---+` rather than `-{3,}`: a pattern that opens with a literal is found by a fast search for it, one that
# opens with a repeat is tried at every position (seven times slower on secret-dense text).
_BEGIN = re.compile(r"---+\s?BEGIN ([A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?\s?-{3,}")
_END = re.compile(r"-{3,}\s?END ([A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?\s?-{3,}")
# Key material after BEGIN: Base64 lines, PEM headers, blank lines; or, in JSON and .env files, the same on one
# line with "\n" escapes. The END line has to follow it directly.
_BODY = re.compile(r"(?:(?:Proc-Type|DEK-Info|Comment|Version):[^\n]*|[A-Za-z0-9+/=]++|\\[nr]|\s)*+")
_PUTTY = re.compile(r"PuTTY-User-Key-File-\d+:")
_PUTTY_END = re.compile(r"Private-(?:MAC|Hash): *[0-9a-fA-F]*")


class PrivateKeyDetector:
    name = "private_keys"
    anchors = ("private key", "putty-user-key-file-")

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        if "PRIVATE KEY" in text:
            position = 0
            while (begin := _BEGIN.search(text, position)) is not None:
                body = _BODY.match(text, begin.end())
                body_end = begin.end() if body is None else body.end()
                end = _END.match(text, body_end)
                stop = body_end if end is None else end.end()
                yield Candidate(FindingType.PRIVATE_KEY, begin.start(), stop, 0.99, self.name)
                position = stop
        if "PuTTY-User-Key-File-" in text:
            for begin in _PUTTY.finditer(text):
                end = _PUTTY_END.search(text, begin.end())
                stop = len(text) if end is None else end.end()
                yield Candidate(FindingType.PRIVATE_KEY, begin.start(), stop, 0.99, self.name)
