"""Issue 26: the critic's journal loses nothing it acknowledged and stores nothing twice after a crash.

- A spool read again after a crash (the reader renamed it, the commands were kept, the process died
  before the renamed file went): real bash hook lines, the real SpoolReader, Intake, day files and
  PostgreSQL; the restarted critic keeps each command once, in the files, in PostgreSQL, in export.
- A full data dir: the day files refuse records; every record kept meanwhile is in the export at
  once and in the day files once there is room, also when the critic restarts before that (from
  PostgreSQL). At the adapter boundary (ENOSPC) always; on a real 1 MB tmpfs with the real critic
  process when the test may mount one (root)."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.adapters.spool import SpoolReader
from kronii.critic.adapters.tiered_memory import TieredMemory
from kronii.critic.adapters.vector_store import PgVectorStore
from kronii.critic.core.embedding_jobs import EmbeddingResult
from kronii.critic.core.memory import MemoryOptions
from kronii.critic.core.model import InvocationRecord
from kronii.critic.core.policy import Policy
from kronii.critic.core.recommend import Notification
from kronii.critic.usecases.record_command import RecordCommand
from kronii.foundation.clock import SystemClock
from kronii.redaction import RedactionContext, RedactionEngine
from kronii.stores.db import make_engine, migrate_up
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.desktop import wait_until
from tests.infra import InfraUrls, create_database
from tests.integration.critic.shell_pty import ShellPty, shell_setup
from tests.integration.critic.test_critic_service import start_critic
from tests.unit.critic.memory_history import BASE_MS, record


@pytest.fixture(scope="module")
def journal_database(infra: InfraUrls) -> str:
    url = create_database(infra.database, "kronii_critic_journal")
    migrate_up(url)
    return url


@pytest_asyncio.fixture
async def engine(journal_database: str) -> AsyncIterator[AsyncEngine]:
    made = make_engine(journal_database)
    async with made.begin() as conn:
        await conn.exec_driver_sql("TRUNCATE critic_records")
    yield made
    await made.dispose()


class _Quiet:
    """The intake's other ports: no hints, notices, embeddings or metrics to see here."""

    async def send(self, session: str, line: str) -> None: ...

    async def publish(self, notification: Notification) -> None: ...

    def submit(self, key: str, text: str, on_done: Callable[[EmbeddingResult], None] | None = None) -> bool:
        return True

    def current(self) -> Policy:
        return Policy()

    def names(self) -> frozenset[str]:
        return frozenset()

    def event_taken(self, shell: str) -> None: ...

    def redactions(self, where: str, count: int) -> None: ...

    def critique(self, kind: object) -> None: ...

    def rule_failed(self, kind: object) -> None: ...

    def hint_shown(self, seconds: float) -> None: ...


def _intake(memory: TieredMemory) -> RecordCommand:
    quiet = _Quiet()
    return RecordCommand(
        memory=memory, hints=quiet, notifications=quiet, embeddings=quiet, policy=quiet, commands=quiet,
        metrics=quiet, clock=SystemClock(), engine=RedactionEngine(), context=RedactionContext.random(),
    )  # fmt: skip


async def _count_rows(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.exec_driver_sql("SELECT count(*) FROM critic_records")).scalar_one())


def _bash_spool(home: Path, commands: list[str]) -> Path:
    """The spool a real bash with the hooks wrote for ``commands``; returns the critic directory."""
    with ShellPty(shell_setup("bash", home, hooked=True)) as pty:
        for command in commands:
            pty.run(command)
        directory = pty.setup.runtime_dir / "kronii" / "critic"
    return directory


async def test_a_spool_read_again_after_a_crash_is_stored_once(engine: AsyncEngine, tmp_path: Path) -> None:
    commands = [f"echo journal-{n}" for n in range(6)] + ["false"]
    directory = _bash_spool(tmp_path / "home", commands)
    files_root = tmp_path / "data" / "critic"

    # The first critic: it renames the spool, keeps every command, and dies before it lets the
    # renamed file go (no acknowledge, no close: a kill -9).
    first = TieredMemory(
        DailyFiles(files_root, tz=UTC), PgVectorStore(engine), MemoryOptions(retry_secs=0.05)
    )
    await first.start()
    reader = SpoolReader(directory)
    intake = _intake(first)
    events = reader.read_available()
    assert [event.command_line for event in events] == commands
    for event in events:
        await intake.report(event)
    await first.sync()
    assert list(directory.glob("spool.draining.*")), "the crash left the renamed spool"
    first._files.close()
    assert first._writer is not None
    first._writer.cancel()

    # The restarted critic reads the leftover file again and replays the journal to PostgreSQL.
    second = TieredMemory(
        DailyFiles(files_root, tz=UTC), PgVectorStore(engine), MemoryOptions(retry_secs=0.05)
    )
    await second.start()
    again = SpoolReader(directory)
    replayed = again.read_available() + again.close()
    assert [event.command_line for event in replayed] == commands, "the same lines were read again"
    assert [event.event_id for event in replayed] == [event.event_id for event in events]
    restarted = _intake(second)
    for event in replayed:
        await restarted.report(event)
    await second.sync()
    exported = [json.loads(line) for line in second.exports.export(0, redact=False)]
    lines = (files_root).glob("critic-*.tsv")
    journal_lines = [
        line for path in lines for line in path.read_text().splitlines() if not line.startswith("#")
    ]
    rows = await _count_rows(engine)
    await second.close()

    assert [item["command_line"] for item in exported] == commands, "each command once in the export"
    assert len(journal_lines) == len(commands), "each command once in the day files"
    assert rows == len(commands), "each command once in PostgreSQL"
    assert not list(directory.glob("spool.draining.*"))


