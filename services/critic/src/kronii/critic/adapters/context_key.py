"""The key that numbers the critic's redaction placeholders ([EMAIL_1] stays [EMAIL_1] across
restarts, so similar records stay similar): 32 random bytes made on first start, kept 0600."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["context_key"]


def context_key(path: Path) -> bytes:
    try:
        key = path.read_bytes()
        if len(key) >= 32:
            return key
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(key)
    return key
