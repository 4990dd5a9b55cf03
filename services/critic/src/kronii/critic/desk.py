"""The operations the critic's HTTP routes and gRPC servicer call (ports.CriticOperations): report
one command, search and find similar records, export, the doctor's report, mute. Each hands the
work to the intake, the tiered memory and the embedder; nothing here talks to a socket or a file."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence

from kronii.common.errors import NotFound
from kronii.critic.core.model import InvocationEvent, InvocationRecord
from kronii.critic.core.retrieval import Hit, QueryContext, RecordFilter
from kronii.critic.intake import Intake
from kronii.critic.memory import TieredMemory
from kronii.critic.ports import (
    DoctorReport,
    Embedder,
    EmbeddingQueueState,
    HookSeen,
    ModelState,
    PlaceState,
    RecordCounts,
    Reported,
    SearchQuery,
    Similar,
    SimilarQuery,
)

__all__ = ["CriticDesk", "DeskParts"]

_SCAN = 2000  # records looked at for a keyword search, newest first
# A record found by meaning alone must be at least this close to what was searched for: below it the
# nearest records of a small history are noise, not answers.
MIN_SEARCH_SIMILARITY = 0.45
_FAILURES = RecordFilter(failed=True)


class DeskParts:
    """What the doctor reads that the desk does not own: the hooks seen, the spool and hint places,
    the model's state, the queue's, the mute."""

    def __init__(
        self,
        *,
        hooks: Callable[[], list[HookSeen]],
        spool: Callable[[], PlaceState],
        hints: Callable[[], PlaceState],
        model: Callable[[], ModelState],
        queue: Callable[[], EmbeddingQueueState],
        redactions: Callable[[], int],
        muted_until: Callable[[], int],
        mute: Callable[[int], None],
        policy_problem: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.hooks, self.spool, self.hints, self.model = hooks, spool, hints, model
        self.queue, self.redactions, self.muted_until, self.mute = queue, redactions, muted_until, mute
        self.policy_problem = policy_problem


def _ms() -> int:
    return int(time.time() * 1000)


class CriticDesk:
    def __init__(
        self,
        intake: Intake,
        memory: TieredMemory,
        embedder: Embedder,
        parts: DeskParts,
        *,
        now_ms: Callable[[], int] = _ms,
        observe_knn: Callable[[str, float], None] = lambda _tier, _seconds: None,
    ) -> None:
        self._observe_knn = observe_knn
        self._intake = intake
        self._memory = memory
        self._embedder = embedder
        self._parts = parts
        self._now_ms = now_ms

    async def report(self, event: InvocationEvent) -> Reported:
        return await self._intake.report(event)

    async def search(self, query: SearchQuery) -> list[Hit]:
        triggers = frozenset({query.trigger}) if query.trigger is not None else frozenset()
        record_filter = RecordFilter(
            triggers=triggers,
            command_name=query.command or None,
            failed=True if query.failed_only else None,
            since_ms=query.since_ms or None,
        )
        words = query.text.strip()
        if words and self._embedder.available:
            vectors = await asyncio.to_thread(self._embedder.embed, [words])
            if vectors:
                context = QueryContext(now_ms=self._now_ms())
                hits = await self._knn(vectors[0], max(query.take * 4, 20), context)
                matching = [
                    hit
                    for hit in hits
                    if record_filter(hit.record) and hit.similarity >= MIN_SEARCH_SIMILARITY
                ]
                keyword = await self._keyword(words, record_filter, query.take)
                return _merge(matching, keyword, query.take)
        return await self._keyword(words, record_filter, query.take)

    async def _knn(
        self, vector: Sequence[float], k: int, context: QueryContext, where: RecordFilter | None = None
    ) -> list[Hit]:
        """The tiered KNN, timed by the deepest tier it had to reach."""
        started = time.perf_counter()
        hits = await self._memory.knn(vector, k, context, where)
        tier = "disk" if any(hit.tier != "ram" for hit in hits) else "ram"
        self._observe_knn(tier, time.perf_counter() - started)
        return hits

    async def _keyword(self, words: str, record_filter: RecordFilter, take: int) -> list[Hit]:
        """Records whose text holds ``words`` (all of them when empty), newest first."""
        with_text = RecordFilter(
            triggers=record_filter.triggers,
            command_name=record_filter.command_name,
            failed=record_filter.failed,
            since_ms=record_filter.since_ms,
            text=words,
        )
        records = await self._memory.query(with_text, min(_SCAN, take))
        return [Hit(record, 1.0, 1.0, "ram") for record in records[:take]]

    async def similar(self, query: SimilarQuery) -> Similar:
        """Past failures like the anchor: a command that succeeded is never one of them, however
        close its text (every tier is asked for failures only)."""
        anchor = await self._anchor(query)
        vector: Sequence[float] = anchor.embedding
        if not vector and self._embedder.available:
            text = f"{anchor.command_line}\n{anchor.error_message or anchor.summary}"
            vectors = await asyncio.to_thread(self._embedder.embed, [text])
            vector = vectors[0] if vectors else ()
        if not vector:
            same = await self._memory.query(
                RecordFilter(command_name=anchor.command_name, failed=True), query.k + 1
            )
            hits = [Hit(record, 1.0, 1.0, "ram") for record in same if record.record_id != anchor.record_id]
            return Similar(anchor, hits[: query.k])
        context = QueryContext(
            now_ms=self._now_ms(), trigger=anchor.trigger, command_name=anchor.command_name, cwd=anchor.cwd
        )
        hits = await self._knn(vector, query.k + 1, context, where=_FAILURES)
        return Similar(anchor, [hit for hit in hits if hit.record.record_id != anchor.record_id][: query.k])

    async def _anchor(self, query: SimilarQuery) -> InvocationRecord:
        if query.record_id:
            found = await self._memory.query(_RecordId(query.record_id), 1)
            if not found:
                raise NotFound("no record has that id (`kronii critic search` lists them)")
            return found[0]
        for record in self._memory.recent(200):
            if record.failed and (
                (query.session and record.session == query.session) or (query.cwd and record.cwd == query.cwd)
            ):
                return record
        failed = await self._memory.query(RecordFilter(failed=True), 1)
        if failed:
            return failed[0]
        raise NotFound("no failing command is remembered yet to compare with")

    async def export(self, since_ms: int, redact: bool) -> AsyncIterator[InvocationRecord]:
        for record in await asyncio.to_thread(lambda: list(self._memory.export_records(since_ms, redact))):
            yield record

    async def doctor(self) -> DoctorReport:
        parts = self._parts
        counts = self._memory.counts()
        in_files, in_database = await self._memory.totals()
        report = DoctorReport(
            hooks=parts.hooks(),
            spool=parts.spool(),
            hints=parts.hints(),
            model=parts.model(),
            records=RecordCounts(
                ram=counts.ram, files=in_files, database=in_database, redactions=parts.redactions()
            ),
            embeddings=parts.queue(),
            muted_until_ms=parts.muted_until(),
        )
        policy_problem = parts.policy_problem()
        if policy_problem:
            report.problems.append(
                f"the critic policy is not in force: {policy_problem} (the last good one, or the defaults, is)"
            )
        if counts.waiting:
            report.problems.append(
                f"{counts.waiting} record(s) wait for room in the day files (is the data dir's disk full?);"
                " they are written there once it has room"
            )
        return _with_problems(report, counts.database_failures, counts.lost)

    async def mute(self, seconds: int) -> int:
        until = self._now_ms() + seconds * 1000 if seconds else 0
        self._parts.mute(until)
        return until


class _RecordId:
    """A predicate for one record by id (not a RecordFilter: only RAM and the files can answer it)."""

    def __init__(self, record_id: str) -> None:
        self.record_id = record_id

    def __call__(self, record: InvocationRecord) -> bool:
        return record.record_id == self.record_id


def _merge(semantic: list[Hit], keyword: list[Hit], take: int) -> list[Hit]:
    seen: set[str] = set()
    merged: list[Hit] = []
    for hit in [*keyword, *semantic]:
        if hit.record.record_id not in seen:
            seen.add(hit.record.record_id)
            merged.append(hit)
    return merged[:take]


def _with_problems(report: DoctorReport, database_failures: int, lost: int) -> DoctorReport:
    problems: list[str] = []
    if not report.hooks or all(hook.events == 0 for hook in report.hooks):
        problems.append(
            'no shell has reported a command yet: add eval "$(kronii shell-init bash)" to ~/.bashrc'
        )
    for place in (report.spool, report.hints):
        if not place.ok:
            problems.append(place.problem)
    if not report.model.available:
        problems.append(f"no embeddings (search by keywords only): {report.model.problem}")
    if report.records.database < 0:
        problems.append("PostgreSQL does not answer: the day files keep the records until it does")
    if database_failures:
        problems.append(f"PostgreSQL refused {database_failures} write(s); the day files keep the records")
    if lost:
        problems.append(f"{lost} record(s) could not be kept")
    report.problems.extend(problems)
    return report
