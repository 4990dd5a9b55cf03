"""Base64 values in configuration and orchestration output, decoded and judged by what they hold.

`kubectl get secret -o yaml`, `docker inspect`, Helm values and CI variables carry secrets base64-encoded: the
key says little (`DATABASE_URL:`, `config.json:`) and the value reads as random letters, so the pattern
detectors see nothing. A value of a key (`key: value`, `"key": "value"`, `KEY=value`) that is valid base64 and
decodes to text is judged by the engine's own detectors on the decoded text: it is masked when they find
anything there (a URL with a password, a private key, a token, an address). Every value under `data:` or
`stringData:` of a Kubernetes Secret is a secret by definition and is masked whatever it decodes to.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["EncodedValueDetector"]

# A key's separator and a quoted or bare value of base64 characters, at least 16 of them (12 bytes). The
# pattern opens on the separator, a plain class, so the scan skips to it in C; the key before it is not needed.
_KEYED_VALUE = re.compile(r"""[:=][ \t]*["']?(?P<value>[A-Za-z0-9+/]{16,}={0,2})(?![A-Za-z0-9+/=])""")
_ENCODED_LOOK = re.compile(r"[0-9+/=]")
# Inside a Secret's data every value counts, however short ("YWRtaW4=").
_DATA_VALUE = re.compile(
    r"""[\w.\-]+["']?[ \t]*:[ \t]*["']?(?P<value>[A-Za-z0-9+/]+={0,2})(?![A-Za-z0-9+/=])"""
)
_SECRET_KIND = re.compile(r"""kind["']?\s*:\s*["']?Secret\b""")
_SECRET_DATA = re.compile(r"""^(?P<indent>[ \t]*)["']?(?:data|stringData)["']?\s*:\s*\{?\s*$""", re.MULTILINE)
_MIN_DECODED = 6


def _decoded_text(value: str) -> str | None:
    """The value decoded as base64 to text that reads as text, or None."""
    padded = value + "=" * (-len(value) % 4)
    try:
        raw = base64.b64decode(padded, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if len(text) < _MIN_DECODED:
        return None
    printable = sum(char.isprintable() or char in "\n\r\t" for char in text)
    return text if printable * 10 >= len(text) * 9 else None


class EncodedValueDetector:
    """Needs the engine's judgement of a decoded text: `finds_anything(text)` runs the other detectors on it."""

    name = "encoded_values"

    def __init__(self, finds_anything: Callable[[str], bool]) -> None:
        self._finds_anything = finds_anything

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        secret_blocks = _secret_data_blocks(text) if _SECRET_KIND.search(text) else []
        for block_start, block_end in secret_blocks:
            for match in _DATA_VALUE.finditer(text, block_start, block_end):
                yield Candidate(FindingType.SECRET, *match.span("value"), 0.9, self.name)
        for match in _KEYED_VALUE.finditer(text):
            start, end = match.span("value")
            if any(block_start <= start < block_end for block_start, block_end in secret_blocks):
                continue
            value = match.group("value")
            if value.isalpha() or (_ENCODED_LOOK.search(value) is None and value.islower()):
                continue  # a word or an identifier (`key: somethingLong`), not base64
            decoded = scan.memo(_decoded_text, value)
            if decoded is not None and scan.memo(self._finds_anything, decoded):
                yield Candidate(FindingType.SECRET, start, end, 0.85, self.name)


def _secret_data_blocks(text: str) -> list[tuple[int, int]]:
    """The spans of a Secret's `data:`/`stringData:` mappings: the lines indented deeper than the key (YAML), or
    up to the closing brace (JSON)."""
    blocks = []
    for match in _SECRET_DATA.finditer(text):
        start = match.end()
        if match.group().rstrip().endswith("{"):
            close = text.find("}", start)
            blocks.append((start, len(text) if close < 0 else close))
            continue
        indent = len(match.group("indent").expandtabs())
        end = start
        for line in text[start + 1 :].split("\n"):
            stripped = line.strip()
            if stripped and len(line) - len(line.lstrip()) <= indent:
                break
            end += len(line) + 1
        blocks.append((start, end))
    return blocks
