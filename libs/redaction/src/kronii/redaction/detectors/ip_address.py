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
            start, end = match.span()
            while start > 0 and match.start() - start < 3 and text[start - 1] in _DIGITS:
                start -= 1
            if start == match.start():
                continue
            before = text[start - 1] if start > 0 else " "
            if before.isalnum() or before in "_.-":
                continue
            if end < len(text) and (text[end].isalnum() or text[end] == "_" or _continues_dotted(text, end)):
                continue
            if before == "/" and start > 1 and text[start - 2].isalpha():
                continue  # a product token in a user agent: Chrome/120.0.0.0
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
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                continue
            if end < len(text) and (text[end].isalnum() or text[end] == "_"):
                continue
            raw = text[start:end]
            groups = [group for group in raw.split(":") if group]
            if groups and "." in groups[-1]:
                groups.append("")  # an embedded IPv4 address stands for two groups
            # `Foo::bar`, `dead::beef` and times like 12:30:45 parse or nearly parse as IPv6; real
            # addresses written in text have at least three groups and some digit.
            if len(groups) < 3 or not any(char.isdigit() for char in raw):
                continue
            try:
                address = ipaddress.IPv6Address(raw)
            except ValueError:
                continue
            if not (address.is_loopback or address.is_unspecified or address.is_multicast):
                yield Candidate(FindingType.IP_ADDRESS, start, end, 0.85, self.name)


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
