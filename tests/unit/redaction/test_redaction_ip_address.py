"""IP addresses: which ranges count as sensitive, and dotted quads that are versions."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors import IpAddressDetector

from tests.unit.redaction.redaction_support import values

DETECTOR = IpAddressDetector()


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("connect to 8.8.8.8 now", "8.8.8.8"),
        ("ssh deploy@203.0.113.7", "203.0.113.7"),
        ("db=10.0.12.5:5432", "10.0.12.5"),
        ("gateway 192.168.1.1.", "192.168.1.1"),
        ("route 172.16.4.20/24", "172.16.4.20"),
        ("peer 2001:db8:85a3::8a2e:370:7334 up", "2001:db8:85a3::8a2e:370:7334"),
        ("ULA fd12:3456:789a:1::1", "fd12:3456:789a:1::1"),
        ("[2001:db8::1]:443", "2001:db8::1"),
    ],
)
def test_addresses(text: str, address: str) -> None:
    assert values(DETECTOR, text) == [address]


def test_ipv4_mapped_address_is_masked_whole() -> None:
    text = "mapped ::ffff:192.0.2.128"
    assert "::ffff:192.0.2.128" in values(DETECTOR, text)
    assert RedactionEngine().redact(text).text == "mapped [IP_ADDRESS_1]"


@pytest.mark.parametrize(
    "text",
    [
        "listening on 127.0.0.1:8000",
        "bind 0.0.0.0",
        "netmask 255.255.255.0",
        "broadcast 255.255.255.255",
        "metadata at 169.254.169.254",
        "localhost ::1",
        "version 1.2.3.4",
        "pip install pkg==1.2.3.4",
        "Mozilla/5.0 Chrome/120.0.0.0 Safari/537.36",
        "oid 1.3.6.1.4.1.311",
        "at 12:30:45 today",
        "mac 00:1a:2b:3c:4d:5e",
        "std::vector<int> v; a::b::c",
        "999.1.1.1",
    ],
)
def test_not_sensitive_or_not_addresses(text: str) -> None:
    assert values(DETECTOR, text) == []
