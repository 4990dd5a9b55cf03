"""Typed errors of kronii.crypto.

Every message here may cross an API: it never carries a key, a plaintext, a token, a URL or a
filesystem path. Paths and server details go only to local log lines.
"""

from __future__ import annotations


class CryptoError(Exception):
    """Base of every kronii.crypto error."""


class DecryptionError(CryptoError):
    """An object or a wrapped content key failed to authenticate or could not be unwrapped."""


class MasterKeyUnavailableError(CryptoError):
    """The master key provider cannot be reached or refused to serve the key."""


class SecretServiceNotReadyError(MasterKeyUnavailableError):
    """The Secret Service cannot serve the master key without a person answering a prompt (no default
    keyring, a locked one, a call that asks for a prompt) or in time (a call past its timeout).

    kronii never opens the prompt: the caller falls back to the key file, or says so and stops.
    ``unreachable`` tells "nothing answers" (no bus, no service, a timeout) from "it answers, but
    would need a person" (missing or locked keyring, a prompt).
    """

    def __init__(self, reason: str, *, unreachable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unreachable = unreachable


class KeyFileError(CryptoError, ValueError):
    """A key file cannot be used: the master key file or its directory is unsafe (permissions, owner,
    type) or corrupt, or an agent's or client's Ed25519 key file is missing, unreadable or not such a
    key. `str()` is the sentence to show. The one error for every key file kronii reads."""


class ProviderConfigError(CryptoError):
    """The master key provider settings are incomplete or contradictory."""
