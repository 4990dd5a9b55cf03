"""What looks sensitive but is published to be copied: the engine drops these candidates before masking.

- public key material: PGP public key blocks and signatures, PEM public keys, certificates and requests, SSH
  public keys (`ssh-ed25519 AAAA...`), and key fingerprints (`SHA256:...`, `MD5:aa:bb:...`). A public key is
  meant to be shared; masking it breaks the very text it appears in (an authorized_keys line, a keyserver
  answer) and protects nothing. Private keys are another format and stay masked.
- content embedded as a data URI of a font, an image or audio (`url(data:font/woff2;base64,...)`): bytes, not
  a secret;
- documented examples (data/harmless.toml, each list with its source): AWS's example credentials (and any key
  ending as AWS ends every example), card networks' and processors' test card numbers, e-mail addresses at the
  domains RFC 2606 and RFC 6761 reserve for documentation (example.com, *.test, *.invalid ...), the IP blocks
  RFC 5737 and RFC 3849 reserve for documentation, NANPA's fictional 555-01xx numbers, jwt.io's sample token.

Hashes, digests, UUIDs and test vectors are not listed: the detectors already leave a bare digest alone, and a
digest under a secret-like key (`API_KEY=<64 hex>`) is a secret however it looks.
"""

from __future__ import annotations

import re
import tomllib
from bisect import bisect_right
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network
from typing import Any

from .detectors import Candidate, ScanText

__all__ = ["drop_harmless"]

_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*(?:PUBLIC KEY(?: BLOCK)?|CERTIFICATE(?: REQUEST)?|X509 CRL|SIGNATURE))-----"
    r".*?-----END \1-----|---- BEGIN SSH2 PUBLIC KEY ----.*?---- END SSH2 PUBLIC KEY ----",
    re.DOTALL,
)
_SSH_PUBLIC_KEY = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d{3}|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)"
    r" AAAA[0-9A-Za-z+/]+=*"
)
_FINGERPRINT = re.compile(
    r"\b(?:SHA256:[0-9A-Za-z+/]{43}=?|MD5:(?:[0-9a-f]{2}:){15}[0-9a-f]{2})"
    r"|(?i:fingerprint)[\s:=]+(?:[0-9A-Fa-f]{4} ?){10}|(?i:fingerprint)[\s:=]+(?:[0-9A-Fa-f]{2}:){19,31}[0-9A-Fa-f]{2}"
)
_DATA_URI = re.compile(
    r"data:(?:font|image|audio|video)/[0-9A-Za-z.+\-]+(?:;[0-9A-Za-z=\-]+)*;base64,[0-9A-Za-z+/]+=*"
)
_PUBLIC_ANCHORS = (
    "-----begin", "---- begin", "ssh-", "ecdsa-", "sk-", "sha256:", "md5:", "fingerprint", "data:"
)  # fmt: skip
_CARD_SEPARATORS = re.compile(r"[\s\-]")
_NON_DIGITS = re.compile(r"[^0-9]")
_ADDRESS_PART = re.compile(r"/|\]:")
_SECRET_TYPES = frozenset(
    {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "SECRET", "HIGH_ENTROPY", "PASSWORD", "JWT"}
)
_EXAMPLE_TYPES = _SECRET_TYPES | {"EMAIL", "PAYMENT_CARD", "IP_ADDRESS", "PHONE", "JWT"}


@dataclass(frozen=True, slots=True)
class _Examples:
    values: frozenset[str]
    endings: tuple[str, ...]
    cards: frozenset[str]
    domains: frozenset[str]
    suffixes: tuple[str, ...]
    networks: tuple[IPv4Network | IPv6Network, ...]
    nanp_fictional: str


@cache
def _examples() -> _Examples:
    raw: dict[str, Any] = tomllib.loads(
        files("kronii.redaction").joinpath("data", "harmless.toml").read_text(encoding="utf-8")
    )
    aws, cards, reserved = raw["aws_documentation"], raw["test_cards"], raw["reserved_domains"]
    return _Examples(
        frozenset((*aws["values"], *raw["documented_tokens"]["values"])),
        tuple(aws["endings"]),
        frozenset(cards["values"]),
        frozenset(reserved["domains"]),
        tuple("." + suffix for suffix in reserved["suffixes"]),
        tuple(ip_network(n) for n in raw["documentation_addresses"]["networks"]),
        raw["fictional_phone_numbers"]["nanp_fictional"],
    )


def _public_spans(scan: ScanText) -> list[tuple[int, int]]:
    if not scan.lower_contains_any(_PUBLIC_ANCHORS):
        return []
    spans = [
        m.span()
        for pattern in (_PUBLIC_BLOCK, _SSH_PUBLIC_KEY, _FINGERPRINT, _DATA_URI)
        for m in pattern.finditer(scan.text)
    ]
    return sorted(spans)


def _inside(spans: list[tuple[int, int]], starts: list[int], candidate: Candidate) -> bool:
    """Whether a span that starts at or before the candidate holds it whole (spans may nest or overlap)."""
    index = bisect_right(starts, candidate.start)
    return any(candidate.end <= end for _start, end in spans[max(0, index - 4) : index])


def _documented(value: str, finding_type: str) -> bool:
    examples = _examples()
    if finding_type == "EMAIL":
        domain = value.rpartition("@")[2].lower().rstrip(".")
        return (
            domain in examples.domains
            or domain.endswith(examples.suffixes)
            or any(domain.endswith("." + reserved) for reserved in examples.domains)
        )
    if finding_type == "PAYMENT_CARD":
        return _CARD_SEPARATORS.sub("", value) in examples.cards
    if finding_type == "IP_ADDRESS":
        return _documentation_address(value, examples)
    if finding_type == "PHONE":
        digits = _NON_DIGITS.sub("", value)
        # With or without an area code ("555-0123" in a film's dialogue).
        north_american = len(digits) in (7, 10) or (len(digits) == 11 and digits.startswith("1"))
        return north_american and digits[-7:].startswith(examples.nanp_fictional)
    if finding_type in _SECRET_TYPES:
        return value in examples.values or value.endswith(examples.endings)
    return False


def _documentation_address(value: str, examples: _Examples) -> bool:
    try:
        address = ip_address(value.strip("[]").split("%", 1)[0])
    except ValueError:  # a finding with a port or a prefix length: the address alone
        try:
            address = ip_address(_ADDRESS_PART.split(value.strip("[]"))[0])
        except ValueError:
            return False
    return any(address.version == net.version and address in net for net in examples.networks)


def drop_harmless(scan: ScanText, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates that are neither inside public key material nor inside a documented example.

    A documented example protects its whole span: another detector's piece of it (the entropy of jwt.io's
    sample signature) is the same published value."""
    text = scan.text
    documented = [
        (c.start, c.end)
        for c in candidates
        if c.type in _EXAMPLE_TYPES and _documented(text[c.start : c.end], c.type)
    ]
    spans = sorted([*_public_spans(scan), *documented])
    if not spans:
        return list(candidates)
    starts = [start for start, _end in spans]
    return [c for c in candidates if not _inside(spans, starts, c)]
