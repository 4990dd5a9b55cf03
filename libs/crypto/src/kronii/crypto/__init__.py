"""kronii.crypto: envelope encryption for captured images.

Each object is sealed with its own AES-256-GCM content key; the content key is wrapped by a master
key from a :class:`MasterKeyProvider` (Vault transit, the Secret Service, or a key file).
"""

from typing import TYPE_CHECKING, Any

from kronii.crypto.envelope import open_sealed, rewrap, seal
from kronii.crypto.errors import (
    CryptoError,
    DecryptionError,
    KeyFileError,
    MasterKeyUnavailableError,
    ProviderConfigError,
    SecretServiceNotReadyError,
)
from kronii.crypto.keyfile import KeyFileProvider
from kronii.crypto.migrate import Migration, migrate_key_file
from kronii.crypto.model import SealedObject, WrappedKey
from kronii.crypto.provider import LocalMasterKeyProvider, MasterKeyProvider, ProviderChain, StaticKeys
from kronii.crypto.secretservice import SecretServiceProvider
from kronii.crypto.select import MasterKeyChoice, choose_master_key, select_provider

if TYPE_CHECKING:
    from kronii.crypto.vault import VaultTransitProvider


def __getattr__(name: str) -> Any:
    # VaultTransitProvider is imported when asked for: hvac and requests stay out of a process that
    # does not use Vault.
    if name == "VaultTransitProvider":
        from kronii.crypto.vault import VaultTransitProvider

        return VaultTransitProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CryptoError",
    "DecryptionError",
    "KeyFileError",
    "KeyFileProvider",
    "LocalMasterKeyProvider",
    "MasterKeyChoice",
    "MasterKeyProvider",
    "MasterKeyUnavailableError",
    "Migration",
    "ProviderChain",
    "ProviderConfigError",
    "SealedObject",
    "SecretServiceNotReadyError",
    "SecretServiceProvider",
    "StaticKeys",
    "VaultTransitProvider",
    "WrappedKey",
    "choose_master_key",
    "migrate_key_file",
    "open_sealed",
    "rewrap",
    "seal",
    "select_provider",
]
