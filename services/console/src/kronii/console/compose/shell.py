"""The Shell page's use case, made once at start: the critic's search over HTTP."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import tzinfo

from kronii.console.adapters.critic_api import CriticApi
from kronii.console.adapters.timezone import person_timezone
from kronii.console.deps import ConsoleDeps
from kronii.console.usecases.search_shell import SearchShell

__all__ = ["ShellState", "build"]


@dataclass(frozen=True)
class ShellState:
    search: SearchShell
    zone: tzinfo


async def build(deps: ConsoleDeps) -> ShellState:
    return ShellState(SearchShell(CriticApi(deps.services)), person_timezone(deps.settings.timezone))
