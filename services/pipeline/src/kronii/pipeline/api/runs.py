"""GET /v1/runs?limit=&before=&decision= (newest first) and GET /v1/runs/{run_id}: every pipeline
run with its path through the states, route, plugins, redaction level, model calls and decision;
DELETE /v1/runs?since=&until= | ?all=true: a person's delete of them (and their notifications)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from kronii.edge.limits import PathId
from kronii.edge.openapi import errors
from kronii.foundation.errors import InvalidArgument
from kronii.pipeline.api.convert import run_json
from kronii.pipeline.api.source import OperationsSource
from kronii.pipeline.core.runs import MAX_RUNS_PAGE

__all__ = ["runs_router"]

# `before` is epoch seconds; later than this (2100-01-01) is a mistake, not a page.
MAX_BEFORE = 4_102_444_800.0


def runs_router(operations: OperationsSource) -> APIRouter:
    """GET /v1/runs?limit=&before=&decision= (newest first) and GET /v1/runs/{run_id}."""
    router = APIRouter(prefix="/v1/runs", tags=["runs"])

    @router.get("")
    async def list_runs(
        limit: int = Query(50, ge=1, le=MAX_RUNS_PAGE),
        before: float | None = Query(None, ge=0, le=MAX_BEFORE, allow_inf_nan=False),
        decision: str = Query("", max_length=64),
    ) -> dict[str, Any]:
        if not 1 <= limit <= MAX_RUNS_PAGE:
            raise InvalidArgument(f"limit must be between 1 and {MAX_RUNS_PAGE}", field="limit")
        records = await operations().runs(limit=limit, before=before, decision=decision)
        return {
            "runs": [run_json(record) for record in records],
            # Pass as `before` for the next page; absent on the last one.
            "next_before": records[-1].created_at if len(records) == limit else None,
        }

    @router.delete("", responses=errors(400))
    async def delete_runs(
        request: Request,
        since: float | None = Query(None, ge=0, le=MAX_BEFORE, allow_inf_nan=False),
        until: float | None = Query(None, ge=0, le=MAX_BEFORE, allow_inf_nan=False),
        everything: bool = Query(False, alias="all"),
    ) -> dict[str, Any]:
        """The runs made in [since, until) (epoch seconds) and the notifications sent then, or every
        one with all=true: {"deleted_runs": n, "deleted_notifications": m}, audited."""
        if everything == (since is not None or until is not None) or (since is None) != (until is None):
            raise InvalidArgument("name what to delete: since and until (epoch seconds), or all=true")
        caller = getattr(request.state, "caller", None)
        actor = f"person:{caller.actor}" if caller is not None else "person"
        done = await operations().forget_runs(actor, since, until)
        return {"deleted_runs": done.runs, "deleted_notifications": done.notifications}

    @router.get("/{run_id}", responses=errors(404))
    async def get_run(run_id: PathId) -> dict[str, Any]:
        return run_json(await operations().run(run_id))

    return router
