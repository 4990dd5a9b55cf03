"""IPv4 and IPv6 addresses, validated by the standard library's `ipaddress`.

Masked: public addresses, private ranges (RFC 1918, fc00::/7: they map the user's networks), the
documentation ranges (RFC 5737, RFC 3849: they stand in for real addresses in examples), and link-local IPv6
with an interface id. Not masked, because they identify nobody: loopback (127.0.0.0/8, ::1), unspecified
(0.0.0.0, ::), broadcast, netmasks (255.255.255.0), multicast, and IPv4 link-local (169.254.0.0/16, whose
best-known member is the cloud metadata endpoint). Version-like dotted quads are not addresses: after
"version", "v", "==" or a product token (`Chrome/120.0.0.0`), inside longer dotted runs (OIDs), and any
quad of single digits (1.2.3.4) unless network words ("ip", "host", "ping", ...) come just before it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, ScanText

__all__ = ["IpAddressDetector"]

# Both scans start with a literal ("." or ":"), which CPython's regex engine finds far faster than a leading
# digit class; the first octet or group is then read backwards in Python.
_IPV4_TAIL = re.compile(r"\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}")
# "::", or three full groups in a row: times (12:30:45) and ports fail this at once.
_IPV6_CORE = re.compile(r":(?::|[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:)")
_IPV6_CHARS = frozenset("0123456789abcdefABCDEF:.")
_DIGITS = frozenset("0123456789")
_VERSION_CONTEXT = re.compile(r"version|\bver\b|\bv\b|release|firmware|build|driver|kernel|[=><~!]=")
_VERSION_WINDOW = 16
_IP_CONTEXT = re.compile(
    r"\bip|addr|host|server|ping|dns|resolver|nameserver|inet|src|dst|gateway|route|peer|connect|from|via|bind|"
    r"listen|proxy|vpn|client|remote|://|@"
)
_IP_WINDOW = 24


class IpAddressDetector:
    name = "ip_address"

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        if "." in text:
            yield from self._ipv4(scan)
        if "::" in text or text.count(":") >= 7:
            yield from self._ipv6(scan)

    def _ipv4(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for match in _IPV4_TAIL.finditer(text):
            start, end = _first_octet_start(text, match.start()), match.end()
            if start == match.start() or not _stands_alone_v4(text, start, end):
                continue
            window = scan.lower[max(0, start - _VERSION_WINDOW) : start]
            if _VERSION_CONTEXT.search(window):
                continue
            # Parsing is the costly step, and logs repeat the same few addresses: once per address and text.
            if not scan.memo(_names_a_host_v4, text[start:end]):
                continue
            if end - start == 7 and not _IP_CONTEXT.search(scan.lower, max(0, start - _IP_WINDOW), start):
                continue  # 1.2.3.4: single-digit parts read as a version unless the text says "address"
            yield Candidate(FindingType.IP_ADDRESS, start, end, 0.85, self.name)

    def _ipv6(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        covered = 0
        for match in _IPV6_CORE.finditer(text):
            if match.start() < covered:
                continue
            start, end = _widen(text, match.start(), match.end())
            covered = end
            if _is_word_char(text, start - 1) or _is_word_char(text, end):
                continue
            raw = text[start:end]
            if _reads_as_v6_address(raw) and _names_a_host_v6(raw):
                yield Candidate(FindingType.IP_ADDRESS, start, end, 0.85, self.name)


def _first_octet_start(text: str, tail_start: int) -> int:
    """Where the first octet before a dotted tail (`.0.2.1`) starts: up to three digits back."""
    start = tail_start
    while start > 0 and tail_start - start < 3 and text[start - 1] in _DIGITS:
        start -= 1
    return start


def _stands_alone_v4(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is a dotted quad on its own: not part of a word, a number, a longer dotted
    run (an OID, a version) or a product token."""
    before = text[start - 1] if start > 0 else " "
    if before.isalnum() or before in "_.-":
        return False
    if _is_word_char(text, end) or (end < len(text) and _continues_dotted(text, end)):
        return False
    # A product token in a user agent: Chrome/120.0.0.0
    return not (before == "/" and start > 1 and text[start - 2].isalpha())


def _is_word_char(text: str, index: int) -> bool:
    """Whether text[index] exists and is a letter, a digit or an underscore."""
    if index < 0 or index >= len(text):
        return False
    return text[index].isalnum() or text[index] == "_"


def _reads_as_v6_address(raw: str) -> bool:
    """`Foo::bar`, `dead::beef` and times like 12:30:45 parse or nearly parse as IPv6; real addresses
    written in text have at least three groups and some digit."""
    groups = [group for group in raw.split(":") if group]
    if groups and "." in groups[-1]:
        groups.append("")  # an embedded IPv4 address stands for two groups
    return len(groups) >= 3 and any(char.isdigit() for char in raw)


def _names_a_host_v6(raw: str) -> bool:
    try:
        address = ipaddress.IPv6Address(raw)
    except ValueError:
        return False
    return not (address.is_loopback or address.is_unspecified or address.is_multicast)


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and text[start - 1] in _IPV6_CHARS:
        start -= 1
    while end < len(text) and text[end] in _IPV6_CHARS:
        end += 1
    # A sentence's full stop or a "host:port" colon is not part of the address.
    while end - start > 2 and (text[end - 1] == "." or (text[end - 1] == ":" and text[end - 2] != ":")):
        end -= 1
    while end - start > 2 and (text[start] == "." or (text[start] == ":" and text[start + 1] != ":")):
        start += 1
    return start, end


def _continues_dotted(text: str, end: int) -> bool:
    return text[end] == "." and end + 1 < len(text) and text[end + 1].isdigit()


def _names_a_host_v4(value: str) -> bool:
    try:
        address = ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return _is_identifying_v4(address)


def _is_identifying_v4(address: ipaddress.IPv4Address) -> bool:
    if address.is_loopback or address.is_unspecified or address.is_multicast or address.is_link_local:
        return False
    return int(address) != 0xFFFFFFFF and not _is_netmask(address)


def _is_netmask(address: ipaddress.IPv4Address) -> bool:
    value = int(address)
    inverted = ~value & 0xFFFFFFFF
    # A netmask is ones then zeros; 255.255.255.0 and friends, but not 0.0.0.0 (handled above).
    return value != 0 and (inverted & (inverted + 1)) == 0 and value >> 24 == 255
