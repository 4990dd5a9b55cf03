"""JSON Web Tokens (RFC 7519): three base64url parts whose header decodes to a JSON object with "alg".

The header of every JWS starts with `{"`, which base64url-encodes to `eyJ`: a literal the scan can look for.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["JwtDetector"]

_JWT = re.compile(
    r"eyJ[A-Za-z0-9_\-]{8,}={0,2}\.[A-Za-z0-9_\-]{8,}={0,2}\.[A-Za-z0-9_\-+/]*={0,2}(?![A-Za-z0-9_\-])"
)


class JwtDetector:
    name = "jwt"
    anchors = ("eyj",)  # `detect` needs "eyJ"

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        if "eyJ" not in text:
            return
        for match in _JWT.finditer(text):
            start = match.start()
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-"):
                continue
            header = match.group().split(".", 1)[0]
            if _is_jose_header(header):
                yield Candidate(FindingType.JWT, start, match.end(), 0.95, self.name)


def _is_jose_header(segment: str) -> bool:
    padded = segment.rstrip("=") + "=" * (-len(segment.rstrip("=")) % 4)
    try:
        decoded = json.loads(base64.urlsafe_b64decode(padded))
    except (binascii.Error, ValueError):
        return False
    return isinstance(decoded, dict) and "alg" in decoded
