"""New wake-up ids."""

from __future__ import annotations

import uuid

__all__ = ["new_wakeup_id"]


def new_wakeup_id() -> str:
    return uuid.uuid4().hex
