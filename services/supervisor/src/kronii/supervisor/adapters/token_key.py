"""The supervisor's token secret: configured, or kept in a file of its own (0600)."""

from __future__ import annotations

import os
import secrets

from kronii.supervisor.settings import SupervisorSettings

__all__ = ["load_or_create_secret"]


def load_or_create_secret(settings: SupervisorSettings) -> bytes:
    """The token secret: configured, or kept in <data_dir>/supervisor/token.key (0600)."""
    if settings.token_secret is not None:
        return settings.token_secret.get_secret_value().encode()
    path = settings.token_key_file
    if path.exists():
        return path.read_bytes().strip()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    value = secrets.token_hex(32).encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(value)
    return value
