"""MAC addresses (IEEE 802 EUI-48) in the three common spellings: `aa:bb:cc:dd:ee:ff`, `aa-bb-cc-dd-ee-ff`
and Cisco's `aabb.ccdd.eeff`.

A MAC address names one network card, so it follows a device (and its owner) across networks. Left alone:
the all-zero address (no device), broadcast `ff:ff:ff:ff:ff:ff` and the multicast groups real output shows
(`01:00:5e:...`, `33:33:...`, `01:80:c2:...`), which name groups, not devices. Locally
administered (randomised) addresses are masked: they still follow a device for as long as it keeps them.
Cisco's dotted form is taken in lower case only, as IOS and NX-OS print it, and with at least one hex letter:
upper-case or all-digit dotted quads are other data (Unicode collation weights `[.FB84.0020.0002]`, versions).
A longer run of hex pairs (a certificate or key fingerprint) is not a MAC address.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .._types import FindingType
from ._base import Candidate, CandidatePart, ScanText, line_local_findings
from ._context_words import ascii_words, word_matches

__all__ = ["AnnouncedMacDetector", "MacAddressDetector"]

# Anchored on the first separator, the first octet (or quad) checked in Python: a pattern that opens with a
# hex class tries nearly every position of a text and was about 8 times slower. The separator is one class
# before the alternatives (a look-behind then says which it was): CPython skips ahead to a pattern's first
# character only when the pattern opens with a plain class, which made this scan three times faster.
_MAC_TAIL = re.compile(
    r"[:.-](?:(?<=:)(?:[0-9A-Fa-f]{2}:){4}[0-9A-Fa-f]{2}|(?<=-)(?:[0-9A-Fa-f]{2}-){4}[0-9A-Fa-f]{2}"
    r"|(?<=\.)[0-9a-f]{4}\.[0-9a-f]{4})"
)
# For the compiled scan: the tail `_MAC_TAIL` matches, without its look-behinds.
_CANDIDATES = CandidatePart(
    "mac_address",
    (
        r":(?:[0-9A-Fa-f]{2}:){4}[0-9A-Fa-f]{2}",
        r"-(?:[0-9A-Fa-f]{2}-){4}[0-9A-Fa-f]{2}",
        r"\.[0-9a-f]{4}\.[0-9a-f]{4}",
    ),
)
_HEX = frozenset("0123456789abcdefABCDEF")
_LOWER_HEX = frozenset("0123456789abcdef")


class MacAddressDetector:
    name = "mac_address"
    candidate_parts = (_CANDIDATES,)
    # A hex digit right before a separator, as the first octet (or quad) has it in every spelling: a bare
    # dash or dot would not let plain text ("Refactor the parser - Visual Studio Code") skip this detector.
    anchors = tuple(digit + separator for digit in "0123456789abcdef" for separator in ":-.")

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        # Line-local: the pattern matches no newline; a head or neighbour read across the line's start or end
        # meets the newline, which fails the hex test and passes the boundary test as the text's edge does.
        return line_local_findings(scan, self._find, _CANDIDATES)

    def _find(self, scan: ScanText) -> Iterator[Candidate]:
        text = scan.text
        for match in _MAC_TAIL.finditer(text):
            dotted = text[match.start()] == "."
            start, end = match.start() - (4 if dotted else 2), match.end()
            value = text[max(start, 0) : end]
            if start < 0 or not _hex_head(value, dotted):
                continue
            if (
                _glued(text, start, -1, dotted)
                or _glued(text, end - 1, 1, dotted)
                or not _names_a_device(value)
            ):
                continue
            if dotted and value.replace(".", "").isdigit():  # "2024.0101.0001" is a version or a serial
                continue
            yield Candidate(FindingType.MAC_ADDRESS, start, end, 0.9, self.name)


def _hex_head(value: str, dotted: bool) -> bool:
    head = value[:4] if dotted else value[:2]
    return all(char in (_LOWER_HEX if dotted else _HEX) for char in head)


# The group addresses that appear in real output (IANA's IPv4 and IPv6 multicast, IEEE 802.1 bridge and LLDP,
# Cisco's CDP/VTP, PTP, IEC 61850), and broadcast. Any other address, even one whose group bit a made-up value
# sets, is taken as a device's: a document that writes one means a card.
_GROUP_PREFIXES = ("01005e", "3333", "0180c2", "01000c", "011b19", "010ccd", "ffffffffffff")


def _names_a_device(value: str) -> bool:
    digits = re.sub(r"[^0-9A-Fa-f]", "", value).lower()
    return digits.strip("0") != "" and not digits.startswith(_GROUP_PREFIXES)


def _glued(text: str, edge: int, step: int, dotted: bool) -> bool:
    """Whether the character beyond `edge` continues the token: a letter or digit, or a separator and hex.

    Next to a dotted form any separator joins: `[.FB84.0020.0002]` is one longer token.
    """
    index = edge + step
    if not 0 <= index < len(text):
        return False
    char = text[index]
    if char.isalnum() or char == "_" or (dotted and char in ":-."):
        return True
    beyond = index + step
    return char in ":-." and 0 <= beyond < len(text) and text[beyond] in _HEX


_DOTTED_ANY = re.compile(r"(?<![\w.:\-])[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}(?![\w.:\-])")
_BARE = re.compile(r"[0-9A-Fa-f]{12}(?![\w.:\-])")
_LEAD = re.compile(r"[\s:=#\-]*")


class AnnouncedMacDetector:
    """MAC addresses in the spellings that need their name: bare (`AABBCCDDEEFF`, as Windows' getmac and
    many web consoles print them) right after a word naming a MAC address, and Cisco's dotted form in any case or
    of digits alone (`0011.2233.4455` in a `show mac address-table`) anywhere in a text that names MAC addresses.
    The words are data (data/context_words.toml) in some 40 languages: `script` "ascii" for those in Latin
    letters (its anchors), "other" for the rest (it returns at once on ASCII text).
    """

    def __init__(self, script: str) -> None:
        self._script = script
        self.name = "mac_address_announced" if script == "ascii" else "mac_address_announced_other_scripts"
        if script == "ascii":
            self.anchors = ascii_words("MAC_ADDRESS")

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        if self._script != "ascii" and scan.text.isascii():
            return
        words = list(word_matches("MAC_ADDRESS", scan.lower, self._script))
        if not words:
            return
        text = scan.text
        for match in _DOTTED_ANY.finditer(text):
            if _names_a_device(match.group()):
                yield Candidate(FindingType.MAC_ADDRESS, *match.span(), 0.85, self.name)
        for _start, end, _word in words:
            lead = _LEAD.match(text, end)
            at = lead.end() if lead else end
            bare = _BARE.match(text, at)
            if bare is not None and at - end <= 8 and _names_a_device(bare.group()):
                yield Candidate(FindingType.MAC_ADDRESS, *bare.span(), 0.85, self.name)
