"""The person's routes on the capture service (api.http_person) in process: a caller the kernel
placed as the user gets the listing, thumbnails and deletes; a caller it could not place is refused
even though the access middleware let its token through; bad ranges are 400 with a sentence."""

from __future__ import annotations

import base64
from collections.abc import MutableMapping
from datetime import UTC, datetime
from typing import Any

import httpx
from fastapi import FastAPI
from kronii.capture.api.http_person import shelf_router
from kronii.capture.core.screenshots import ForgetReport, ShelfItem, ShelfUsage
from kronii.capture.ports import ObjectMissing
from kronii.capture.usecases.person_shelf import PersonShelf, Retention
from kronii.edge.access import Caller
from kronii.edge.api_edge import install_error_handler

_DAY = datetime(2026, 12, 1, 9, tzinfo=UTC)


class FakeShelf:
    def __init__(self) -> None:
        self.items = {"a" * 24: ShelfItem("a" * 24, "job-1", "xterm", 800, 500, "amber", 0.1, 900, _DAY)}
        self.forgotten: list[tuple[str, Any]] = []

    async def between(self, since: datetime, until: datetime, limit: int) -> list[ShelfItem]:
        return [item for item in self.items.values() if since <= item.created_at < until][:limit]

    async def thumbnail(self, screenshot_id: str, max_side: int) -> bytes:
        if screenshot_id not in self.items:
            raise ObjectMissing(screenshot_id)
        return b"thumb-%d" % max_side

    async def usage(self) -> ShelfUsage:
        return ShelfUsage(len(self.items), 900, 0, 0, _DAY)

    def _report(self, ids: list[str]) -> ForgetReport:
        for object_id in ids:
            self.items.pop(object_id, None)
        return ForgetReport(len(ids), len(ids), 0, 0, tuple(ids))

    async def forget_one(self, screenshot_id: str) -> ForgetReport:
        if screenshot_id not in self.items:
            raise ObjectMissing(screenshot_id)
        self.forgotten.append(("one", screenshot_id))
        return self._report([screenshot_id])

    async def forget_between(self, since: datetime, until: datetime) -> ForgetReport:
        self.forgotten.append(("range", (since, until)))
        return self._report([key for key, item in self.items.items() if since <= item.created_at < until])

    async def forget_all(self) -> ForgetReport:
        self.forgotten.append(("all", None))
        return self._report(list(self.items))


class Audit:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    async def __call__(self, **row: Any) -> None:
        self.rows.append(row)


def client(shelf: FakeShelf, audit: Audit, caller: Caller) -> httpx.AsyncClient:
    app = FastAPI()
    install_error_handler(app)
    person = PersonShelf(shelf, Retention(1, 7), audit)
    app.include_router(shelf_router(lambda: person))

    async def placed(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        scope.setdefault("state", {})["caller"] = caller  # what the access middleware leaves
        await app(scope, receive, send)

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=placed), base_url="http://capture")


async def test_the_users_own_process_lists_a_day_and_gets_a_thumbnail() -> None:
    async with client(FakeShelf(), Audit(), Caller(1000)) as http:
        listed = await http.get(
            "/v1/capture/shelf", params={"since": "2026-12-01T00:00:00Z", "until": "2026-12-02T00:00:00Z"}
        )
        thumb = await http.get(f"/v1/capture/shelf/{'a' * 24}/thumbnail", params={"size": 200})
        usage = await http.get("/v1/capture/shelf/usage")

    assert listed.status_code == 200
    assert [item["app"] for item in listed.json()["screenshots"]] == ["xterm"]
    assert listed.json()["screenshots"][0]["redaction_level"] == "amber"
    assert base64.b64decode(thumb.json()["png_base64"]) == b"thumb-200"
    assert usage.json()["retention"] == {"raw_days": 1, "redacted_days": 7}


async def test_a_caller_the_kernel_could_not_place_is_refused_and_nothing_is_deleted() -> None:
    shelf = FakeShelf()
    async with client(shelf, Audit(), Caller(None, "10.0.0.7")) as http:
        listed = await http.get(
            "/v1/capture/shelf", params={"since": "2026-12-01T00:00:00Z", "until": "2026-12-02T00:00:00Z"}
        )
        deleted = await http.delete("/v1/capture/shelf", params={"all": "true"})

    assert listed.status_code == 403 and deleted.status_code == 403
    assert "local processes of the user" in deleted.json()["detail"]
    assert shelf.forgotten == [] and len(shelf.items) == 1


async def test_deletes_name_one_range_or_all_and_are_audited_with_the_caller() -> None:
    shelf, audit = FakeShelf(), Audit()
    async with client(shelf, audit, Caller(1000)) as http:
        neither = await http.delete("/v1/capture/shelf")
        both = await http.delete(
            "/v1/capture/shelf", params={"all": "true", "since": "2026-12-01T00:00:00Z", "until": "x"}
        )
        backwards = await http.delete(
            "/v1/capture/shelf", params={"since": "2026-12-02T00:00:00Z", "until": "2026-12-01T00:00:00Z"}
        )
        not_a_time = await http.delete("/v1/capture/shelf", params={"since": "monday", "until": "tuesday"})
        day = await http.delete(
            "/v1/capture/shelf", params={"since": "2026-12-01T00:00:00Z", "until": "2026-12-02T00:00:00Z"}
        )
        unknown = await http.delete(f"/v1/capture/shelf/{'b' * 24}")

    assert [r.status_code for r in (neither, both, backwards, not_a_time)] == [400, 400, 400, 400]
    assert "since and until, or all=true" in neither.json()["detail"]
    assert "later than since" in backwards.json()["detail"]
    assert "ISO-8601" in not_a_time.json()["detail"]
    assert day.status_code == 200 and day.json()["deleted"] == 1
    assert unknown.status_code == 404
    assert [row["action"] for row in audit.rows] == ["capture.delete"]
    assert audit.rows[0]["actor"] == "local:uid:1000" and audit.rows[0]["scope"] == "range"


async def test_a_thumbnail_larger_than_the_limit_is_refused_with_a_sentence() -> None:
    async with client(FakeShelf(), Audit(), Caller(1000)) as http:
        huge = await http.get(f"/v1/capture/shelf/{'a' * 24}/thumbnail", params={"size": 4000})

    assert huge.status_code == 400
    assert "between 64 and 640" in huge.json()["detail"]
