"""HTTP for the person's own processes (the console): the stored redacted screenshots of a range, a
small redacted thumbnail, what is kept, and a delete of one, a range or all of them.

These routes answer only a caller the kernel places as the user kronii runs as (the access
middleware puts its Caller in the request's state and refuses other local users); a caller it
cannot place (another host, a container) is refused here even with a token. A full screenshot is
not served here: it takes the person's proof of presence, through the Unix socket, as `kronii
capture get` does.

    GET    /v1/capture/shelf?since=&until=&limit=      -> {"screenshots": [...]}
    GET    /v1/capture/shelf/usage                     -> {"redacted": {...}, "raw": {...}, "retention": {...}}
    GET    /v1/capture/shelf/{id}/thumbnail?size=      -> {"screenshot_id", "png_base64"}
    DELETE /v1/capture/shelf/{id}                      -> the delete's report
    DELETE /v1/capture/shelf?since=&until= | ?all=true -> the delete's report
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Query, Request
from kronii.capture.core.screenshots import ForgetReport, ShelfItem
from kronii.capture.usecases.person_shelf import PersonShelf
from kronii.edge.limits import PathId
from kronii.edge.openapi import errors
from kronii.foundation.errors import InvalidArgument, PermissionDenied

__all__ = ["ShelfSource", "shelf_router"]

ShelfSource = Callable[[], PersonShelf]

OWN_PROCESSES_ONLY = "these routes answer only the local processes of the user kronii runs as"


def person_actor(request: Request) -> str:
    """`local:uid:<uid>` of a caller the kernel placed; PermissionDenied for anyone else."""
    caller = getattr(request.state, "caller", None)
    uid = getattr(caller, "uid", None)
    if not isinstance(uid, int):
        raise PermissionDenied(OWN_PROCESSES_ONLY)
    return f"local:uid:{uid}"


def parse_time(value: str, name: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidArgument(
            f"{name} is not an ISO-8601 time (e.g. 2026-12-06T00:00:00Z)", field=name
        ) from None


def item_json(item: ShelfItem) -> dict[str, Any]:
    return {
        "screenshot_id": item.screenshot_id,
        "job_id": item.job_id,
        "app": item.app_name or None,
        "width": item.width,
        "height": item.height,
        "redaction_level": item.redaction_level,
        "masked_fraction": round(item.masked_fraction, 4),
        "size_bytes": item.size_bytes,
        "created_at": item.created_at.isoformat(),
    }


def report_json(report: ForgetReport) -> dict[str, Any]:
    return {
        "deleted": report.objects_deleted,
        "files_removed": report.files_removed,
        "files_missing": report.files_missing,
        "files_kept": report.files_kept,
    }


def shelf_router(shelf: ShelfSource) -> APIRouter:
    router = APIRouter(prefix="/v1/capture/shelf", tags=["capture"], responses=errors(403, 404))

    @router.get("")
    async def listing(
        request: Request,
        since: str = Query(..., max_length=64),
        until: str = Query(..., max_length=64),
        limit: int = Query(500, ge=1, le=2000),
    ) -> dict[str, Any]:
        """The live redacted screenshots made in [since, until), oldest first."""
        person_actor(request)
        found = await shelf().between(parse_time(since, "since"), parse_time(until, "until"), limit)
        return {"screenshots": [item_json(item) for item in found]}

    @router.get("/usage")
    async def usage(request: Request) -> dict[str, Any]:
        """What the vault holds (live objects, sealed bytes, the oldest) and how long it keeps them."""
        person_actor(request)
        desk = shelf()
        held = await desk.usage()
        return {
            "redacted": {"objects": held.redacted_objects, "bytes": held.redacted_bytes},
            "raw": {"objects": held.raw_objects, "bytes": held.raw_bytes},
            "oldest": held.oldest.isoformat() if held.oldest else None,
            "retention": {"raw_days": desk.retention.raw_days, "redacted_days": desk.retention.redacted_days},
        }

    @router.get("/{screenshot_id}/thumbnail")
    async def thumbnail(
        screenshot_id: PathId, request: Request, size: int = Query(320, ge=1, le=4096)
    ) -> dict[str, Any]:
        """A PNG of the redacted screenshot scaled to fit `size` pixels (64..640), base64."""
        person_actor(request)
        png = await shelf().thumbnail(screenshot_id, size)
        return {"screenshot_id": screenshot_id, "png_base64": base64.b64encode(png).decode("ascii")}

    @router.delete("/{screenshot_id}")
    async def forget_one(screenshot_id: PathId, request: Request) -> dict[str, Any]:
        """The screenshot and the other objects of its job: files and rows."""
        return report_json(await shelf().forget_one(person_actor(request), screenshot_id))

    @router.delete("")
    async def forget_many(
        request: Request,
        since: str = Query("", max_length=64),
        until: str = Query("", max_length=64),
        everything: bool = Query(False, alias="all"),
    ) -> dict[str, Any]:
        """Every object made in [since, until), or every object with all=true."""
        actor = person_actor(request)
        if everything and not since and not until:
            return report_json(await shelf().forget_all(actor))
        if since and until and not everything:
            start, end = parse_time(since, "since"), parse_time(until, "until")
            return report_json(await shelf().forget_between(actor, start, end))
        raise InvalidArgument("name what to delete: since and until, or all=true (not both)")

    return router
