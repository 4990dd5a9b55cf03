"""Value types of envelope encryption."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WrappedKey:
    """A content key encrypted under one version of a provider's master key."""

    provider: str
    key_version: int
    blob: bytes


@dataclass(frozen=True, slots=True)
class SealedObject:
    """An encrypted object: ``ciphertext`` is nonce || ciphertext || tag; ``wrapped_key`` opens it."""

    ciphertext: bytes
    wrapped_key: WrappedKey
