"""One shell command in, one hint out: the event is redacted into a record (core.redact_event), the
triggers judge it against what the memory holds (core.triggers), the recommender picks the line for
the next prompt and perhaps a desktop notification (core.recommend, gated by the person's policy),
then the record is kept and its embedding queued. A repeated failure's notification becomes an offer
to the workspace's agent (core.offers), sent to the supervisor, which asks the person. The hint goes out before the record is written:
the shell's hook waits only a few ms for it. Nothing here runs a command."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from dataclasses import replace

from kronii.critic.core.commands import Reported
from kronii.critic.core.embedding_jobs import EmbeddingResult, JobOutcome
from kronii.critic.core.model import InvocationEvent, InvocationRecord, Trigger
from kronii.critic.core.offers import failure_offer
from kronii.critic.core.recommend import ActionRecommender, Recommendation
from kronii.critic.core.redact_event import embedding_text, record_trigger, redact_event
from kronii.critic.core.retrieval import RecordFilter
from kronii.critic.core.triggers import MemoryView, TriggerEvaluator, is_failure
from kronii.critic.ports import (
    CommandCatalog,
    EmbeddingJobs,
    HintSink,
    IntakeMetrics,
    MemoryStore,
    OfferSink,
    PaneErrorText,
    PolicySource,
    TriggerSink,
)
from kronii.foundation.clock import Clock
from kronii.redaction import RedactionContext, RedactionEngine

__all__ = ["RecordCommand", "new_record_id"]

log = logging.getLogger(__name__)

# The RAM ring holds ~200; the rules look at all of it, and a little further for the same program.
RECENT_TAKE = 200
SAME_COMMAND_TAKE = 50
SIMILAR_ERROR_TAKE = 20
# The shells whose hooks report without the error text (`kronii run` brings its own).
HOOK_SHELLS = frozenset({"bash", "zsh", "fish"})


def new_record_id() -> str:
    return uuid.uuid4().hex


class RecordCommand:
    """The intake of the shells' commands (the spool, `kronii run`, the supervisor's panes)."""

    def __init__(
        self,
        *,
        memory: MemoryStore,
        hints: HintSink,
        notifications: TriggerSink,
        embeddings: EmbeddingJobs,
        policy: PolicySource,
        commands: CommandCatalog,
        metrics: IntakeMetrics,
        clock: Clock,
        engine: RedactionEngine,
        context: RedactionContext,
        evaluator: TriggerEvaluator | None = None,
        recommender: ActionRecommender | None = None,
        new_id: Callable[[], str] = new_record_id,
        pane_errors: PaneErrorText | None = None,
        offers: OfferSink | None = None,
    ) -> None:
        self._memory = memory
        self._hints = hints
        self._notifications = notifications
        self._embeddings = embeddings
        self._policy = policy
        self._commands = commands
        self._metrics = metrics
        self._clock = clock
        self._engine = engine
        self._context = context
        self._evaluator = evaluator or TriggerEvaluator()
        self._recommender = recommender or ActionRecommender()
        self._new_id = new_id
        self._pane_errors = pane_errors
        # None: a repeated failure is a plain notification, as any other (no supervisor to ask).
        self._offers = offers
        self._background: set[asyncio.Task[None]] = set()

    async def report(self, event: InvocationEvent) -> Reported:
        """Take one event: the record as kept and the hint shown ("" for none). An event whose id is
        kept already (a spool line read again after a crash) is not taken twice: the record kept
        is the answer, with no hint."""
        if event.event_id:
            kept = self._memory.get(event.event_id)
            if kept is not None:
                return Reported(kept, "")
        taken_at = self._clock.monotonic()
        event = await self._with_pane_error_text(event)
        redacted = redact_event(event, self._engine, self._context, event.event_id or self._new_id())
        record = redacted.record
        metrics = self._metrics
        metrics.event_taken(event.shell)
        metrics.redactions("command", redacted.command_redactions)
        metrics.redactions("error", redacted.error_redactions)
        metrics.redactions("cwd", redacted.cwd_redactions)
        policy = self._policy.current()
        now_ms = self._clock.wall_ms()
        evaluation = self._evaluator.evaluate(record, await self._view(record, now_ms), policy.enabled)
        for kind in evaluation.failed:
            metrics.rule_failed(kind)
        for critique in evaluation.critiques:
            metrics.critique(critique.kind)
        record = replace(record, trigger=record_trigger(record, evaluation.critiques))
        recommendation = self._recommender.recommend(evaluation.critiques, policy, now_ms)
        await self._show(record, recommendation, taken_at)
        await self._memory.add(record)
        self._queue_embedding(record)
        if recommendation.notification is not None:
            await self._notify(record, recommendation)
        return Reported(record, recommendation.prompt_line or "")

    async def _with_pane_error_text(self, event: InvocationEvent) -> InvocationEvent:
        """The event with the error text its pane shows, before the redaction like any error text."""
        source = self._pane_errors
        if source is None or event.exit_status == 0 or event.error_text or event.shell not in HOOK_SHELLS:
            return event
        try:
            text = await asyncio.to_thread(source.error_text, event.tty, event.command_line)
        except Exception:  # the command is remembered all the same, without its error text
            log.warning("could not read the error text from the pane on %s", event.tty, exc_info=True)
            return event
        return replace(event, error_text=text) if text else event

    async def _view(self, record: InvocationRecord, now_ms: int) -> MemoryView:
        """What the triggers see, from the RAM ring alone: the shell waits only 20 ms for the hint,
        and a round trip to PostgreSQL can take that by itself (search and similar use every tier)."""
        recent = tuple(self._memory.recent(RECENT_TAKE))
        same_command: list[InvocationRecord] = []
        similar: list[InvocationRecord] = []
        if record.command_name:
            same = RecordFilter(command_name=record.command_name)
            same_command = [kept for kept in recent if same(kept)][:SAME_COMMAND_TAKE]
        if is_failure(record) and record.error_message:
            like = RecordFilter(failed=True, text=record.error_message)
            similar = [kept for kept in recent if like(kept)][:SIMILAR_ERROR_TAKE]
        return MemoryView(
            now_ms=now_ms,
            recent=recent,
            same_command=tuple(same_command),
            similar_errors=tuple(similar),
            path_commands=self._commands.names(),
        )

    async def _show(self, record: InvocationRecord, recommendation: Recommendation, taken_at: float) -> None:
        line = recommendation.prompt_line
        if not line:
            return
        try:
            await self._hints.send(record.session, line)
        except Exception:  # the record is kept all the same; a hint is a nicety
            log.warning("could not leave the hint for session %s", record.session, exc_info=True)
            return
        self._metrics.hint_shown(self._clock.monotonic() - taken_at)

    async def _notify(self, record: InvocationRecord, recommendation: Recommendation) -> None:
        """The notification to the pipeline; a repeated failure's to the supervisor as an offer
        instead (its bubble, with the button, is the supervisor's: one bubble, not two)."""
        notification = recommendation.notification
        assert notification is not None
        if notification.kind is Trigger.REPEATED_FAILURE and self._offers is not None:
            try:
                await self._offers.offer(failure_offer(record, notification))
            except Exception:
                log.warning("could not offer the repeated failure to the supervisor", exc_info=True)
            return
        try:
            await self._notifications.publish(notification)
        except Exception:
            log.warning("could not ask the pipeline for a notification", exc_info=True)

    def _queue_embedding(self, record: InvocationRecord) -> None:
        loop = asyncio.get_running_loop()

        def embedded(result: EmbeddingResult) -> None:
            # On the queue's worker thread: the record is kept again, with its vector, on the loop.
            if result.outcome is JobOutcome.EMBEDDED and result.vector:
                with_vector = replace(record, embedding=result.vector)
                try:
                    loop.call_soon_threadsafe(self._keep_later, with_vector)
                except RuntimeError:  # the loop closed while the vector was computed (shutdown)
                    log.debug("embedding of %s came after the loop closed", record.record_id)

        self._embeddings.submit(record.record_id, embedding_text(record), embedded)

    def _keep_later(self, record: InvocationRecord) -> None:
        task = asyncio.get_running_loop().create_task(self._memory.add(record))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def settle(self) -> None:
        """Wait for the records re-kept with the embeddings that came back so far (tests, an
        orderly stop): their callbacks run on the loop first, then their tasks end."""
        await asyncio.sleep(0)
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
