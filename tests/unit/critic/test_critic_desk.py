"""The critic's desk over a real TieredMemory (day files in a temporary directory, no PostgreSQL):
`similar` answers past failures only, `export` with redaction masks every path, and the doctor
says when critic.toml has a key the critic does not know (issue 26)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC
from pathlib import Path
from typing import cast

import numpy as np
import pytest
from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.adapters.policy_file import PolicyFile
from kronii.critic.adapters.tiered_memory import TieredMemory
from kronii.critic.core.commands import ExportQuery, SimilarQuery
from kronii.critic.core.doctor import HookTally, ModelState, PlaceState
from kronii.critic.core.memory import MemoryOptions
from kronii.critic.metrics import CriticMetrics
from kronii.critic.usecases.doctor import Doctor
from kronii.critic.usecases.export_records import ExportRecords
from kronii.critic.usecases.find_similar import FindSimilar
from kronii.critic.usecases.mute_hints import MuteHints
from kronii.critic.usecases.operations import CriticOperations
from kronii.critic.usecases.record_command import RecordCommand
from kronii.critic.usecases.search_records import SearchRecords, TimedKnn
from kronii.critic.usecases.watch_embeddings import EmbeddingWatch
from kronii.foundation.clock import ManualClock
from prometheus_client import CollectorRegistry

from tests.unit.critic.memory_history import BASE_MS, near, random_unit, record


class _NoEmbedder:
    available = False

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        return []

    def model_state(self) -> ModelState:
        return ModelState(True, "model", "00")


class _Places:
    def spool(self) -> PlaceState:
        return PlaceState("/run/critic", True)

    def hints(self) -> PlaceState:
        return PlaceState("/run/critic", True)


async def _desk(tmp_path: Path, policy: PolicyFile | None = None) -> tuple[CriticOperations, TieredMemory]:
    clock = ManualClock((BASE_MS + 60_000) / 1000)
    memory = TieredMemory(DailyFiles(tmp_path / "critic", tz=UTC), None, MemoryOptions(), clock=clock.wall_ms)
    await memory.start()
    policy = policy or PolicyFile(
        tmp_path / "mute.json", path=tmp_path / "none.toml", shared_path=tmp_path / "none"
    )
    record_command = cast(RecordCommand, None)  # these operations never take a command in
    embedder, knn = _NoEmbedder(), TimedKnn(memory, clock, lambda _tier, _seconds: None)
    metrics = CriticMetrics(CollectorRegistry())
    doctor = Doctor(
        memory=memory, hooks=HookTally(), places=_Places(), model=embedder, embeddings=EmbeddingWatch(metrics),
        redactions=metrics, policy=policy,
    )  # fmt: skip
    return CriticOperations(
        record=record_command, search=SearchRecords(memory, embedder, knn, clock),
        similar=FindSimilar(memory, embedder, knn, clock), export=ExportRecords(memory.exports), doctor=doctor,
        mute=MuteHints(policy, clock),
    ), memory  # fmt: skip


async def test_similar_lists_only_past_failures_however_close_a_success_is(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    (anchor_vector,) = random_unit(rng, 1)
    desk, memory = await _desk(tmp_path)
    anchor = record("anchor", anchor_vector, timestamp_ms=BASE_MS + 50, exit_status=2)
    # Successes nearer to the anchor than any failure: the old answer listed them first.
    successes = [
        record(f"ok{n}", near(anchor_vector, 0.99 - n / 100, rng), timestamp_ms=BASE_MS + n, exit_status=0)
        for n in range(6)
    ]
    failures = [
        record(
            f"bad{n}", near(anchor_vector, 0.7 - n / 100, rng), timestamp_ms=BASE_MS + 10 + n, exit_status=1
        )
        for n in range(3)
    ]
    for item in [*successes, *failures, anchor]:
        await memory.add(item)

    by_id = await desk.similar(SimilarQuery(record_id="anchor", session="", cwd="", k=5))
    by_session = await desk.similar(SimilarQuery(record_id="", session="s1", cwd="", k=5))
    await memory.close()

    for answer in (by_id, by_session):
        assert answer.anchor.record_id == "anchor"
        assert [hit.record.record_id for hit in answer.hits] == ["bad0", "bad1", "bad2"]
        assert all(hit.record.exit_status != 0 for hit in answer.hits)


async def test_similar_without_embeddings_lists_only_failures_too(tmp_path: Path) -> None:
    desk, memory = await _desk(tmp_path)
    for n, status in enumerate([0, 2, 0, 1, 2]):
        await memory.add(record(f"r{n}", timestamp_ms=BASE_MS + n, exit_status=status))
    answer = await desk.similar(SimilarQuery(record_id="r4", session="", cwd="", k=5))
    await memory.close()
    assert [hit.record.record_id for hit in answer.hits] == ["r3", "r1"]


async def test_export_redacted_masks_every_path_the_same_path_the_same_way(tmp_path: Path) -> None:
    desk, memory = await _desk(tmp_path)
    await memory.add(
        record("a", timestamp_ms=BASE_MS, cwd="/home/ana/clients/acme-payroll",
               command_line="cat /srv/acme/customers.csv ../notes/acme.txt", error_message="")
    )  # fmt: skip
    await memory.add(
        record("b", timestamp_ms=BASE_MS + 1, cwd="/home/ana/clients/acme-payroll", exit_status=1,
               command_line="cd /home/ana/clients/acme-payroll && make -C src/acme",
               error_message="make: *** src/acme: No such file or directory.  Stop.")
    )  # fmt: skip
    redacted = [item async for item in desk.export(ExportQuery(0, True))]
    raw = [item async for item in desk.export(ExportQuery(0, False))]
    await memory.close()

    text = json.dumps([[item.cwd, item.command_line, item.error_message] for item in redacted])
    for private in ("ana", "acme", "clients", "customers", "notes", "/srv", "src/"):
        assert private not in text, f"{private!r} left in the export: {text}"
    first, second = redacted
    assert first.cwd == second.cwd == "[PATH_1]", "one place, one placeholder"
    assert second.command_line == "cd [PATH_1] && make -C [PATH_4]"
    assert first.command_line == "cat [PATH_2] [PATH_3]"
    assert second.error_message.startswith("make: *** [PATH_4]: No such file")
    assert raw[0].cwd == "/home/ana/clients/acme-payroll", "--no-redact keeps the paths"


async def test_the_doctor_reports_an_unknown_key_in_critic_toml(tmp_path: Path) -> None:
    toml = tmp_path / "critic.toml"
    toml.write_text("Verbosity = 'quiet'\nRetentoinDays = 10\n")
    policy = PolicyFile(tmp_path / "mute.json", path=toml, shared_path=tmp_path / "config.toml")

    desk, memory = await _desk(tmp_path, policy)
    report = await desk.doctor()
    toml.write_text("Verbosity = 'quiet'\nRetentionDays = 10\n")
    fixed = await desk.doctor()
    await memory.close()

    wrong = [line for line in report.problems if "critic.toml" in line]
    assert wrong and "'RetentoinDays' is not a critic setting" in wrong[0]
    assert "did you mean 'retention_days'" in wrong[0]
    assert not [line for line in fixed.problems if "critic.toml" in line]


@pytest.mark.parametrize("key", ["Colour", "triggers.nosuch"])
def test_policy_file_problem_names_the_unknown_key(tmp_path: Path, key: str) -> None:
    toml = tmp_path / "critic.toml"
    toml.write_text("[Triggers]\nNoSuch = true\n" if "." in key else f"{key} = 1\n")
    policy = PolicyFile(tmp_path / "mute.json", path=toml, shared_path=tmp_path / "config.toml")
    policy.current()
    assert policy.problem is not None and "is not a critic setting" in policy.problem
    assert str(toml) in policy.problem
    toml.unlink()  # back as it was before: no file, the defaults, no problem
    policy.current()
    assert policy.problem is None
