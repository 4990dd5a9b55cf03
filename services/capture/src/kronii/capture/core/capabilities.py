"""Capability bits of seed 000's "Authorization and least privilege"."""

from __future__ import annotations

import enum
from collections.abc import Iterable


class Capability(enum.Flag):
    NONE = 0
    READ_REDACTED = enum.auto()
    LIST_META = enum.auto()
    REQUEST_CAPTURE = enum.auto()
    # Sealed bytes of raw frames only, never plaintext; off unless the operator enables it.
    READ_RAW_ENCRYPTED = enum.auto()


# An unregistered local process (Unix socket, no agent session) may ask for captures; reading
# screenshots or their metadata needs a person's proof of presence, which opens a short window
# with HUMAN_WINDOW only (seed 000: kronictl is read-only, REQUEST_CAPTURE typically disallowed).
LOCAL_DEFAULT = Capability.REQUEST_CAPTURE
HUMAN_WINDOW = Capability.READ_REDACTED | Capability.LIST_META
AGENT_DEFAULT = Capability.READ_REDACTED | Capability.REQUEST_CAPTURE

_SINGLE: tuple[Capability, ...] = (
    Capability.READ_REDACTED,
    Capability.LIST_META,
    Capability.REQUEST_CAPTURE,
    Capability.READ_RAW_ENCRYPTED,
)
_BY_NAME = {cap.name: cap for cap in _SINGLE if cap.name is not None}
# Every capability's name, in the order they are stored and shown (kronii.edge.client_sessions keeps
# agents' capabilities as these names).
CAPABILITY_NAMES: tuple[str, ...] = tuple(_BY_NAME)


def parse_capabilities(names: Iterable[str]) -> Capability:
    """Names (any case, surrounding blanks ignored) to flags; an unknown name is a ValueError."""
    result = Capability.NONE
    for raw in names:
        name = raw.strip().upper()
        cap = _BY_NAME.get(name)
        if cap is None:
            known = ", ".join(_BY_NAME)
            raise ValueError(f"unknown capability {raw!r}; known capabilities are {known}.")
        result |= cap
    return result


def names(cap: Capability) -> list[str]:
    """The single capabilities in `cap`, in declaration order (stable for storage and display)."""
    return [name for name, single in _BY_NAME.items() if single in cap]
