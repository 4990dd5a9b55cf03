"""The HTTP app every service serves: the shared edge (refusals, readiness gate, limits, OpenAPI,
access check, error answers), the request metrics, `/healthz`, `/readyz` and `/metrics`, then the
service's own routers."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse
from kronii.edge.access import OPEN_HTTP_PATHS, AccessMiddleware, AccessPolicy
from kronii.edge.api_edge import RefusalMiddleware, install_error_handler
from kronii.edge.limits import DEFAULT_BODY_LIMIT, install_limits
from kronii.edge.openapi import install_openapi
from kronii.runtime.context import ServiceContext
from kronii.runtime.readiness import GateMiddleware, ReadinessGate
from kronii.runtime.spec import DependencyStatus
from kronii.stores.durable import install_unavailable_handlers
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

__all__ = ["build_http_app"]


def build_http_app(
    ctx: ServiceContext,
    *,
    gate: ReadinessGate,
    access: AccessPolicy,
    dependency_status: Callable[[], Awaitable[dict[str, DependencyStatus]]],
    routers: Iterable[APIRouter],
    edge: Iterable[tuple[Any, dict[str, Any]]] = (),
    max_body: int = DEFAULT_BODY_LIMIT,
) -> FastAPI:
    """`edge`: a service's own middleware after the access check, before the limits (the console's)."""
    name = ctx.spec.name
    app = FastAPI(title=f"kronii {name}", version="0.1.0", docs_url="/docs", redoc_url=None)
    metrics = ctx.metrics
    _install_edge(app, gate, access, edge, max_body)

    @app.middleware("http")
    async def count_requests(request: Request, call_next: Any) -> Response:
        started = time.perf_counter()
        response: Response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        metrics.http_requests.labels(name, path, str(response.status_code)).inc()
        metrics.http_duration.labels(name, path).observe(time.perf_counter() - started)
        return response

    @app.get("/healthz", tags=["health"])
    async def healthz() -> dict[str, Any]:
        return {"status": "ok", "service": name, "uptime_s": round(time.time() - ctx.started_at, 1)}

    @app.get("/readyz", tags=["health"])
    async def readyz() -> JSONResponse:
        status = await dependency_status()
        ready = all(item.ready for item in status.values() if item.required)
        body = {
            "ready": ready,
            "service": name,
            "dependencies": {
                key: {"ready": item.ready, "required": item.required, "detail": item.detail}
                for key, item in status.items()
            },
        }
        return JSONResponse(body, status_code=200 if ready else 503)

    @app.get("/metrics", tags=["health"])
    async def prometheus_metrics() -> Response:
        # Probed on every scrape too, so kronii_dependency_ready is current even where nothing
        # polls /readyz (host agents under `kronii up`).
        await dependency_status()
        return Response(generate_latest(ctx.registry), media_type=CONTENT_TYPE_LATEST)

    for router in routers:
        app.include_router(router)
    return app


def _install_edge(
    app: FastAPI,
    gate: ReadinessGate,
    access: AccessPolicy,
    edge: Iterable[tuple[Any, dict[str, Any]]],
    max_body: int,
) -> None:
    app.add_middleware(RefusalMiddleware)  # innermost: sees what a route lets escape
    app.add_middleware(GateMiddleware, gate=gate)
    install_limits(app, max_body=max_body)  # inside the access check: a refused caller's body is never read
    install_openapi(app, open_paths=OPEN_HTTP_PATHS, token_free=access.rules.token_free_http)
    for middleware, options in edge:
        app.add_middleware(middleware, **options)
    # Added first, so it sits inside the request counter: refusals are counted too.
    app.add_middleware(AccessMiddleware, policy=access)
    install_unavailable_handlers(app)
    install_error_handler(app)
