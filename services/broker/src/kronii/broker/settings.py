"""The broker's settings: the shared part plus its ports, display, leases and attachment rules,
each overridable as KRONII_BROKER_<NAME>."""

from __future__ import annotations

import os
from typing import Literal

from kronii.broker.core.machine import Policy
from kronii.foundation.settings import ServiceSettings
from pydantic import Field
from pydantic_settings import SettingsConfigDict

__all__ = ["BrokerSettings"]


class BrokerSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="KRONII_BROKER_", extra="ignore", frozen=True)

    http_port: int = Field(default=8106, ge=0, le=65535)
    grpc_port: int = Field(default=7106, ge=0, le=65535)
    # The X display the broker guards; empty takes $DISPLAY.
    display: str = Field(default_factory=lambda: os.environ.get("DISPLAY", ""), max_length=64)
    # "master": the broker's own XInput2 master device (the X server tells agent input from the
    # person's); "xtest": plain XTEST with injection windows, weaker (see docs/broker.md).
    injection: Literal["master", "xtest"] = "master"
    # Force the session interactive (the seed's --interactive).
    interactive: bool = False
    # A person's physical keyboards and mice present make the session interactive.
    devices_make_interactive: bool = True
    # P3: an agent may take a session nobody watches without a grant.
    allow_headless_acquire: bool = True
    default_lease_secs: int = Field(default=30, ge=1, le=3600)
    max_lease_secs: int = Field(default=300, ge=1, le=86400)
    # After the person takes the desktop back, the mesh leaves it alone this long.
    hold_secs: float = Field(default=30.0, ge=0, le=3600)
    # Agent actions waiting for the X server; beyond this an action is dropped (queue_full).
    queue_size: int = Field(default=256, ge=1, le=100_000)
    # The global STOP_NOW keys (X keysym chords).
    stop_keys: tuple[str, ...] = ("ctrl+alt+Escape", "Pause")
    # Remote viewing with x11vnc on loopback (password file in the data dir); 0 picks a free port.
    remote_view: bool = True
    vnc_port: int = Field(default=5906, ge=0, le=65535)
    vnc_view_only: bool = False
    # After a restart that disconnected viewers (an earlier broker's x11vnc stopped, x11vnc exited
    # under them), how long agents' acquire is refused while the person may reconnect.
    vnc_reconnect_grace_secs: float = Field(default=120.0, ge=0, le=3600)
    # The desktop notification with Wait / Interrupt / Stop while an agent holds a lease.
    notify: bool = True

    def policy(self) -> Policy:
        return Policy(
            allow_headless_acquire=self.allow_headless_acquire,
            max_lease_ms=self.max_lease_secs * 1000,
            hold_ms=int(self.hold_secs * 1000),
        )
