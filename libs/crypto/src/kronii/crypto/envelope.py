"""Envelope encryption: every object gets its own AES-256-GCM content key, wrapped by a master key."""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from kronii.crypto.errors import DecryptionError
from kronii.crypto.model import SealedObject, WrappedKey
from kronii.crypto.provider import CONTENT_KEY_BYTES, NONCE_BYTES, TAG_BYTES, MasterKeyProvider


def seal(plaintext: bytes, *, master: MasterKeyProvider, associated_data: bytes) -> SealedObject:
    """Encrypt ``plaintext`` under a fresh content key and wrap that key with ``master``.

    ``associated_data`` must identify the object (its id): the same bytes are needed to open it, so a
    ciphertext moved to another id does not open.
    """
    content_key = AESGCM.generate_key(bit_length=CONTENT_KEY_BYTES * 8)
    nonce = os.urandom(NONCE_BYTES)
    ciphertext = nonce + AESGCM(content_key).encrypt(nonce, plaintext, associated_data)
    return SealedObject(ciphertext=ciphertext, wrapped_key=master.wrap(key=content_key))


def open_sealed(sealed: SealedObject, *, master: MasterKeyProvider, associated_data: bytes) -> bytes:
    """Decrypt a :class:`SealedObject`; raises :class:`DecryptionError` on any tampering or mismatch."""
    if len(sealed.ciphertext) < NONCE_BYTES + TAG_BYTES:
        raise DecryptionError("the ciphertext is too short to be a sealed object")
    content_key = master.unwrap(wrapped=sealed.wrapped_key)
    if len(content_key) != CONTENT_KEY_BYTES:
        raise DecryptionError("the unwrapped content key has the wrong length")
    nonce, body = sealed.ciphertext[:NONCE_BYTES], sealed.ciphertext[NONCE_BYTES:]
    try:
        return AESGCM(content_key).decrypt(nonce, body, associated_data)
    except InvalidTag:
        raise DecryptionError(
            "the object failed authentication: it was altered or belongs to another object id"
        ) from None


def rewrap(wrapped: WrappedKey, master: MasterKeyProvider) -> WrappedKey:
    """Re-wrap a content key under ``master``'s current version; the object's ciphertext is untouched."""
    return master.rewrap(wrapped=wrapped)
