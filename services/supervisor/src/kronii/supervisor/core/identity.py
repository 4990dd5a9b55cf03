"""Proof that a server is this host's supervisor, before `kronii agents` sends it a token minted
from the local secret.

The client sends a fresh nonce to the unauthenticated `GET /v1/identity?nonce=<hex>`; the
supervisor answers HMAC-SHA256(key, b"kronii-supervisor-identity:" + nonce) in hex, where key is
HMAC-SHA256(token secret, b"identity"): a key derived for this one purpose, so an answer says
nothing usable about the token secret itself. The client computes the same from its own copy of
the secret and compares. Pure: both sides pass the secret in."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

__all__ = [
    "IDENTITY_CONTEXT",
    "NONCE_MAX_CHARS",
    "NONCE_MIN_CHARS",
    "check_nonce",
    "identity_key",
    "identity_proof",
    "new_nonce",
    "proof_matches",
]

IDENTITY_CONTEXT = b"kronii-supervisor-identity:"
NONCE_MIN_CHARS = 16
NONCE_MAX_CHARS = 128
_NONCE = re.compile(rf"[0-9a-fA-F]{{{NONCE_MIN_CHARS},{NONCE_MAX_CHARS}}}")


def check_nonce(nonce: str) -> str:
    """``nonce`` when it is 16 to 128 hex digits; else ValueError with a sentence."""
    if not isinstance(nonce, str) or not _NONCE.fullmatch(nonce):
        raise ValueError(f"nonce must be {NONCE_MIN_CHARS} to {NONCE_MAX_CHARS} hex digits (0-9, a-f)")
    return nonce


def new_nonce() -> str:
    """A fresh nonce: 32 hex digits from the system's random source."""
    return secrets.token_hex(16)


def identity_key(secret: bytes) -> bytes:
    """The key the proofs use, derived from the token secret; never the secret itself."""
    return hmac.new(secret, b"identity", hashlib.sha256).digest()


def identity_proof(secret: bytes, nonce: str, port: int = 0) -> str:
    """hex HMAC-SHA256(identity_key(secret), IDENTITY_CONTEXT + nonce [+ ":" + port]). Raises
    ValueError for a nonce that is not 16 to 128 hex digits.

    The supervisor signs the port it listens on and the client checks the port it dialled: a
    server on another port that relays the nonce to the real supervisor gets a proof for the
    wrong port."""
    message = IDENTITY_CONTEXT + check_nonce(nonce).encode("ascii")
    if port:
        message += f":{port}".encode("ascii")
    return hmac.new(identity_key(secret), message, hashlib.sha256).hexdigest()


def proof_matches(secret: bytes, nonce: str, proof: object, port: int = 0) -> bool:
    """Whether ``proof`` (as a server answered it, any JSON value) is the proof for ``nonce`` from
    a supervisor listening on ``port``."""
    if not isinstance(proof, str) or not proof.isascii():
        return False
    return hmac.compare_digest(identity_proof(secret, nonce, port), proof.lower())
