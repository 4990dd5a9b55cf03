"""The kept nightly clusters over HTTP (GET /v1/critic/clusters): read from the real day files of the
retention window (older ones are not shown), newest day first, each with its leader's command and
error and its records' ids; none kept is an empty list, not an error."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, cast

from fastapi import FastAPI
from fastapi.testclient import TestClient
from kronii.critic.adapters.daily_files import DailyFiles
from kronii.critic.adapters.memory_upkeep import MemoryUpkeeper
from kronii.critic.api.http_api import critic_router
from kronii.critic.core.memory import MemoryOptions
from kronii.critic.usecases.list_clusters import ListClusters
from kronii.critic.usecases.operations import CriticOperations

NOW_MS = int(datetime(2026, 12, 6, 12, tzinfo=UTC).timestamp() * 1000)


def _day(files: DailyFiles, day: date, *groups: tuple[str, list[str]]) -> None:
    content: dict[str, Any] = {
        "day": day.isoformat(),
        "threshold": 0.92,
        "groups": [
            {"cluster_id": cid, "record_ids": ids, "command_line": "git push", "error_message": "denied"}
            for cid, ids in groups
        ],
    }
    files.write_clusters(day, content)


def _client(files: DailyFiles) -> TestClient:
    upkeep = MemoryUpkeeper(files, None, MemoryOptions(retention_days=30), clock=lambda: NOW_MS)
    nothing = cast(Any, None)
    operations = CriticOperations(
        record=nothing, search=nothing, similar=nothing, export=nothing, doctor=nothing, mute=nothing,
        clusters=ListClusters(upkeep),
    )  # fmt: skip
    app = FastAPI()
    app.include_router(critic_router(lambda: operations, clock=lambda: NOW_MS))
    return TestClient(app)


def test_the_kept_clusters_of_the_window_are_listed_newest_day_first(tmp_path: Path) -> None:
    files = DailyFiles(tmp_path / "critic", UTC)
    _day(files, date(2026, 12, 4), ("20261204-1", ["a", "b"]))
    _day(files, date(2026, 12, 5), ("20261205-1", ["c", "d", "e"]), ("20261205-2", ["f", "g"]))
    _day(files, date(2026, 10, 1), ("20261001-1", ["old", "older"]))  # past the 30 days kept

    with _client(files) as http:
        answer = http.get("/v1/critic/clusters")

    assert answer.status_code == 200
    clusters = answer.json()["clusters"]
    assert [c["cluster_id"] for c in clusters] == ["20261205-2", "20261205-1", "20261204-1"]
    assert clusters[1] == {
        "cluster_id": "20261205-1", "day": "2026-12-05", "command_line": "git push", "error_message": "denied",
        "record_ids": ["c", "d", "e"],
    }  # fmt: skip


def test_no_clusters_kept_is_an_empty_list(tmp_path: Path) -> None:
    with _client(DailyFiles(tmp_path / "critic", UTC)) as http:
        answer = http.get("/v1/critic/clusters")

    assert answer.status_code == 200 and answer.json() == {"clusters": []}
