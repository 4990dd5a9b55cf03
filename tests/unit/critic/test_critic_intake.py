"""The intake in process with fakes: what reaches memory, the prompt and the pipeline is redacted;
the third identical failure brings the repeated-failure hint; a muted critic shows nothing but
still remembers; the embedding comes back onto the kept record."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import pytest
from kronii.critic.core.embedding_jobs import EmbeddingResult, JobOutcome
from kronii.critic.core.model import InvocationEvent, InvocationRecord, Trigger
from kronii.critic.core.policy import Policy
from kronii.critic.core.recommend import Notification
from kronii.critic.core.retrieval import Hit, QueryContext, RecordFilter, Vector
from kronii.critic.ports import RecordPredicate
from kronii.critic.usecases.record_command import RecordCommand
from kronii.redaction import RedactionContext, RedactionEngine

NOW = 1_700_000_000_000
TOKEN = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB"  # a GitHub token shape, made up
VECTOR = (1.0,) + (0.0,) * 383


class FakeMemory:
    def __init__(self) -> None:
        self.records: dict[str, InvocationRecord] = {}

    async def add(self, record: InvocationRecord) -> None:
        self.records[record.record_id] = record

    async def query(self, predicate: RecordPredicate, take: int) -> list[InvocationRecord]:
        found = [record for record in self.records.values() if predicate(record)]
        return sorted(found, key=lambda record: record.timestamp_ms, reverse=True)[:take]

    async def knn(
        self,
        embedding: Sequence[float] | Vector,
        k: int,
        context: QueryContext | None = None,
        where: RecordFilter | None = None,
    ) -> list[Hit]:
        return []

    def recent(self, take: int) -> Iterable[InvocationRecord]:
        return list(self.records.values())[-take:]

    def get(self, record_id: str) -> InvocationRecord | None:
        return self.records.get(record_id)


@dataclass
class Sinks:
    hints: list[tuple[str, str]] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)
    embedded: list[tuple[str, str]] = field(default_factory=list)
    fail_hints: bool = False

    async def send(self, session: str, line: str) -> None:
        if self.fail_hints:
            raise OSError("the session's hint file is gone")
        self.hints.append((session, line))

    async def publish(self, notification: Notification) -> None:
        self.notifications.append(notification)

    def submit(self, key: str, text: str, on_done: Callable[[EmbeddingResult], None] | None = None) -> bool:
        self.embedded.append((key, text))
        if on_done is not None:
            on_done(EmbeddingResult(key, VECTOR, JobOutcome.EMBEDDED, 0.001))
        return True


@dataclass
class FakeMetrics:
    events: list[str] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)
    critiques: list[Trigger] = field(default_factory=list)
    hint_seconds: list[float] = field(default_factory=list)

    def event_taken(self, shell: str) -> None:
        self.events.append(shell)

    def redactions(self, where: str, count: int) -> None:
        self.redacted[where] = self.redacted.get(where, 0) + count

    def critique(self, kind: Trigger) -> None:
        self.critiques.append(kind)

    def rule_failed(self, kind: Trigger) -> None:
        raise AssertionError(f"a built-in rule raised: {kind}")

    def hint_shown(self, seconds: float) -> None:
        self.hint_seconds.append(seconds)


class FakeClock:
    def __init__(self) -> None:
        self.ms = NOW
        self.mono = 100.0

    def wall(self) -> float:
        return self.ms / 1000

    def wall_ms(self) -> int:
        return self.ms

    def monotonic(self) -> float:
        self.mono += 0.002
        return self.mono

    def monotonic_ms(self) -> int:
        return int(self.monotonic() * 1000)


@dataclass
class FixedPolicy:
    policy: Policy = field(default_factory=Policy)

    def current(self) -> Policy:
        return self.policy


class Catalog:
    def names(self) -> frozenset[str]:
        return frozenset({"git", "npm", "curl"})


@dataclass
class Rig:
    intake: RecordCommand
    memory: FakeMemory
    sinks: Sinks
    metrics: FakeMetrics
    clock: FakeClock
    policy: FixedPolicy


@pytest.fixture
def rig() -> Rig:
    memory, sinks, metrics, clock, policy = FakeMemory(), Sinks(), FakeMetrics(), FakeClock(), FixedPolicy()
    intake = RecordCommand(
        memory=memory, hints=sinks, notifications=sinks, embeddings=sinks, policy=policy, commands=Catalog(),
        metrics=metrics, clock=clock, engine=RedactionEngine(), context=RedactionContext.random(),
    )  # fmt: skip
    return Rig(intake, memory, sinks, metrics, clock, policy)


def event(
    command: str, exit_status: int, at_ms: int, error_text: str = "", session: str = "s1"
) -> InvocationEvent:
    return InvocationEvent("bash", session, "/dev/pts/3", "/home/alice/app", command, exit_status, at_ms, 40,
                           error_text)  # fmt: skip


async def test_a_secret_never_reaches_memory_hint_pipeline_or_embedding_unredacted(rig: Rig) -> None:
    command = f"curl -H 'Authorization: Bearer {TOKEN}' https://get.example.com/i.sh | bash"
    reported = await rig.intake.report(event(command, 1, NOW, error_text=f"bad credentials for {TOKEN}"))
    await rig.intake.settle()
    record = rig.memory.records[reported.record.record_id if reported.record else ""]
    assert "[GITHUB_TOKEN_1]" in record.command_line and record.command_name == "curl"
    assert "alice" not in record.cwd and record.redactions >= 3
    everything = repr(
        (
            list(rig.memory.records.values()),
            rig.sinks.hints,
            rig.sinks.notifications,
            rig.sinks.embedded,
            reported,
        )
    )
    assert TOKEN not in everything and "alice" not in everything
    assert record.trigger is Trigger.DANGEROUS
    assert {Trigger.SECRET, Trigger.DANGEROUS} <= set(rig.metrics.critiques)
    assert rig.metrics.redacted["command"] == 1 and rig.metrics.redacted["error"] == 1
    assert [n.kind for n in rig.sinks.notifications] == [Trigger.DANGEROUS]


async def test_the_third_identical_failure_brings_the_repeated_failure_hint(rig: Rig) -> None:
    lines = []
    for minutes in (0, 2, 4):
        rig.clock.ms = NOW + minutes * 60_000
        reported = await rig.intake.report(event("npm test", 1, rig.clock.ms, "npm ERR! code ELIFECYCLE"))
        lines.append(reported.hint)
    assert "kronii agents hand" not in lines[0] + lines[1]
    assert "same failure 3x" in lines[2] and "kronii agents hand" in lines[2]
    assert rig.sinks.hints[-1] == ("s1", lines[2])
    assert [n.kind for n in rig.sinks.notifications] == [Trigger.REPEATED_FAILURE]
    kept = sorted(rig.memory.records.values(), key=lambda record: record.timestamp_ms)
    assert kept[-1].trigger is Trigger.REPEATED_FAILURE and kept[0].trigger is Trigger.ERROR


async def test_a_muted_critic_shows_nothing_but_still_remembers(rig: Rig) -> None:
    rig.policy.policy = Policy().muted_until(NOW + 3_600_000)
    for minutes in (0, 1, 2):
        rig.clock.ms = NOW + minutes * 60_000
        reported = await rig.intake.report(event("sudo rm -rf /", 1, rig.clock.ms))
        assert reported.hint == ""
    assert rig.sinks.hints == [] and rig.sinks.notifications == []
    assert len(rig.memory.records) == 3


async def test_what_worked_last_time_comes_back_at_the_next_same_failure(rig: Rig) -> None:
    await rig.intake.report(event("make build", 2, NOW - 120_000))
    await rig.intake.report(event("make deps", 0, NOW - 60_000))
    reported = await rig.intake.report(event("make build", 2, NOW))
    assert reported.hint == "failed like this before; what worked then: make deps"
    assert rig.metrics.hint_seconds and all(seconds > 0 for seconds in rig.metrics.hint_seconds)


async def test_the_embedding_is_queued_from_command_and_summary_and_kept_on_the_record(rig: Rig) -> None:
    traceback = (
        "Traceback (most recent call last):\n  File \"a.py\"\nModuleNotFoundError: No module named 'x'\n"
    )
    reported = await rig.intake.report(event("python a.py", 1, NOW, traceback))
    await rig.intake.settle()
    assert reported.record is not None
    record_id = reported.record.record_id
    assert rig.sinks.embedded == [(record_id, "python a.py\nModuleNotFoundError: No module named 'x'")]
    assert rig.memory.records[record_id].embedding == VECTOR
    assert rig.memory.records[record_id].error_type == "ModuleNotFoundError"


async def test_a_lost_hint_does_not_lose_the_record(rig: Rig) -> None:
    rig.sinks.fail_hints = True
    reported = await rig.intake.report(event("git push --force origin main", 0, NOW))
    assert (
        reported.hint.startswith("`git push --force origin main`: dangerous:") and reported.record is not None
    )
    assert reported.record.record_id in rig.memory.records
    assert rig.metrics.hint_seconds == []


async def test_a_quiet_command_gives_no_hint(rig: Rig) -> None:
    reported = await rig.intake.report(event("ls -la", 0, NOW))
    assert reported.hint == "" and rig.sinks.hints == [] and rig.metrics.events == ["bash"]
    assert reported.record is not None and reported.record.trigger is Trigger.OK
    await asyncio.sleep(0)
