"""Identifiers a person types on a command line: URL-safe, and never starting with `-`, which
argparse (and most shells' tools) would read as an option."""

from __future__ import annotations

import secrets

__all__ = ["new_id"]


def new_id(nbytes: int) -> str:
    while True:
        candidate = secrets.token_urlsafe(nbytes)
        if not candidate.startswith("-"):
            return candidate
