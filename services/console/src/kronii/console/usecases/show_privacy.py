"""The Privacy page's picture: every place kronii keeps something about the person (activity spans
and raw events, captured frames, the pipeline's decisions, the critic's shell records, the audit log),
for how long and how much, and the audit log's last rows with the whole chain verified. A store that
does not answer is a sentence on the page; the others are still shown."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.console.core.captures import FrameUsage
from kronii.console.core.privacy import AuditEntry, ChainCheck, Kept, TableSize
from kronii.console.ports import AuditChain, CaptureFrames, StoreSizes
from kronii.foundation.errors import KroniiError

__all__ = ["KNOWN_TABLES", "PrivacyView", "ShowPrivacy"]

KNOWN_TABLES = (
    "activity_spans",
    "activity_events",
    "capture_objects",
    "pipeline_runs",
    "critic_records",
    "audit_log",
)
AUDIT_TAIL = 25


@dataclass(frozen=True)
class PrivacyView:
    kept: tuple[Kept, ...]
    tail: tuple[AuditEntry, ...]
    chain: ChainCheck | None
    problems: tuple[str, ...]


def _days(days: float) -> str:
    return f"{days:g} days" if days != 1 else "1 day"


class ShowPrivacy:
    def __init__(
        self, capture: CaptureFrames, sizes: StoreSizes | None, audit: AuditChain | None, activity_days: float
    ) -> None:
        self._capture = capture
        self._sizes = sizes
        self._audit = audit
        self._activity_days = activity_days

    async def view(self, whole_chain: bool = False) -> PrivacyView:
        problems: list[str] = []
        tables: dict[str, TableSize] = {}
        usage: FrameUsage | None = None
        tail: list[AuditEntry] = []
        chain: ChainCheck | None = None
        if self._sizes is None or self._audit is None:
            problems.append(
                "The console has no PostgreSQL connection: sizes and the audit log cannot be shown."
            )
        else:
            try:
                tables = {size.table: size for size in await self._sizes.sizes(KNOWN_TABLES)}
                tail = await self._audit.tail(AUDIT_TAIL)
                chain = await self._audit.verify(whole_chain)
            except KroniiError as error:
                problems.append(str(error))
        try:
            usage = await self._capture.usage()
        except KroniiError as error:
            problems.append(str(error))
        return PrivacyView(tuple(self._kept(tables, usage)), tuple(tail), chain, tuple(problems))

    def _kept(self, tables: dict[str, TableSize], usage: FrameUsage | None) -> list[Kept]:
        def table(name: str) -> tuple[int | None, int | None]:
            found = tables.get(name)
            return (found.rows, found.bytes) if found else (None, None)

        activity_days = _days(self._activity_days)
        frames = (
            Kept(
                "Captured frames (redacted; raw originals sealed)",
                "the capture vault: sealed files on disk, their keys in PostgreSQL (capture_objects)",
                f"redacted {_days(usage.redacted_days)}, raw {_days(usage.raw_days) if usage.raw_days else 'not kept'}",
                usage.redacted_objects + usage.raw_objects,
                usage.redacted_bytes + usage.raw_bytes,
                f"{usage.redacted_objects} redacted, {usage.raw_objects} raw",
            )
            if usage is not None
            else Kept("Captured frames", "the capture vault", "unknown: capture did not answer", None, None)
        )
        return [
            Kept(
                "Activity spans (apps, redacted titles, states)",
                "PostgreSQL: activity_spans",
                activity_days,
                *table("activity_spans"),
            ),
            Kept(
                "Raw activity events", "PostgreSQL: activity_events", activity_days, *table("activity_events")
            ),
            frames,
            Kept(
                "Decisions of the pipeline",
                "PostgreSQL: pipeline_runs",
                "until you delete them (not pruned)",
                *table("pipeline_runs"),
            ),
            Kept(
                "Shell commands (redacted)",
                "the critic: day files and PostgreSQL (critic_records)",
                "30 days unless the critic's policy says otherwise",
                *table("critic_records"),
            ),
            Kept(
                "Audit log (who did what, never content)",
                "PostgreSQL: audit_log",
                "kept: an append-only chain",
                *table("audit_log"),
            ),
        ]