class _FullDisk(DailyFiles):
    """Day files on a file system that is full while ``full`` is set (ENOSPC at the adapter boundary)."""

    full = False

    def append_record(self, item: InvocationRecord) -> None:
        if self.full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        super().append_record(item)


def _records(count: int) -> list[InvocationRecord]:
    return [record(f"full{n:03d}", timestamp_ms=BASE_MS + n, exit_status=n % 2) for n in range(count)]


def _ids_in_files(root: Path) -> list[str]:
    files = DailyFiles(root, tz=UTC)
    return sorted(item.record_id for item in files.read_records())


async def test_records_kept_while_the_disk_is_full_reach_the_export_and_later_the_day_files(
    tmp_path: Path,
) -> None:
    files = _FullDisk(tmp_path, tz=UTC)
    memory = TieredMemory(files, None, MemoryOptions(retry_secs=0.05), clock=lambda: BASE_MS + 1000)
    await memory.start()
    files.full = True
    kept = _records(90)
    for item in kept:
        await memory.add(item)
    while_full = [json.loads(line)["record_id"] for line in memory.exports.export(0)]
    counts = memory.counts()
    files.full = False  # room again: the writer's next retry writes what waits
    await asyncio.wait_for(_until(lambda: len(_ids_in_files(tmp_path)) == 90), 10)
    await memory.add(record("after", timestamp_ms=BASE_MS + 500))
    after = [json.loads(line)["record_id"] for line in memory.exports.export(0)]
    await memory.close()

    assert while_full == [item.record_id for item in kept], "the export has them while the disk is full"
    assert counts.waiting == 90 and counts.lost == 0
    assert _ids_in_files(tmp_path) == sorted([item.record_id for item in kept] + ["after"])
    assert after == [item.record_id for item in kept] + ["after"]


async def _until(predicate: Callable[[], bool]) -> None:
    while not predicate():
        await asyncio.sleep(0.02)


async def test_a_critic_restarted_before_the_disk_had_room_rewrites_the_day_files_from_postgresql(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    files = _FullDisk(tmp_path, tz=UTC)
    clock = lambda: BASE_MS + 1000  # noqa: E731
    first = TieredMemory(files, PgVectorStore(engine), MemoryOptions(retry_secs=0.05), clock=clock)
    await first.start()
    files.full = True
    kept = _records(40)
    for item in kept:
        await first.add(item)
    assert await first.sync()
    await first.close()  # stopped while the disk is still full
    assert _ids_in_files(tmp_path) == []

    second = TieredMemory(DailyFiles(tmp_path, tz=UTC), PgVectorStore(engine), MemoryOptions(), clock=clock)
    await second.start()
    assert await second.sync()
    exported = [json.loads(line)["record_id"] for line in second.exports.export(0)]
    await second.close()

    assert _ids_in_files(tmp_path) == sorted(item.record_id for item in kept)
    assert exported == [item.record_id for item in kept]


# ---- a real full file system, the real critic process ---------------------------------------------


@contextlib.contextmanager
def _small_tmpfs(where: Path) -> Iterator[Path]:
    where.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(directory: Path) -> Path:
    """A file that takes every free byte of ``directory``'s file system."""
    filler = directory / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with contextlib.suppress(OSError):
            for size in (65536, 4096, 1):
                while True:
                    os.write(descriptor, b"\0" * size)
    finally:
        os.close(descriptor)
    return filler


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root; the ENOSPC tests above run")
def test_on_a_full_tmpfs_every_command_the_critic_acknowledged_reaches_its_day_files(
    infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> None:
    with _small_tmpfs(tmp_path / "data") as data, start_critic(infra, migrated_database, tmp_path) as critic:
        assert Path(critic.env["KRONII_DATA_DIR"]) == data
        filler = _fill(data)
        acknowledged = []
        for n in range(90):
            answer = httpx.post(f"{critic.url}/v1/critic/events", timeout=20, json={
                "shell": "run", "session": "full-1", "cwd": "/", "command_line": f"echo full-disk-{n}",
                "exit_status": n % 2})  # fmt: skip
            answer.raise_for_status()
            assert answer.json()["recorded"]
            acknowledged.append(answer.json()["record"]["record_id"])
        exported = httpx.get(f"{critic.url}/v1/critic/export", params={"redact": "false"}, timeout=20)
        while_full = [json.loads(line)["record_id"] for line in exported.text.splitlines()]
        doctor = critic.get("/v1/critic/doctor")
        filler.unlink()
        wait_until(lambda: set(acknowledged) <= set(_ids_in_files(data / "critic")), timeout_s=30,
                   what="every acknowledged record in the day files")  # fmt: skip
        ids = _ids_in_files(data / "critic")
    assert set(acknowledged) <= set(while_full), "the export had them while the disk was full"
    assert any("wait for room" in problem for problem in doctor.get("problems", [])), doctor
    assert sorted(set(ids)) == ids, "each once"
