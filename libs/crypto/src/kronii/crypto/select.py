"""Choosing the master key provider: Vault transit, else the Secret Service, else a key file."""

from __future__ import annotations

import logging
from pathlib import Path

from kronii.crypto.errors import ProviderConfigError
from kronii.crypto.keyfile import KEY_FILE_NAME, KeyFileProvider
from kronii.crypto.provider import MasterKeyProvider
from kronii.crypto.secretservice import SecretServiceProvider

log = logging.getLogger(__name__)


def select_provider(
    *,
    data_dir: Path,
    vault_url: str | None = None,
    vault_token: str | None = None,
    vault_key_name: str = "kronii",
    vault_mount: str = "transit",
    use_secret_service: bool = True,
) -> MasterKeyProvider:
    """The master key provider for these settings.

    Vault transit when ``vault_url`` is set (a URL without a token is an error, not a fallback);
    else the Secret Service when one answers; else a 0600 key file in the 0700 ``data_dir``, with a
    warning that the master key is in a file.
    """
    if vault_url or vault_token:
        if not (vault_url and vault_token):
            raise ProviderConfigError("Vault transit is configured but its address or token is missing")
        # Imported only here: hvac and requests (~3 MB) stay out of a process that does not use Vault.
        from kronii.crypto.vault import VaultTransitProvider

        log.info("kronii.crypto: master key provider is Vault transit (key %s)", vault_key_name)
        return VaultTransitProvider(vault_url, vault_token, vault_key_name, mount=vault_mount)
    if use_secret_service and SecretServiceProvider.available():
        log.info("kronii.crypto: master key provider is the Secret Service")
        return SecretServiceProvider()
    provider = KeyFileProvider(data_dir)
    log.warning(
        "kronii.crypto: no Vault and no Secret Service: the master key is stored in a file "
        "(%s under the data directory); anyone who can read that file as this user can decrypt every "
        "captured image",
        KEY_FILE_NAME,
    )
    return provider
