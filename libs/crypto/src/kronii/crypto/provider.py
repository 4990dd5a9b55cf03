"""The master key provider interface and the shared logic of providers that hold raw master keys."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from kronii.crypto.errors import DecryptionError
from kronii.crypto.model import WrappedKey

CONTENT_KEY_BYTES = 32
MASTER_KEY_BYTES = 32
NONCE_BYTES = 12
TAG_BYTES = 16


class MasterKeyProvider(ABC):
    """Wraps and unwraps content keys under a versioned master key.

    ``rotate`` makes a new version current; every older version still unwraps.
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """A stable identifier written into every :class:`WrappedKey` this provider makes."""

    @property
    @abstractmethod
    def current_version(self) -> int:
        """The master key version that ``wrap`` uses."""

    @abstractmethod
    def wrap(self, *, key: bytes) -> WrappedKey:
        """Encrypt a content key under the current master key version."""

    @abstractmethod
    def unwrap(self, *, wrapped: WrappedKey) -> bytes:
        """Decrypt a content key; raises :class:`DecryptionError` when it does not authenticate."""

    @abstractmethod
    def rotate(self) -> int:
        """Create a new master key version, make it current and return its number."""

    def rewrap(self, *, wrapped: WrappedKey) -> WrappedKey:
        """Re-encrypt a content key under the current version. Providers may do it without exposing it."""
        return self.wrap(key=self.unwrap(wrapped=wrapped))

    def _check_provider(self, wrapped: WrappedKey) -> None:
        if wrapped.provider != self.name:
            raise DecryptionError(
                f"the content key was wrapped by the {wrapped.provider!r} provider, not by {self.name!r}"
            )


def _wrap_aad(provider: str, version: int) -> bytes:
    return f"kronii.crypto/wrap/v1|{provider}|{version}".encode()


class LocalMasterKeyProvider(MasterKeyProvider):
    """A provider that holds versioned raw 256-bit master keys and wraps with AES-256-GCM locally.

    The wrapped blob is nonce || ciphertext || tag; the provider name and version are bound as
    associated data, so a blob relabelled with another version fails to unwrap.
    """

    @abstractmethod
    def _master_key(self, version: int) -> bytes | None:
        """The raw master key of ``version``, or None when that version does not exist."""

    def wrap(self, *, key: bytes) -> WrappedKey:
        if len(key) != CONTENT_KEY_BYTES:
            raise ValueError("a content key must be 32 bytes")
        version = self.current_version
        master = self._master_key(version)
        if master is None:  # pragma: no cover - current_version always names a stored key
            raise DecryptionError("the current master key version is missing")
        nonce = os.urandom(NONCE_BYTES)
        blob = nonce + AESGCM(master).encrypt(nonce, key, _wrap_aad(self.name, version))
        return WrappedKey(provider=self.name, key_version=version, blob=blob)

    def unwrap(self, *, wrapped: WrappedKey) -> bytes:
        self._check_provider(wrapped)
        master = self._master_key(wrapped.key_version)
        if master is None:
            raise DecryptionError(f"master key version {wrapped.key_version} does not exist")
        if len(wrapped.blob) != NONCE_BYTES + CONTENT_KEY_BYTES + TAG_BYTES:
            raise DecryptionError("the wrapped content key has the wrong length")
        nonce, body = wrapped.blob[:NONCE_BYTES], wrapped.blob[NONCE_BYTES:]
        try:
            return AESGCM(master).decrypt(nonce, body, _wrap_aad(self.name, wrapped.key_version))
        except InvalidTag:
            raise DecryptionError(
                f"the wrapped content key failed authentication under master key version {wrapped.key_version}"
            ) from None


class StaticKeys(MasterKeyProvider):
    """Raw master keys held under another provider's name, for unwrapping only: the keys a key file
    had, kept now in the Secret Service by `kronii keys migrate`.

    Two keys may share a version (two key files over time each began at version 1); the one that
    authenticates the wrapped key is the right one, so each is tried.
    """

    def __init__(self, name: str, keys: list[tuple[int, bytes]]) -> None:
        if not keys:
            raise ValueError("StaticKeys needs at least one key")
        self._name = name
        self._keys = list(keys)

    @property
    def name(self) -> str:
        return self._name

    @property
    def keys(self) -> list[tuple[int, bytes]]:
        return list(self._keys)

    @property
    def current_version(self) -> int:
        return max(version for version, _ in self._keys)

    def wrap(self, *, key: bytes) -> WrappedKey:
        raise DecryptionError(f"the {self._name!r} master keys kept here only unwrap")

    def rotate(self) -> int:
        raise DecryptionError(f"the {self._name!r} master keys kept here only unwrap")

    def unwrap(self, *, wrapped: WrappedKey) -> bytes:
        self._check_provider(wrapped)
        if len(wrapped.blob) != NONCE_BYTES + CONTENT_KEY_BYTES + TAG_BYTES:
            raise DecryptionError("the wrapped content key has the wrong length")
        nonce, body = wrapped.blob[:NONCE_BYTES], wrapped.blob[NONCE_BYTES:]
        aad = _wrap_aad(self._name, wrapped.key_version)
        for version, master in self._keys:
            if version != wrapped.key_version:
                continue
            try:
                return AESGCM(master).decrypt(nonce, body, aad)
            except InvalidTag:
                continue
        raise DecryptionError(
            f"no {self._name!r} master key of version {wrapped.key_version} authenticates this content key"
        )


class ProviderChain(MasterKeyProvider):
    """Wraps and rotates with ``primary``; unwraps with whichever provider carries the wrapped key's
    provider name, the primary first, then ``readers`` in order, until one authenticates it.

    How content keys stay readable when the master key moves between stores: a key file kept while
    the keyring was locked, the keyring's own keys, the key file's keys migrated into the keyring.
    """

    def __init__(self, primary: MasterKeyProvider, readers: list[MasterKeyProvider]) -> None:
        self._primary = primary
        self._readers = list(readers)

    @property
    def primary(self) -> MasterKeyProvider:
        return self._primary

    @property
    def readers(self) -> list[MasterKeyProvider]:
        return list(self._readers)

    @property
    def name(self) -> str:
        return self._primary.name

    @property
    def current_version(self) -> int:
        return self._primary.current_version

    def wrap(self, *, key: bytes) -> WrappedKey:
        return self._primary.wrap(key=key)

    def rotate(self) -> int:
        return self._primary.rotate()

    def unwrap(self, *, wrapped: WrappedKey) -> bytes:
        candidates = [p for p in (self._primary, *self._readers) if p.name == wrapped.provider]
        if not candidates:
            raise DecryptionError(
                f"the content key was wrapped by the {wrapped.provider!r} provider, which is not available now"
            )
        failure: DecryptionError | None = None
        for provider in candidates:
            try:
                return provider.unwrap(wrapped=wrapped)
            except DecryptionError as error:
                failure = error
        assert failure is not None
        raise failure
