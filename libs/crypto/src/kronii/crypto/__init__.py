"""kronii.crypto: envelope encryption for captured images.

Each object is sealed with its own AES-256-GCM content key; the content key is wrapped by a master
key from a :class:`MasterKeyProvider` (Vault transit, the Secret Service, or a key file).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from kronii.crypto.vault import VaultTransitProvider

# Every name is imported when first asked for (PEP 562): a process that only needs the errors (a
# command reading a key file) does not load `cryptography`, nor hvac and requests without Vault.
_WHERE = {
    "open_sealed": "envelope",
    "rewrap": "envelope",
    "seal": "envelope",
    "CryptoError": "errors",
    "DecryptionError": "errors",
    "KeyFileError": "errors",
    "MasterKeyUnavailableError": "errors",
    "ProviderConfigError": "errors",
    "SecretServiceNotReadyError": "errors",
    "KeyFileProvider": "keyfile",
    "Migration": "migrate",
    "migrate_key_file": "migrate",
    "SealedObject": "model",
    "WrappedKey": "model",
    "LocalMasterKeyProvider": "provider",
    "MasterKeyProvider": "provider",
    "ProviderChain": "provider",
    "StaticKeys": "provider",
    "SecretServiceProvider": "secretservice",
    "MasterKeyChoice": "select",
    "choose_master_key": "select",
    "select_provider": "select",
    "VaultTransitProvider": "vault",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"kronii.crypto.{module}"), name)
    globals()[name] = value
    return value


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
