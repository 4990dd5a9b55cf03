"""AWS secret access keys: 40 characters of base64 that AWS gives no prefix, so only found near AWS context.

The context is a label ("aws_secret_access_key", "SecretAccessKey", ...) or an access key id (AKIA...)
shortly before or after, as in `~/.aws/credentials`, environment exports and the console's CSV download.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["AwsSecretKeyDetector"]

_LABELS = (
    "secret_access_key",
    "secretaccesskey",
    "secret access key",
    "secret-access-key",
    "aws_secret",
    "aws secret",
    "aws-secret",
)
_LABEL = re.compile("|".join(re.escape(label) for label in _LABELS))
_KEY_ID = re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}")
_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_BEFORE, _AFTER = 120, 240


class AwsSecretKeyDetector:
    name = "aws_secret_key"
    anchors = ("secret", "akia", "asia")  # a secret label or a key id

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        has_label = scan.lower_contains_any(("secret",))
        has_key_id = "AKIA" in text or "ASIA" in text
        if not (has_label or has_key_id):
            return
        anchors: list[int] = []
        if has_label:
            anchors.extend(match.start() for match in _LABEL.finditer(scan.lower))
        if has_key_id:
            anchors.extend(match.start() for match in _KEY_ID.finditer(text))
        seen: set[int] = set()
        for anchor in anchors:
            for match in _SECRET.finditer(text, max(0, anchor - _BEFORE), anchor + _AFTER):
                if match.start() in seen or not _looks_random(match.group()):
                    continue
                seen.add(match.start())
                yield Candidate(FindingType.AWS_SECRET_ACCESS_KEY, match.start(), match.end(), 0.9, self.name)


def _looks_random(value: str) -> bool:
    # AWS secrets mix cases and digits; a 40-character hex digest or a word-only run is something else.
    has_upper = any(char.isupper() for char in value)
    has_lower = any(char.islower() for char in value)
    has_other = any(char.isdigit() or char in "/+" for char in value)
    return has_upper and has_lower and has_other
