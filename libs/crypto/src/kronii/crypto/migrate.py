"""Moving a key file's master keys into the Secret Service (`kronii keys migrate`).

The key file is removed only after a fresh connection to the keyring reads every key back equal, and
its lock is held throughout so a rotation cannot slip a version in between. The keys keep their
provider name ("keyfile") in the keyring, so every content key they wrapped still unwraps.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from kronii.crypto.errors import MasterKeyUnavailableError
from kronii.crypto.keyfile import KEY_FILE_NAME, KeyFileProvider
from kronii.crypto.secretservice import DEFAULT_TIMEOUT_S, SecretServiceProvider

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Migration:
    """Where the key file was and which of its versions the keyring now keeps (none: no file)."""

    key_file: Path
    versions: tuple[int, ...]


def migrate_key_file(
    data_dir: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S, application: str = "kronii"
) -> Migration:
    """Move the key file in ``data_dir`` into the Secret Service's default keyring.

    Raises :class:`SecretServiceNotReadyError` when the keyring is missing, locked, would prompt or
    does not answer (the key file is then untouched), :class:`MasterKeyUnavailableError` when the
    keyring did not keep a key equal to the file's.
    """
    path = Path(data_dir) / KEY_FILE_NAME
    if not path.exists():
        return Migration(path, ())
    keyring = SecretServiceProvider(application=application, timeout_s=timeout_s, create=False)
    try:
        key_file = KeyFileProvider(data_dir)
        with key_file.holding() as keys:
            keyring.adopt(key_file.name, keys)
            _read_back(keys, key_file.name, application, timeout_s)
            key_file.remove()
    finally:
        keyring.close()
    log.info(
        "kronii.crypto: moved master key versions %s from the key file to the Secret Service", sorted(keys)
    )
    return Migration(path, tuple(sorted(keys)))


def _read_back(keys: dict[int, bytes], origin: str, application: str, timeout_s: float) -> None:
    """A second, fresh connection must find every key, byte for byte."""
    again = SecretServiceProvider(application=application, timeout_s=timeout_s, create=False)
    try:
        held = {
            (version, key)
            for reader in again.adopted()
            if reader.name == origin
            for version, key in reader.keys
        }
    finally:
        again.close()
    missing = sorted(v for v, k in keys.items() if (v, k) not in held)
    if missing:
        raise MasterKeyUnavailableError(
            f"the Secret Service's copy of master key versions {missing} does not read back equal; "
            "the key file is kept"
        )
