"""The Agents page's use cases, made once at start: the supervisor's API with the console's own token
(made from this host's supervisor secret, looked for until the supervisor has written it)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from kronii.console.adapters.service_clients import service_url
from kronii.console.adapters.supervisor_api import SupervisorApi, supervisor_secret
from kronii.console.deps import ConsoleDeps
from kronii.console.usecases.show_agents import ShowAgents
from kronii.console.usecases.steer_agent import SteerAgent

__all__ = ["AgentsState", "build"]


@dataclass(frozen=True)
class AgentsState:
    show: ShowAgents
    steer: SteerAgent


async def build(deps: ConsoleDeps) -> AgentsState:
    supervisor = SupervisorApi(
        service_url("supervisor", deps.settings.service_urls),
        lambda: supervisor_secret(deps.settings.data_dir),
        timeout_secs=deps.settings.service_timeout_secs,
    )
    return AgentsState(
        ShowAgents(supervisor), SteerAgent(supervisor, deps.record, lambda: secrets.token_hex(6))
    )
