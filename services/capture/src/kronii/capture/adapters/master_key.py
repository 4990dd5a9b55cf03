"""Which master key wraps the vault's content keys: Vault's transit engine, the Secret Service, or a
key file of its own. The service and `kronii keys` must both pick it the same way, so both ask here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kronii.crypto import MasterKeyProvider

__all__ = ["key_directory", "master_key_provider"]


def key_directory(data_dir: Path) -> Path:
    """Where the master key file lives when neither Vault nor the Secret Service is available: a 0700
    directory of its own under the data directory (the data directory itself may have to be
    traversable by the embedded PostgreSQL's user, so it cannot hold the key)."""
    return data_dir / "capture" / "keys"


def master_key_provider(
    *,
    data_dir: Path,
    vault_url: str | None = None,
    vault_token: str | None = None,
    vault_key_name: str = "kronii-capture",
    use_secret_service: bool = True,
) -> MasterKeyProvider:
    """The capture service's master key provider."""
    # Loaded here, not at the top: `kronii keys --help` imports this module and needs no crypto.
    from kronii.crypto import select_provider

    return select_provider(
        data_dir=key_directory(data_dir),
        vault_url=vault_url,
        vault_token=vault_token,
        vault_key_name=vault_key_name,
        use_secret_service=use_secret_service,
    )
