"""An agent's Ed25519 private key from a file only its owner can read: 32 raw bytes, PEM (PKCS#8) or
OpenSSH without a passphrase. A key other users can read is refused: anyone who can read it can act as
the agent. Shared by the broker's agent client and the vision engine; `cryptography` is imported only
when a key is actually loaded, so importing this module stays cheap (the xdotool shim's client uses it)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from kronii.crypto.errors import KeyFileError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = ["load_private_key", "private_key_from_bytes"]

_RAW_KEY_BYTES = 32


def load_private_key(path: str | os.PathLike[str]) -> Ed25519PrivateKey:
    key_path = Path(path)
    try:
        info = key_path.stat()
        data = key_path.read_bytes()
    except FileNotFoundError:
        raise KeyFileError(f"there is no key file at {key_path}") from None
    except OSError as error:
        raise KeyFileError(f"cannot read the key file {key_path}: {error.strerror}") from None
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        raise KeyFileError(
            f"the key file {key_path} can be read by other users (mode {mode:04o}); run chmod 600 on it"
        )
    return private_key_from_bytes(data)


def private_key_from_bytes(data: bytes) -> Ed25519PrivateKey:
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    if len(data) == _RAW_KEY_BYTES:
        return Ed25519PrivateKey.from_private_bytes(data)
    stripped = data.strip()
    key: object
    try:
        if stripped.startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----"):
            key = serialization.load_ssh_private_key(stripped, password=None)
        elif stripped.startswith(b"-----BEGIN"):
            key = serialization.load_pem_private_key(stripped, password=None)
        else:
            raise KeyFileError("the key file is neither PEM, OpenSSH, nor 32 raw bytes")
    except (ValueError, TypeError, UnsupportedAlgorithm) as error:
        if isinstance(error, KeyFileError):
            raise
        raise KeyFileError(f"the key file cannot be read as a private key: {error}") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"the key is a {type(key).__name__.removeprefix('_')}, not Ed25519")
    return key
