"""Private key blocks: PEM (RFC 7468: PKCS#1, PKCS#8, EC, OpenSSH, encrypted), PGP and PuTTY key files.

The whole block is masked, from BEGIN through END. A block whose END is missing (a truncated paste, a
terminal that scrolled) is masked to the end of the text, because what follows BEGIN is key material.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["PrivateKeyDetector"]

# OCR and chat clients mangle the dashes, so any run of three or more counts.
_BEGIN = re.compile(r"-{3,}\s?BEGIN ([A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?\s?-{3,}")
_END = re.compile(r"-{3,}\s?END ([A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?\s?-{3,}")
_PUTTY = re.compile(r"PuTTY-User-Key-File-\d+:")
_PUTTY_END = re.compile(r"Private-(?:MAC|Hash): *[0-9a-fA-F]*")


class PrivateKeyDetector:
    name = "private_keys"

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        if "PRIVATE KEY" in text:
            position = 0
            while (begin := _BEGIN.search(text, position)) is not None:
                end = _END.search(text, begin.end())
                stop = len(text) if end is None else end.end()
                yield Candidate(FindingType.PRIVATE_KEY, begin.start(), stop, 0.99, self.name)
                position = stop
        if "PuTTY-User-Key-File-" in text:
            for begin in _PUTTY.finditer(text):
                end = _PUTTY_END.search(text, begin.end())
                stop = len(text) if end is None else end.end()
                yield Candidate(FindingType.PRIVATE_KEY, begin.start(), stop, 0.99, self.name)
