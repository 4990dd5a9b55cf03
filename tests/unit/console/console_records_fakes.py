"""In-process stand-ins for the ports of the Captures, Decisions, Shell and Privacy pages: they keep
what they were asked and answer from plain lists, so the use cases' tests check what was asked of the
services and what the page would show."""

from __future__ import annotations

from collections.abc import Sequence

from kronii.console.core.captures import Forgotten, Frame, FrameUsage
from kronii.console.core.decisions import Control, Decision
from kronii.console.core.privacy import AuditEntry, ChainCheck, TableSize
from kronii.console.core.shell import Cluster, ShellHit
from kronii.console.ports import ServiceNotAnswering
from kronii.foundation.errors import NotFound, PermissionDenied

PRESENCE_REFUSAL = (
    "reading screenshots needs a person at a terminal: run `kronii capture get` from an interactive "
    "terminal (its standard input is not a terminal)"
)


class FakeCapture:
    def __init__(
        self, frames: Sequence[Frame] = (), *, answering: bool = True, present: bool = False
    ) -> None:
        self.stored = list(frames)
        self.answering = answering
        self.present = present
        self.asked: list[tuple[str, object]] = []

    def _check(self) -> None:
        if not self.answering:
            raise ServiceNotAnswering("capture", "it cannot be reached (is `kronii up` running it?)")

    async def frames(self, since: float, until: float) -> list[Frame]:
        self._check()
        self.asked.append(("frames", (since, until)))
        return [frame for frame in self.stored if since <= frame.created_at < until]

    async def thumbnail(self, screenshot_id: str) -> bytes:
        self._check()
        return b"png:" + screenshot_id.encode()

    async def open_frame(self, screenshot_id: str) -> bytes:
        self._check()
        self.asked.append(("open", screenshot_id))
        if not self.present:
            raise PermissionDenied(PRESENCE_REFUSAL)
        return b"full:" + screenshot_id.encode()

    async def usage(self) -> FrameUsage:
        self._check()
        return FrameUsage(len(self.stored), 1000 * len(self.stored), 0, 0, 1, 7)

    def _gone(self, keep: list[Frame]) -> Forgotten:
        deleted = len(self.stored) - len(keep)
        self.stored = keep
        return Forgotten(deleted, deleted)

    async def forget_one(self, screenshot_id: str) -> Forgotten:
        self._check()
        self.asked.append(("forget_one", screenshot_id))
        if all(frame.screenshot_id != screenshot_id for frame in self.stored):
            raise NotFound("that frame is gone (deleted, or past its retention)")
        return self._gone([frame for frame in self.stored if frame.screenshot_id != screenshot_id])

    async def forget_between(self, since: float, until: float) -> Forgotten:
        self._check()
        self.asked.append(("forget_between", (since, until)))
        return self._gone([frame for frame in self.stored if not since <= frame.created_at < until])

    async def forget_all(self) -> Forgotten:
        self._check()
        self.asked.append(("forget_all", None))
        return self._gone([])


class FakeSensor:
    def __init__(self, *, answering: bool = True) -> None:
        self.answering = answering
        self.asked: list[tuple[str, object]] = []

    def _check(self) -> None:
        if not self.answering:
            raise ServiceNotAnswering("sensor", "it did not answer in time")

    async def delete_between(self, since: float, until: float) -> tuple[int, int]:
        self._check()
        self.asked.append(("between", (since, until)))
        return 12, 30

    async def delete_app(self, app: str) -> tuple[int, int]:
        self._check()
        self.asked.append(("app", app))
        return 4, 9

    async def delete_all(self) -> tuple[int, int]:
        self._check()
        self.asked.append(("all", None))
        return 100, 250


class FakeDecisions:
    def __init__(self, *, answering: bool = True) -> None:
        self.answering = answering
        self.asked: list[tuple[str, object]] = []

    async def forget_between(self, since: float, until: float) -> tuple[int, int]:
        if not self.answering:
            raise ServiceNotAnswering("pipeline", "it did not answer in time")
        self.asked.append(("between", (since, until)))
        return 3, 1

    async def forget_all(self) -> tuple[int, int]:
        if not self.answering:
            raise ServiceNotAnswering("pipeline", "it did not answer in time")
        self.asked.append(("all", None))
        return 8, 2


class FakePipeline:
    def __init__(
        self, runs: Sequence[Decision] = (), controls: Sequence[Control] = (), *, answering: bool = True
    ) -> None:
        self.stored = list(runs)
        self.in_force = list(controls)
        self.answering = answering
        self.asked: list[tuple[str, object]] = []

    def _check(self) -> None:
        if not self.answering:
            raise ServiceNotAnswering("pipeline", "it cannot be reached (is `kronii up` running it?)")

    async def runs(self, limit: int, before: float | None) -> tuple[list[Decision], float | None]:
        self._check()
        self.asked.append(("runs", (limit, before)))
        older = [run for run in self.stored if before is None or run.created_at < before]
        page = older[:limit]
        return page, page[-1].created_at if len(page) == limit else None

    async def controls(self) -> list[Control]:
        self._check()
        return list(self.in_force)

    async def snooze(self, notification_id: str, seconds: int) -> Control:
        self._check()
        self.asked.append(("snooze", (notification_id, seconds)))
        if notification_id == "gone":
            raise NotFound("the pipeline no longer knows that notification")
        return Control("suggestion:open_url", 1_800_003_600.0, False, notification_id)

    async def mute(self, notification_id: str) -> Control:
        self._check()
        self.asked.append(("mute", notification_id))
        return Control("suggestion:open_url", None, True, notification_id)

    async def clear(self, source_key: str) -> None:
        self._check()
        self.asked.append(("clear", source_key))


class FakeCritic:
    def __init__(
        self, hits: Sequence[ShellHit] = (), clusters: Sequence[Cluster] = (), *, answering: bool = True
    ) -> None:
        self.hits = list(hits)
        self.groups = list(clusters)
        self.answering = answering
        self.asked: list[tuple[str, object]] = []

    def _check(self) -> None:
        if not self.answering:
            raise ServiceNotAnswering("critic", "it cannot be reached (is `kronii up` running it?)")

    async def search(self, text: str, take: int, failed_only: bool) -> list[ShellHit]:
        self._check()
        self.asked.append(("search", (text, take, failed_only)))
        found = [hit for hit in self.hits if not failed_only or hit.record.failed]
        return found[:take]

    async def similar(self, record_id: str, k: int) -> list[ShellHit]:
        self._check()
        self.asked.append(("similar", (record_id, k)))
        return [hit for hit in self.hits if hit.record.record_id != record_id and hit.record.failed][:k]

    async def clusters(self) -> list[Cluster]:
        self._check()
        return list(self.groups)


class FakeAuditChain:
    def __init__(self, entries: Sequence[AuditEntry] = (), broken_at: int | None = None) -> None:
        self.entries = list(entries)
        self.broken_at = broken_at

    async def tail(self, limit: int) -> list[AuditEntry]:
        return self.entries[:limit]

    async def verify(self, whole: bool = False) -> ChainCheck:
        reason = "its content does not match its hash (the row was altered)" if self.broken_at else ""
        return ChainCheck(len(self.entries), self.broken_at, reason)


class FakeSizes:
    def __init__(self, sizes: dict[str, tuple[int, int]]) -> None:
        self.known = sizes

    async def sizes(self, tables: Sequence[str]) -> list[TableSize]:
        return [TableSize(name, *self.known[name]) for name in tables if name in self.known]
