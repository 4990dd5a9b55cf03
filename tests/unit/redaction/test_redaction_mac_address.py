"""MAC addresses: device addresses are masked; zero, broadcast, multicast and fingerprints are not."""

from __future__ import annotations

import pytest
from kronii.redaction import RedactionContext, RedactionEngine
from kronii.redaction.detectors import MacAddressDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = MacAddressDetector()


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("    link/ether 3c:22:fb:9a:41:0e brd ff:ff:ff:ff:ff:ff", "3c:22:fb:9a:41:0e"),
        ("Physical Address. . . . . . . . . : 3C-22-FB-9A-41-0E", "3C-22-FB-9A-41-0E"),
        ("  10    a4b1.c2d3.e4f5    DYNAMIC     Gi0/1", "a4b1.c2d3.e4f5"),
        ("IN=eth0 OUT= MAC=52:54:00:12:34:56 SRC=10.0.0.1", "52:54:00:12:34:56"),
        ("wifi randomised address 7a:9c:2e:11:40:5b.", "7a:9c:2e:11:40:5b"),
    ],
)
def test_mac_addresses(text: str, value: str) -> None:
    assert detect(DETECTOR, text) == [("MAC_ADDRESS", value)]


@pytest.mark.parametrize(
    "text",
    [
        "brd ff:ff:ff:ff:ff:ff",  # broadcast
        "ether 00:00:00:00:00:00",  # all zero: no device
        "mdns group 01:00:5e:00:00:fb and 33:33:00:00:00:01",  # multicast (group bit set)
        "SHA1 Fingerprint=3A:5F:9C:1D:7E:2B:8A:4C:6D:0E:1F:3A:5B:7C:9D:0E:1F:2A:3B:4C",  # longer hex run
        "at 12:34:56 the job ran",  # a time
        "inet6 fe80::5054:ff:fe12:3456/64",  # IPv6, not a MAC
        "3c:22:fb:9a:41",  # five octets
        "0041  ; [.FB84.0020.0002][.9F4A.0000.0000]",  # Unicode collation weights, not Cisco's dotted form
        "firmware 2024.0101.0001",  # all digits: a version
    ],
)
def test_not_mac_addresses(text: str) -> None:
    assert detect(DETECTOR, text) == []


@pytest.mark.parametrize("value", ["3c:22:fb:9a:41:0e", "3C-22-FB-9A-41-0E", "a4b1.c2d3.e4f5"])
def test_engine_masks_each_spelling(value: str) -> None:
    result = RedactionEngine().redact(f"device {value} joined", context=RedactionContext.random())
    assert result.text == "device [MAC_ADDRESS_1] joined"
