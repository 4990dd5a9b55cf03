"""SupervisorOperations: the one facade the API layers call (api/http_api.py, api/grpc_api.py,
api/bus.py). Each operation takes a command or plain values and the caller's verified claims, and
answers in core values; which use case does the work is decided here and nowhere else."""

from __future__ import annotations

from kronii.desktop.hold import DesktopHold
from kronii.foundation.errors import InvalidArgument
from kronii.supervisor.core.offers import FailureOffer
from kronii.supervisor.core.runtime_calls import (
    Ack,
    AckAnswer,
    Heartbeat,
    PaneLines,
    RegisterRuntime,
    RuntimeQuery,
    RuntimeView,
    Spawned,
    SpawnRuntime,
)
from kronii.supervisor.core.threads import NewMessage, Posted, ThreadView
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.core.trigger import TriggerCommand, TriggerOutcome, TriggerQuery
from kronii.supervisor.usecases.access import Access
from kronii.supervisor.usecases.acknowledge import AckBoard
from kronii.supervisor.usecases.desktop_watch import DesktopWatch
from kronii.supervisor.usecases.manage_runtimes import ManageRuntimes
from kronii.supervisor.usecases.offers import Handed, OfferDesk
from kronii.supervisor.usecases.operate_triggers import OperateTriggers
from kronii.supervisor.usecases.threads import ReadQuery, ThreadDesk, ThreadRead
from kronii.supervisor.usecases.trigger_agent import TriggerAgent

__all__ = ["SupervisorOperations"]


class SupervisorOperations:
    def __init__(
        self,
        *,
        access: Access,
        runtimes: ManageRuntimes,
        triggers: TriggerAgent,
        operate: OperateTriggers,
        acks: AckBoard,
        desktop: DesktopWatch,
        threads: ThreadDesk,
        offers: OfferDesk,
    ) -> None:
        self._access = access
        self._runtimes = runtimes
        self._triggers = triggers
        self._operate = operate
        self._acks = acks
        self._desktop = desktop
        self._threads = threads
        self._offers = offers

    # ---- who calls ------------------------------------------------------------------------------

    def authenticate(self, token: str | None) -> Claims:
        return self._access.authenticate(token)

    def identity_proof(self, nonce: str) -> str:
        return self._access.identity_proof(nonce)

    # ---- triggers ---------------------------------------------------------------------------------

    async def trigger(self, command: TriggerCommand, claims: Claims) -> TriggerOutcome:
        return await self._triggers.trigger(command, claims)

    async def get_trigger(self, trigger_id: str, claims: Claims) -> TriggerOutcome:
        return await self._operate.get_trigger(trigger_id, claims)

    async def list_triggers(self, query: TriggerQuery, claims: Claims) -> list[TriggerOutcome]:
        return await self._operate.list_triggers(query, claims)

    async def force(self, trigger_id: str, reason: str, claims: Claims) -> TriggerOutcome:
        return await self._operate.force(trigger_id, reason, claims)

    async def unblock(
        self, workspace_id: str, agent_id: str, thread_id: str, reason: str, claims: Claims
    ) -> bool:
        """With a workspace: the thread's own block (the orchestrator's guard), and with an agent too
        that agent's trigger guard on it; with an agent only: its trigger guard. Whether either was blocked."""
        if not workspace_id and not agent_id:
            raise InvalidArgument(
                "give workspace_id (the thread's block) or agent_id (an agent's trigger guard)"
            )
        was = False
        if workspace_id:
            was = await self._threads.unblock(workspace_id, thread_id, reason, claims)
        if agent_id:
            was = await self._operate.unblock(agent_id, thread_id, reason, claims) or was
        return was

    async def ack(self, ack: Ack, claims: Claims | None) -> AckAnswer:
        """An ack from a caller, or (claims None) from the bus inside the mesh."""
        return await self._acks.ack(ack, claims)

    def desktop_changed(self, hold: DesktopHold) -> None:
        """The input broker's word on one of its sessions' hold on the desktop."""
        self._desktop.heard(hold)

    # ---- the registry -----------------------------------------------------------------------------

    async def register(self, command: RegisterRuntime, claims: Claims) -> RuntimeView:
        return await self._runtimes.register(command, claims)

    async def heartbeat(self, command: Heartbeat, claims: Claims) -> RuntimeView:
        return await self._runtimes.heartbeat(command, claims)

    async def deregister(self, runtime_id: str, reason: str, claims: Claims) -> RuntimeView:
        return await self._runtimes.deregister(runtime_id, reason, claims)

    async def list_runtimes(self, query: RuntimeQuery, claims: Claims) -> list[RuntimeView]:
        return await self._runtimes.list_runtimes(query, claims)

    async def get_runtime(self, runtime_id: str, claims: Claims) -> RuntimeView:
        return await self._runtimes.get_runtime(runtime_id, claims)

    async def set_paused(self, runtime_id: str, paused: bool, reason: str, claims: Claims) -> RuntimeView:
        return await self._runtimes.set_paused(runtime_id, paused, reason, claims)

    async def logs(self, runtime_id: str, lines: int, claims: Claims) -> PaneLines:
        return await self._runtimes.logs(runtime_id, lines, claims)

    async def spawn(self, command: SpawnRuntime, claims: Claims) -> Spawned:
        return await self._runtimes.spawn(command, claims)

    # ---- threads ----------------------------------------------------------------------------------

    async def post_message(self, new: NewMessage, claims: Claims) -> Posted:
        return await self._threads.post(new, claims)

    async def read_thread(self, query: ReadQuery, claims: Claims) -> ThreadRead:
        return await self._threads.read(query, claims)

    async def list_threads(self, workspace_id: str, blocked_only: bool, claims: Claims) -> list[ThreadView]:
        return await self._threads.list_threads(workspace_id, blocked_only, claims)

    # ---- the critic's offers ----------------------------------------------------------------------

    async def offered(self, offer: FailureOffer) -> FailureOffer:
        """An offer from the critic on the bus (inside the mesh)."""
        return await self._offers.offered(offer)

    async def hand_offer(
        self, offer_id: str, agent_id: str, workspace_id: str, claims: Claims | None
    ) -> Handed:
        """The person's yes to an offer: the CLI (claims) or the bubble's button on the bus (None)."""
        return await self._offers.hand(offer_id, agent_id, workspace_id, claims)
