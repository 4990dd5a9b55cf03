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


class KeyFileError(CryptoError):
    """The master key file or its directory is unsafe (permissions, owner, type) or corrupt."""


class ProviderConfigError(CryptoError):
    """The master key provider settings are incomplete or contradictory."""
