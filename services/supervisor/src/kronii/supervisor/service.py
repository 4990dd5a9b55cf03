"""The supervisor's service spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.runtime.spec import ServiceSpec
from kronii.supervisor.settings import SupervisorSettings

__all__ = ["SERVICE"]

SERVICE = ServiceSpec(
    name="supervisor",
    settings_cls=SupervisorSettings,
    app="kronii.supervisor.app:SupervisorApp",
    order=5,
    description="PTY supervisor: wakes agents in tmux panes, falls back to resume or spawn",
    leftovers="kronii.supervisor.adapters.agent_sessions:AgentSessions.from_settings",
)
