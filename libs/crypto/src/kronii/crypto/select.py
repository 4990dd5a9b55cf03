"""Choosing the master key provider: Vault transit, else the Secret Service when it serves the key
without a prompt, else a key file.

The rule, in order:

1. Vault transit when it is configured (a URL without a token is an error, not a fallback).
2. A key file that exists stays the store: images sealed under it must stay readable, and only
   `kronii keys migrate` moves its keys into the keyring. When the keyring is unlocked, its own keys
   still unwrap what they wrapped before.
3. The Secret Service when its default collection exists and is unlocked and every call answers in
   time without a prompt object: kronii never opens a prompt (a first-run "choose a password for the
   new keyring" dialog would wait on a person nobody told).
4. Else a new key file, with one warning line that says where it is and how to move it later.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from kronii.crypto.errors import ProviderConfigError, SecretServiceNotReadyError
from kronii.crypto.keyfile import KEY_FILE_NAME, KeyFileProvider
from kronii.crypto.provider import MasterKeyProvider, ProviderChain
from kronii.crypto.secretservice import DEFAULT_TIMEOUT_S, SecretServiceProvider

log = logging.getLogger(__name__)

MIGRATE_HINT = "`kronii keys migrate` moves it there"


@dataclass(frozen=True)
class MasterKeyChoice:
    """The provider, which store holds the current master key, and why (for the sentence that says so).

    Log lines name the key file as ``label`` (relative: no log line carries an absolute path); a
    command's own output may name ``key_file`` in full through :meth:`describe`.
    """

    provider: MasterKeyProvider
    store: str  # "vault", "secret-service" or "keyfile"
    what: str = ""  # the store in words, when not a key file
    note: str = ""  # why this store, and what to do about it
    key_file: Path | None = None
    label: str = KEY_FILE_NAME
    fallback: bool = False  # the Secret Service was wanted, the key file is used

    @property
    def line(self) -> str:
        """One sentence for the log: "master key: kept in ... (why)"."""
        return self.describe(self.label)

    def describe(self, where: str) -> str:
        """The sentence with the key file named as ``where``."""
        kept = where if self.store == "keyfile" else self.what
        return f"master key: kept in {kept}" + (f" ({self.note})" if self.note else "")


def choose_master_key(
    *,
    data_dir: Path,
    vault_url: str | None = None,
    vault_token: str | None = None,
    vault_key_name: str = "kronii",
    vault_mount: str = "transit",
    use_secret_service: bool = True,
    secret_service_timeout_s: float = DEFAULT_TIMEOUT_S,
    label: str = KEY_FILE_NAME,
) -> MasterKeyChoice:
    """The master key store for these settings (module docstring), never prompting anyone; ``label``
    names the key file in the sentence (say "capture/keys/master.key under the data directory")."""
    if vault_url or vault_token:
        if not (vault_url and vault_token):
            raise ProviderConfigError("Vault transit is configured but its address or token is missing")
        # Imported only here: hvac and requests (~3 MB) stay out of a process that does not use Vault.
        from kronii.crypto.vault import VaultTransitProvider

        vault = VaultTransitProvider(vault_url, vault_token, vault_key_name, mount=vault_mount)
        return MasterKeyChoice(vault, "vault", what=f"Vault transit (key {vault_key_name})")
    key_file = Path(data_dir) / KEY_FILE_NAME
    if not use_secret_service:
        plain = KeyFileProvider(data_dir)
        return MasterKeyChoice(
            plain, "keyfile", note="use_secret_service is off", key_file=key_file, label=label
        )
    reason = SecretServiceProvider.probe(timeout_s=secret_service_timeout_s)
    if key_file.exists():
        return _existing_key_file(data_dir, reason, secret_service_timeout_s, label)
    if reason is None:
        try:
            keyring = SecretServiceProvider(timeout_s=secret_service_timeout_s)
        except SecretServiceNotReadyError as error:
            reason = error.reason
        else:
            adopted = keyring.adopted()
            chain = ProviderChain(keyring, list(adopted)) if adopted else keyring
            return MasterKeyChoice(chain, "secret-service", what="the Secret Service's default keyring")
    return MasterKeyChoice(
        KeyFileProvider(data_dir),
        "keyfile",
        note=f"{reason}; once it has an unlocked default keyring, {MIGRATE_HINT}",
        key_file=key_file,
        label=label,
        fallback=True,
    )


def _existing_key_file(data_dir: Path, reason: str | None, timeout_s: float, label: str) -> MasterKeyChoice:
    """The key file stays the store; an unlocked keyring's keys still unwrap what they wrapped."""
    key_file = KeyFileProvider(data_dir)
    readers: list[MasterKeyProvider] = []
    if reason is None:
        try:
            keyring = SecretServiceProvider(timeout_s=timeout_s, create=False)
        except SecretServiceNotReadyError as error:
            reason = error.reason
        else:
            readers = ([keyring] if keyring.has_keys else []) + list(keyring.adopted())
            if not readers:
                keyring.close()
    if reason is None:
        note = f"the Secret Service's default keyring is unlocked: {MIGRATE_HINT}"
    else:
        note = f"{reason}; once it has an unlocked default keyring, {MIGRATE_HINT}"
    provider: MasterKeyProvider = ProviderChain(key_file, readers) if readers else key_file
    return MasterKeyChoice(provider, "keyfile", note=note, key_file=key_file.path, label=label, fallback=True)


def select_provider(
    *,
    data_dir: Path,
    vault_url: str | None = None,
    vault_token: str | None = None,
    vault_key_name: str = "kronii",
    vault_mount: str = "transit",
    use_secret_service: bool = True,
    secret_service_timeout_s: float = DEFAULT_TIMEOUT_S,
    label: str = KEY_FILE_NAME,
) -> MasterKeyProvider:
    """The provider of :func:`choose_master_key`, its sentence logged (a warning for a key file)."""
    choice = choose_master_key(
        data_dir=data_dir,
        vault_url=vault_url,
        vault_token=vault_token,
        vault_key_name=vault_key_name,
        vault_mount=vault_mount,
        use_secret_service=use_secret_service,
        secret_service_timeout_s=secret_service_timeout_s,
        label=label,
    )
    log.log(logging.WARNING if choice.store == "keyfile" else logging.INFO, "kronii.crypto: %s", choice.line)
    return choice.provider
