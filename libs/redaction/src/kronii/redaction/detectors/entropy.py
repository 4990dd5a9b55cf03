"""High-entropy strings: random-looking Base64/Base62 tokens, and hex strings next to a secret-ish word.

Entropy is computed only on candidate tokens (runs of Base64/Base64url characters at least 20 long), never
per character over the whole text. detect-secrets uses flat limits (4.5 bits for Base64, 3.0 for hex); a flat
4.5 misses every random token shorter than about 30 characters, since Shannon entropy is bounded by
log2(length). The floor here follows the entropy that random Base64 of each length actually reaches (about
its first percentile), and structural filters remove what random text does not look like: identifiers made of
words, paths, UUIDs, and hashes in lock files and `git` output.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import partial

from .._types import FindingType
from ._base import (
    Candidate,
    CandidatePart,
    ScanText,
    line_bounds,
    line_local_findings,
    reads_as_words,
    shannon_entropy,
)

__all__ = ["EntropyDetector"]

# No look-around: a leading class is scanned fast, and the leftmost match of a greedy run starts at the run's
# first character anyway.
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{20,}={0,2}")
# For the compiled scan: the first twenty characters of a run of token characters (a token starts at its run's
# start), so that a long run is reported once.
_TOKEN_PART = CandidatePart("entropy", (r"(?:^|[^A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{20}",))
_DIGIT, _UPPER, _LOWER = re.compile("[0-9]"), re.compile("[A-Z]"), re.compile("[a-z]")
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CLASS_RUN = re.compile(r"[a-z]+|[A-Z]+|[0-9]+|[^A-Za-z0-9]+")
_SEGMENT_SPLIT = re.compile(r"[_\-/.+]+")
_WORDISH_SEGMENT = re.compile(r"[A-Za-z]{2,}\d{0,3}|\d{1,4}|[A-Za-z]")
_PUBLIC_BEGIN = re.compile(
    r"-----BEGIN (?:CERTIFICATE|[A-Z0-9 ]*PUBLIC KEY|CERTIFICATE REQUEST|X509 CRL)-----"
)
_OBJECT_ID = re.compile(r"([a-z]{2,8})_[A-Za-z0-9]{12,40}")
_SECRET_ID_PREFIXES = frozenset(
    {"sk", "rk", "key", "secret", "token", "tok", "pat", "api", "apikey", "pw", "pwd", "auth"}
)
_HASH_PREFIXES = ("sha1-", "sha256-", "sha384-", "sha512-", "md5-", "sha1:", "sha256:", "sha512:")
# `algorithm:hex` right before a hex token of that algorithm's length is a content digest (OCI image references
# `name@sha256:...`, pip's `--hash=sha256:...`), whatever the line says: an image named `api-server` made the
# word "api" count as secret context.
_DIGEST_LABELS = {"sha1:": 40, "sha256:": 64, "sha384:": 96, "sha512:": 128, "md5:": 32}
# Words that make an encoded JSON document worth masking even when it reads as harmless configuration.
_ENCODED_SECRET_WORDS = ("secret", "token", "key", "pass", "pwd", "auth", "credential", "signature", "bearer")

# (length, minimum bits per character): about the 1st percentile of random Base64 of that length.
_FLOOR_LENGTHS = (20, 24, 28, 32, 40, 48, 64, 86)
_FLOOR_BITS = (3.6, 3.85, 4.0, 4.2, 4.4, 4.6, 4.85, 5.1)
_HEX_MIN_LENGTH, _HEX_MIN_BITS = 32, 3.0

_SECRET_CONTEXT = (
    "secret",
    "token",
    "key",
    "pass",
    "pwd",
    "auth",
    "credential",
    "signature",
    "bearer",
    "api",
)
_HASH_CONTEXT = (
    "sha",
    "md5",
    "hash",
    "digest",
    "checksum",
    "integrity",
    "commit",
    "git ",
    "merge",
    "revision",
    "rev",
    "parent",
    "tree",
    "blob",
    "etag",
    "fingerprint",
    "resolved",
    "h1:",
    "object",
    "image",
    "layer",
    "build-id",
    "build id",
    "nonce",
    "trace",
    "span",
    "request",
    "correlation",
    "uuid",
    "ssh-",  # public keys: `ssh-ed25519 AAAAC3...`
    "certificate",  # kubeconfig's certificate-authority-data: public
)


class EntropyDetector:
    name = "entropy"
    candidate_parts = (_TOKEN_PART,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        public_blocks = _public_blocks(scan.text)
        if public_blocks:  # a certificate spans lines: its tokens are judged on the whole text
            yield from self._tokens(scan, public_blocks)
            return
        # Without one the detector is line-local: a token stays on its line, and the words and labels read
        # before it are taken from its line only (`line_bounds`) or, crossing its start, fail on the newline.
        yield from line_local_findings(scan, partial(self._tokens, public_blocks=public_blocks), _TOKEN_PART)

    def _tokens(self, scan: ScanText, public_blocks: list[tuple[int, int]]) -> Iterator[Candidate]:
        text = scan.text
        # What the token alone says, computed once per distinct token: logs and configs repeat the same ids
        # and keys line after line. Local to this call, so no value outlives it.
        verdicts: dict[str, float] = {}
        for match in _TOKEN.finditer(text):
            token = match.group()
            verdict = verdicts.get(token)
            if verdict is None:
                verdict = verdicts[token] = _token_verdict(token)
            if verdict == 0.0:
                continue
            start, end = match.span()
            if public_blocks and any(
                block_start <= start < block_end for block_start, block_end in public_blocks
            ):
                continue
            if verdict == _NEEDS_CONTEXT:
                core = token.rstrip("=")
                if _is_labelled_digest(text, start, core):
                    continue
                verdict = self._hex_confidence(scan, start, end, core)
            if verdict > 0.0 and not self._in_hash_context(scan, start, end):
                yield Candidate(FindingType.HIGH_ENTROPY, start, end, verdict, self.name)

    def _hex_confidence(self, scan: ScanText, start: int, end: int, core: str) -> float:
        # A bare hex string is far more often a digest (commits, checksums, image ids) than a secret,
        # so it counts only when its line names a secret.
        if len(core) < _HEX_MIN_LENGTH or shannon_entropy(core) < _HEX_MIN_BITS:
            return 0.0
        line_start, _ = line_bounds(scan.text, start, end)
        line = scan.lower[line_start:start]
        return 0.6 if any(word in line for word in _SECRET_CONTEXT) else 0.0

    def _in_hash_context(self, scan: ScanText, start: int, end: int) -> bool:
        line_start, _ = line_bounds(scan.text, start, end)
        before = scan.lower[max(line_start, start - 40) : start]
        if any(word in before for word in _SECRET_CONTEXT):
            return False
        return any(word in before for word in _HASH_CONTEXT)


_NEEDS_CONTEXT = -1.0  # a hex token: whether it counts depends on its line


def _token_verdict(token: str) -> float:
    """The token's confidence from its own characters: 0.0 for none, `_NEEDS_CONTEXT` for hex."""
    if token.startswith(_HASH_PREFIXES) or _UUID.search(token) or _is_object_id(token):
        return 0.0
    core = token.rstrip("=")
    if _HEX.fullmatch(core):
        return _NEEDS_CONTEXT
    if _is_harmless_encoded_json(token) or _is_harmless_encoded_text(token):
        return 0.0
    return _base64_confidence(core)


