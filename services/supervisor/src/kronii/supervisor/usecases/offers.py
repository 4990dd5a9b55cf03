"""The critic's repeated failure as work for an agent: the offer is kept, the agent chosen (the one
working above the command's directory), and the person asked with a bubble ("hand this failure to
codex1?"). Their yes (the bubble's button, or `kronii agents hand`) posts the redacted command, exit
status and error text to that agent's hand-over thread, and the orchestrator wakes it. Nothing goes
to an agent without the yes, unless the config names the agent in hand_without_asking."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from kronii.foundation.errors import Conflict, InvalidArgument, NotFound
from kronii.supervisor.core.job import require_id
from kronii.supervisor.core.offers import (
    FailureOffer,
    choose_agent,
    handoff_text,
    handoff_thread,
    offer_words,
)
from kronii.supervisor.core.threads import PERSON, MessageKind, NewMessage
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.metrics import SupervisorMetrics
from kronii.supervisor.ports import AuditTrail, Clock, Notices, Offers, Runtimes
from kronii.supervisor.usecases.access import need
from kronii.supervisor.usecases.threads import ThreadDesk

__all__ = ["Handed", "OfferDesk"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Handed:
    offer_id: str
    agent_id: str
    workspace_id: str
    thread_id: str
    seq: int
    duplicate: bool = False


class OfferDesk:
    def __init__(
        self,
        *,
        store: Offers,
        threads: ThreadDesk,
        registry: Runtimes,
        notices: Notices,
        audit: AuditTrail,
        metrics: SupervisorMetrics,
        clock: Clock,
        without_asking: frozenset[str],
    ) -> None:
        self._store = store
        self._threads = threads
        self._registry = registry
        self._notices = notices
        self._audit = audit
        self._metrics = metrics
        self._clock = clock
        # Agents (agent_id, or workspace/agent_id) the person consented to hand failures to unasked.
        self._without_asking = without_asking

    async def offered(self, offer: FailureOffer) -> FailureOffer:
        """An offer from the critic: kept, then the person asked (or, consented, handed at once)."""
        require_id("offer_id", offer.offer_id)
        chosen = choose_agent(offer, self._registry.all())
        if chosen is not None:
            offer = replace(offer, workspace_id=chosen.workspace_id, agent_id=chosen.agent_id)
        kept = await self._store.keep(offer)
        await self._audit(
            actor="critic", action="supervisor.offer", subject=kept.offer_id, outcome="kept" if chosen else "no_agent",
            agent_id=kept.agent_id, workspace_id=kept.workspace_id, failure_key=kept.failure_key,
        )  # fmt: skip
        if chosen is None:
            log.info("offer %s: no agent works where %r failed; not shown", kept.offer_id, kept.cwd)
            return kept
        if kept.accepted_at is not None:
            return kept  # said again (the critic restarted): the person said yes already
        if {kept.agent_id, f"{kept.workspace_id}/{kept.agent_id}"} & self._without_asking:
            self._metrics.offers.labels("auto").inc()
            await self._hand(kept, actor="policy:hand_without_asking")
            return kept
        title, body, label = offer_words(kept, kept.agent_id)
        shown = await self._notices.show(
            kind="agent_offer", title=title, body=body, dedup_key=f"offer:{kept.failure_key}", at=kept.at,
            offer_id=kept.offer_id, offer_label=label,
        )  # fmt: skip
        if shown:
            self._metrics.offers.labels("made").inc()
        return kept

    async def hand(self, offer_id: str, agent_id: str, workspace_id: str, claims: Claims | None) -> Handed:
        """The person's yes: from the bubble (claims None: the bus is inside the mesh) or the CLI."""
        offer = await self._store.find(offer_id) if offer_id else await self._store.latest_open()
        if offer is None:
            raise NotFound(
                f"no offer {offer_id!r}"
                if offer_id
                else "no offer is open (the critic offers a command that failed the same way three times)"
            )
        if agent_id:
            require_id("agent_id", agent_id)
            record = self._registry.for_agent(workspace_id or offer.workspace_id, agent_id)
            if record is None:
                raise NotFound(f"no agent {agent_id!r} in workspace {workspace_id or offer.workspace_id!r}")
            offer = replace(offer, agent_id=record.agent_id, workspace_id=record.workspace_id)
        if not offer.agent_id:
            raise InvalidArgument(
                f"offer {offer.offer_id} names no agent (none worked where it failed): give one with --agent"
            )
        if claims is not None:
            need(claims, "trigger", offer.workspace_id)
        if offer.accepted_at is not None and not agent_id:
            return Handed(
                offer.offer_id, offer.agent_id, offer.workspace_id, offer.thread_id, offer.seq, duplicate=True
            )
        return await self._hand(offer, actor=claims.subject if claims else "person:notification")

    async def _hand(self, offer: FailureOffer, *, actor: str) -> Handed:
        thread_id = handoff_thread(offer.agent_id)
        try:
            posted = await self._threads.note(
                NewMessage(
                    workspace_id=offer.workspace_id,
                    thread_id=thread_id,
                    author=PERSON,
                    kind=MessageKind.HANDOFF,
                    to=(offer.agent_id,),
                    body=handoff_text(offer),
                    dedupe_key=f"offer-{offer.offer_id}"[:128],
                )
            )
        except InvalidArgument as error:
            raise Conflict(f"offer {offer.offer_id} could not be handed over: {error}") from None
        await self._store.accepted(offer.offer_id, thread_id, posted.message.seq, self._clock.wall())
        if not posted.duplicate:
            self._metrics.offers.labels("accepted").inc()
        await self._audit(
            actor=actor, action="supervisor.offer_accept", subject=offer.offer_id, outcome="handed",
            agent_id=offer.agent_id, workspace_id=offer.workspace_id, thread_id=thread_id, seq=posted.message.seq,
        )  # fmt: skip
        return Handed(
            offer.offer_id,
            offer.agent_id,
            offer.workspace_id,
            thread_id,
            posted.message.seq,
            posted.duplicate,
        )
