"""The commands the critic's use cases take and the results they return (frozen values; the api
builds the commands from the wire and turns the results back into it). A reported command is a
core.model.InvocationEvent already."""

from __future__ import annotations

from dataclasses import dataclass

from kronii.critic.core.model import InvocationRecord, Trigger
from kronii.critic.core.retrieval import Hit

__all__ = ["ExportQuery", "Reported", "SearchQuery", "Similar", "SimilarQuery"]


@dataclass(frozen=True)
class SearchQuery:
    """`kronii critic search`: ``text`` "" matches every record; ``since_ms`` 0 means all time;
    ``take`` is already within 1..500."""

    text: str
    take: int
    trigger: Trigger | None = None
    command: str = ""
    failed_only: bool = False
    since_ms: int = 0


@dataclass(frozen=True)
class SimilarQuery:
    """Similar to ``record_id``, or (when it is "") to the last failing command of ``session``, else
    of ``cwd``; at least one of the three is set; ``k`` is within 1..100."""

    record_id: str
    session: str
    cwd: str
    k: int


@dataclass(frozen=True)
class ExportQuery:
    """`kronii critic export`: the kept records from ``since_ms`` (0: all); ``redact`` masks paths
    and personal data too, for sharing."""

    since_ms: int = 0
    redact: bool = True


@dataclass(frozen=True)
class Reported:
    """What became of a reported event: the record as kept (None when nothing was kept) and the
    hint for the next prompt ("" for none)."""

    record: InvocationRecord | None
    hint: str = ""


@dataclass(frozen=True)
class Similar:
    anchor: InvocationRecord
    hits: list[Hit]