def _is_labelled_digest(text: str, start: int, core: str) -> bool:
    for label, length in _DIGEST_LABELS.items():
        if len(core) == length and text.startswith(label, start - len(label)):
            return True
    return False


def _is_harmless_encoded_json(token: str) -> bool:
    """Base64 of a JSON document with no secret in it: `echo 'eyJ1c2VyIjoi...' | base64 -d`.

    Random key material never decodes to JSON, so a token that does is encoded data; it is left alone only
    when the document names no secret and holds no random-looking string of its own.
    """
    if not token.startswith(("ey", "ew", "W")):  # how `{"`, `{ `, `{` + newline and `[` encode
        return False
    try:
        decoded = base64.b64decode(token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4))
        text = decoded.decode("utf-8")
        document = json.loads(text)
    except (binascii.Error, ValueError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return False
    if not isinstance(document, dict | list):
        return False
    lowered = text.lower()
    if any(word in lowered for word in _ENCODED_SECRET_WORDS):
        return False
    return not any(_base64_confidence(inner.group().rstrip("=")) > 0.0 for inner in _TOKEN.finditer(text))


def _is_harmless_encoded_text(token: str) -> bool:
    """Base64 of readable text with spaces (a YAML document, a banner, a sentence) and nothing secret in it.

    Key material decodes to bytes, almost never to UTF-8 that reads as text; text with spaces is encoded data.
    `user:password` has no space and stays a finding; a sensitive value inside readable text (an address, a
    URL with a password) is the encoded-value detector's to judge under its key.
    """
    if len(token) < 16:
        return False
    try:
        text = base64.b64decode(token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, ValueError):
        return False
    printable = sum(char.isprintable() or char in "\n\t" for char in text)
    if printable * 10 < len(text) * 9 or not any(char in " \n\t" for char in text.strip()):
        return False
    lowered = text.lower()
    if any(word in lowered for word in _ENCODED_SECRET_WORDS):
        return False
    return not any(_base64_confidence(inner.group().rstrip("=")) > 0.0 for inner in _TOKEN.finditer(text))


def _is_object_id(token: str) -> bool:
    """`evt_3PHz8kLk...`, `cus_Nf0...`, `req_9aB...`: ids with a short type prefix name objects, not secrets.

    Prefixes that say "secret" are kept; vendor secrets with prefixes are the vendor detector's anyway.
    """
    match = _OBJECT_ID.fullmatch(token)
    return match is not None and match.group(1) not in _SECRET_ID_PREFIXES


def _public_blocks(text: str) -> list[tuple[int, int]]:
    """Certificates and public keys: Base64 by the kilobyte, and meant to be shared."""
    if "-----BEGIN " not in text:
        return []
    blocks = []
    for begin in _PUBLIC_BEGIN.finditer(text):
        end = text.find("-----END ", begin.end())
        blocks.append((begin.start(), len(text) if end < 0 else end))
    return blocks


def _base64_confidence(core: str) -> float:
    length = len(core)
    # Random tokens of this length almost always mix digits and both cases; identifiers rarely do.
    if not (_DIGIT.search(core) and _UPPER.search(core) and _LOWER.search(core)):
        return 0.0
    margin = shannon_entropy(core) - _entropy_floor(length)
    if margin < 0.0 or reads_as_words(core) or _is_path_or_identifier(core):
        return 0.0
    return 0.7 if margin > 0.3 else 0.55


def _entropy_floor(length: int) -> float:
    index = bisect_right(_FLOOR_LENGTHS, length) - 1
    if index >= len(_FLOOR_LENGTHS) - 1:
        return _FLOOR_BITS[-1]
    low, high = _FLOOR_LENGTHS[index], _FLOOR_LENGTHS[index + 1]
    return _FLOOR_BITS[index] + (_FLOOR_BITS[index + 1] - _FLOOR_BITS[index]) * (length - low) / (high - low)


def _is_path_or_identifier(core: str) -> bool:
    segments = [segment for segment in _SEGMENT_SPLIT.split(core) if segment]
    if len(segments) >= 3:
        wordish = sum(1 for segment in segments if _WORDISH_SEGMENT.fullmatch(segment))
        if wordish * 4 >= len(segments) * 3:
            return True
    # Random text switches between upper, lower and digits at about two characters in three. Tokens are
    # ASCII (see _TOKEN), so the switches are the runs of one class, less one, counted in C.
    switches = len(_CLASS_RUN.findall(core)) - 1
    return switches * 5 < (len(core) - 1) * 2
