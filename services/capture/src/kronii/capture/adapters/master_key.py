"""Which master key wraps the vault's content keys: Vault's transit engine, the Secret Service when it
answers without a prompt, or a key file of its own. The service and `kronii keys` must both pick it
the same way, so both ask here (the rule is kronii.crypto.select's)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kronii.crypto import MasterKeyChoice, MasterKeyProvider

__all__ = ["KEY_FILE_LABEL", "key_directory", "master_key_choice", "master_key_provider"]

# How log lines name the key file: relative to the data directory (no log line carries a full path).
KEY_FILE_LABEL = "capture/keys/master.key under the data directory"


def key_directory(data_dir: Path) -> Path:
    """Where the master key file lives when neither Vault nor the Secret Service is available: a 0700
    directory of its own under the data directory (the data directory itself may have to be
    traversable by the embedded PostgreSQL's user, so it cannot hold the key)."""
    return data_dir / "capture" / "keys"


def master_key_choice(
    *,
    data_dir: Path,
    vault_url: str | None = None,
    vault_token: str | None = None,
    vault_key_name: str = "kronii-capture",
    use_secret_service: bool = True,
    secret_service_timeout_s: float = 5.0,
) -> MasterKeyChoice:
    """The capture service's master key store, and the sentence that names it."""
    # Loaded here, not at the top: `kronii keys --help` imports this module and needs no crypto.
    from kronii.crypto import choose_master_key

    return choose_master_key(
        data_dir=key_directory(data_dir),
        vault_url=vault_url,
        vault_token=vault_token,
        vault_key_name=vault_key_name,
        use_secret_service=use_secret_service,
        secret_service_timeout_s=secret_service_timeout_s,
        label=KEY_FILE_LABEL,
    )


def master_key_provider(
    *,
    data_dir: Path,
    vault_url: str | None = None,
    vault_token: str | None = None,
    vault_key_name: str = "kronii-capture",
    use_secret_service: bool = True,
    secret_service_timeout_s: float = 5.0,
) -> MasterKeyProvider:
    """The capture service's master key provider."""
    return master_key_choice(
        data_dir=data_dir,
        vault_url=vault_url,
        vault_token=vault_token,
        vault_key_name=vault_key_name,
        use_secret_service=use_secret_service,
        secret_service_timeout_s=secret_service_timeout_s,
    ).provider
