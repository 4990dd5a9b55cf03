"""The console's service spec, discovered by `kronii up` through the `kronii.services` entry point."""

from __future__ import annotations

from kronii.console.settings import ConsoleSettings
from kronii.runtime.spec import ServiceSpec

__all__ = ["SERVICE"]

# Redis keeps the login links and sessions, PostgreSQL the audit rows of every login and state change,
# NATS carries the live updates; the rest the console asks of the other services over HTTP.
SERVICE = ServiceSpec(
    name="console",
    settings_cls=ConsoleSettings,
    app="kronii.console.app:ConsoleApp",
    order=9,
    description="the person's local web page: activity, agents, captures, decisions, shell, control, privacy",
)
