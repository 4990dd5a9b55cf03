"""The plugin registry's records (seed 000, PluginRegistry: app_id, installed, enabled,
capabilities{snapshot, events, summarize, redact_hint}, risk_score) and what a plugin says of
itself when it registers."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Capabilities", "PluginRecord", "PluginRegistration"]


@dataclass(frozen=True, slots=True)
class Capabilities:
    snapshot: bool = False
    events: bool = False
    summarize: bool = False
    redact_hint: bool = False


@dataclass(frozen=True, slots=True)
class PluginRegistration:
    """A plugin announcing itself (kronii.plugin.register, or the pipeline's own screencapture)."""

    app_id: str
    display_name: str = ""
    version: str = ""
    capabilities: Capabilities = Capabilities()
    risk_score: float = 0.0


@dataclass(frozen=True, slots=True)
class PluginRecord:
    app_id: str
    display_name: str
    version: str
    installed: bool
    enabled: bool
    capabilities: Capabilities
    risk_score: float
    registered_at: float
    updated_at: float
    last_seen_at: float | None

    @property
    def usable(self) -> bool:
        """What the router may pull from: installed and enabled."""
        return self.installed and self.enabled
