"""A generated command history for the memory tests: random unit vectors with planted groups of
near-duplicates at known cosines to their anchor, so the true neighbours of an anchor are known."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from kronii.critic.core.model import EMBEDDING_DIM, InvocationRecord, Trigger

__all__ = ["PLANTED_COSINES", "History", "make_history", "near", "record"]

# Cosines of the planted neighbours to their anchor: far above the ~0.05 of two random 384-d vectors.
PLANTED_COSINES = (0.97, 0.94, 0.91, 0.88, 0.85)
BASE_MS = 1_750_000_000_000


def record(
    record_id: str,
    embedding: npt.NDArray[np.float32] | tuple[float, ...] = (),
    *,
    timestamp_ms: int = BASE_MS,
    trigger: Trigger = Trigger.ERROR,
    command_name: str = "make",
    command_line: str = "",
    cwd: str = "/home/[USERNAME_1]/src/kronii",
    exit_status: int = 2,
    error_message: str = "",
) -> InvocationRecord:
    return InvocationRecord(  # noqa: S604 (the record's shell name, nothing is run)
        record_id=record_id,
        timestamp_ms=timestamp_ms,
        trigger=trigger,
        command_name=command_name,
        command_line=command_line or f"{command_name} {record_id}",
        cwd=cwd,
        exit_status=exit_status,
        duration_ms=12,
        shell="bash",
        session="s1",
        error_message=error_message,
        embedding=tuple(float(value) for value in embedding),
    )


def random_unit(rng: np.random.Generator, count: int) -> npt.NDArray[np.float32]:
    vectors = rng.standard_normal((count, EMBEDDING_DIM)).astype(np.float32)
    unit: npt.NDArray[np.float32] = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(
        np.float32
    )
    return unit


def near(anchor: npt.NDArray[np.float32], cosine: float, rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """A unit vector at exactly `cosine` to the unit vector `anchor`."""
    noise = rng.standard_normal(EMBEDDING_DIM).astype(np.float32)
    noise -= float(np.dot(noise, anchor)) * anchor
    noise /= np.linalg.norm(noise)
    vector = cosine * anchor + np.sqrt(1.0 - cosine**2) * noise
    unit: npt.NDArray[np.float32] = (vector / np.linalg.norm(vector)).astype(np.float32)
    return unit


@dataclass(frozen=True)
class History:
    records: list[InvocationRecord]
    matrix: npt.NDArray[np.float32]  # row i is records[i]'s embedding
    anchors: dict[str, npt.NDArray[np.float32]]  # query vector -> planted neighbours' ids below
    planted: dict[str, list[str]]  # anchor name -> ids, nearest first


def make_history(total: int = 10_000, groups: int = 100, seed: int = 15) -> History:
    """`total` records, of which `groups` x 5 are planted around `groups` anchors (the anchors
    themselves are not records); one record a minute, oldest first."""
    rng = np.random.default_rng(seed)
    matrix = random_unit(rng, total)
    anchors: dict[str, npt.NDArray[np.float32]] = {}
    planted: dict[str, list[str]] = {}
    slots = rng.permutation(total)[: groups * len(PLANTED_COSINES)]
    for group in range(groups):
        anchor = random_unit(rng, 1)[0]
        name = f"anchor-{group}"
        anchors[name] = anchor
        members = slots[group * len(PLANTED_COSINES) : (group + 1) * len(PLANTED_COSINES)]
        planted[name] = []
        for slot, cosine in zip(members, PLANTED_COSINES, strict=True):
            matrix[slot] = near(anchor, cosine, rng)
            planted[name].append(f"r{int(slot):05d}")
    records = [
        record(
            f"r{index:05d}",
            matrix[index],
            timestamp_ms=BASE_MS + index * 60_000,
            command_name=f"cmd{index % 50}",
        )
        for index in range(total)
    ]
    return History(records, matrix, anchors, planted)


def with_embedding(item: InvocationRecord, embedding: npt.NDArray[np.float32]) -> InvocationRecord:
    return replace(item, embedding=tuple(float(value) for value in embedding))
