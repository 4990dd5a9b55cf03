"""Every write route answers a full store and a service still starting with 503, Retry-After and a
sentence (gRPC: UNAVAILABLE with a sentence and `retry-after`), never 500 / INTERNAL; and nothing is
acknowledged while the service says it is not ready.

The routes are the services' real routers (pipeline triggers, vision plans, capture requests) on the
app the service runtime builds (`_Runtime.http_app`, the shared edge), with the fault raised where
the store would raise it: the driver's own exception, as psycopg, asyncpg, SQLAlchemy, redis-py and
the OS raise it. gRPC is the vision engine's servicer on the runtime's own server and interceptors.
"""

from __future__ import annotations

import errno
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, cast

import grpc
import httpx
import psycopg.errors
import pytest
import redis.exceptions
import sqlalchemy.exc
from fastapi import APIRouter
from kronii.capture.api.http_api import capture_router
from kronii.edge.access import AccessRules
from kronii.foundation.errors import StillStarting, StorageFull
from kronii.foundation.settings import ServiceSettings
from kronii.launcher.infra import free_port
from kronii.pipeline.api.triggers import pipeline_router
from kronii.pipeline.core.commands import TriggerCommand, TriggerOutcome
from kronii.pipeline.usecases.operations import PipelineOperations
from kronii.runtime.service import _Runtime
from kronii.runtime.spec import DependencyStatus, ServiceSpec
from kronii.stores.durable import refusal_for
from kronii.vision.api.grpc_api import VisionServicer
from kronii.vision.api.http_api import vision_router
from kronii.vision.usecases.operations import VisionOperations
from kronii.vision.v1 import vision_pb2 as vpb
from kronii.vision.v1 import vision_pb2_grpc as vpb_grpc

from tests.unit.capture.test_capture_http_routes import desk_of, sign_in
from tests.unit.capture.test_capture_job_use_case import rig

TOKEN = "write-refusals-test-token"
PG_FILE = 'could not extend file "base/16384/24576": No space left on device'


class _AsyncpgDiskFull(Exception):
    """What asyncpg raises (asyncpg.exceptions.DiskFullError): only its SQLSTATE says "disk full"."""

    sqlstate = "53100"


_AsyncpgDiskFull.__module__ = "asyncpg.exceptions"


def _wrapped_misconf() -> Exception:
    try:
        raise redis.exceptions.ResponseError(
            "MISCONF Errors writing to the AOF file: No space left on device"
        )
    except redis.exceptions.ResponseError as error:
        try:
            raise RuntimeError("the queue did not take the job") from error
        except RuntimeError as outer:
            return outer


FAULTS: dict[str, Callable[[], BaseException]] = {
    "ENOSPC": lambda: OSError(errno.ENOSPC, "No space left on device"),
    "EDQUOT": lambda: OSError(errno.EDQUOT, "Disk quota exceeded"),
    "redis MISCONF": lambda: redis.exceptions.ResponseError(
        "MISCONF Errors writing to the AOF file: No space left on device"
    ),
    "redis MISCONF in a pipeline": lambda: redis.exceptions.ResponseError(
        "Command # 1 (SET k v) of pipeline caused error: MISCONF Errors writing to the AOF file"
    ),
    "redis MISCONF in a script": lambda: redis.exceptions.ResponseError(
        "Error running script (call to f_1): @user_script:2: -MISCONF Errors writing to the AOF file"
    ),
    "redis OOM": lambda: redis.exceptions.OutOfMemoryError(
        "OOM command not allowed when used memory > 'maxmemory'."
    ),
    "psycopg DiskFull": lambda: psycopg.errors.DiskFull(PG_FILE),
    "sqlalchemy DiskFull": lambda: sqlalchemy.exc.OperationalError(
        "INSERT INTO runs", {}, psycopg.errors.DiskFull(PG_FILE)
    ),
    "asyncpg DiskFullError": lambda: _AsyncpgDiskFull(PG_FILE),
    "MISCONF wrapped in a service's error": _wrapped_misconf,
    "the service still starting": lambda: StillStarting("the pipeline is still starting"),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_each_fault_is_a_503_kind_with_a_sentence_of_its_own(name: str) -> None:
    refusal = refusal_for(FAULTS[name]())
    assert refusal is not None and refusal.http_status == 503 and refusal.grpc_status == "UNAVAILABLE"
    assert refusal.retry_after_secs >= 1
    assert "base/16384" not in refusal.message, "no path crosses an API"
    kind = StillStarting if "starting" in name else StorageFull
    assert isinstance(refusal, kind)


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.EACCES, "Permission denied"),
        redis.exceptions.ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
        psycopg.errors.UniqueViolation("duplicate key"),
        ValueError("No space left on device"),  # a service's own bug that says the words
    ],
)
def test_a_real_failure_is_not_called_a_full_store(error: Exception) -> None:
    assert refusal_for(error) is None


# ---- the runtime's app with the services' real write routes ---------------------------------------


class _Settings(ServiceSettings):
    pass


class _Operations:
    """The vision engine's operations, each failing as its store does."""

    def __init__(self, fault: Callable[[], BaseException]) -> None:
        self.fault = fault

    async def plan(self, command: Any) -> Any:
        raise self.fault()

    def plans(self) -> tuple[Any, ...]:
        return ()

    def show(self, plan_id: str) -> Any:
        raise self.fault()

    async def approve(self, decision: Any) -> Any:
        raise self.fault()

    async def deny(self, decision: Any) -> Any:
        raise self.fault()

    def run(self, plan_id: str) -> Any:
        raise self.fault()

    async def context(self) -> Any:
        raise self.fault()

    async def person(self, facts: Any) -> str:
        return "person:uid:1000"


class _App:
    """A service whose routers are the pipeline's, vision's and capture's, over faulty stores."""

    # Capture's agents carry their own session tokens, which its routes check themselves.
    access_rules = AccessRules(self_authenticating=True)

    def __init__(self) -> None:
        self.fault: Callable[[], BaseException] = lambda: RuntimeError("no fault chosen")
        self.failing = False
        self.ready = True
        self.submitted: list[TriggerCommand] = []
        self.capture_rig = rig()
        self.capture_desk = desk_of(self.capture_rig)
        self.operations = _Operations(lambda: self.fault())

        async def failing_request(*_args: Any) -> Any:
            raise self.fault()

        self.capture_desk.request_capture = failing_request  # type: ignore[method-assign,assignment]

    async def submit(self, command: TriggerCommand) -> TriggerOutcome:
        if self.failing:
            raise self.fault()
        self.submitted.append(command)
        return TriggerOutcome(command.kind, "opened")

    async def start(self, ctx: Any) -> None:
        pass

    async def stop(self) -> None:
        pass

    def routers(self) -> Iterable[APIRouter]:
        return [
            pipeline_router(lambda: cast(PipelineOperations, self)),
            vision_router(lambda: cast(VisionOperations, self.operations)),
            capture_router(lambda: self.capture_desk),
        ]

    def add_to_grpc(self, server: grpc.aio.Server) -> Iterable[str]:
        vpb_grpc.add_VisionServicer_to_server(
            VisionServicer(lambda: cast(VisionOperations, self.operations)), server
        )
        return [vpb.DESCRIPTOR.services_by_name["Vision"].full_name]

    def readiness(self) -> dict[str, DependencyStatus]:
        return {"engine": DependencyStatus(self.ready, "" if self.ready else "the engine stopped")}


_APP = _App()


def app_factory() -> _App:
    return _APP


@pytest.fixture
def runtime() -> _Runtime:
    global _APP
    _APP = _App()
    spec = ServiceSpec(
        name="writer", settings_cls=_Settings, app=f"{__name__}:app_factory", needs=frozenset()
    )
    return _Runtime(spec, _Settings(api_token=TOKEN, grpc_port=free_port(), host="127.0.0.1"))


@pytest.fixture
async def http(runtime: _Runtime) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=runtime.http_app())
    async with httpx.AsyncClient(
        transport=transport, base_url="http://writer:8999", headers={"authorization": f"Bearer {TOKEN}"}
    ) as client:
        yield client


# (method, path, JSON body): every write route of the three services' intake.
WRITES: list[tuple[str, dict[str, Any]]] = [
    ("/v1/triggers", {"kind": "manual", "source": "cli"}),
    ("/v1/vision/plans", {"intent": "open the editor"}),
    ("/v1/vision/plans/p1/approve", {}),
    ("/v1/vision/plans/p1/deny", {}),
    ("/v1/vision/plans/p1/run", {}),
    ("/v1/capture/requests", {"process_id": 4242, "window_id": 77}),
]


async def _post(http: httpx.AsyncClient, path: str, body: dict[str, Any]) -> httpx.Response:
    headers = dict(http.headers)
    if path.startswith("/v1/capture/"):
        # capture's own sessions: signed in on its in-process desk, as an agent does.
        headers["authorization"] = (await sign_in(http))["authorization"]
    return await http.post(path, json=body, headers=headers)


def _assert_refused(response: httpx.Response, what: str) -> None:
    assert response.status_code == 503, f"{what}: {response.status_code} {response.text}"
    assert int(response.headers["retry-after"]) >= 1, what
    detail = response.json()["detail"]
    assert isinstance(detail, str) and len(detail.split()) >= 4, f"{what}: not a sentence: {detail!r}"
    assert "base/16384" not in detail and "Traceback" not in detail


@pytest.mark.parametrize("fault", sorted(set(FAULTS) - {"the service still starting"}))
async def test_every_write_route_answers_a_full_store_with_503_and_retry_after(
    runtime: _Runtime, http: httpx.AsyncClient, fault: str
) -> None:
    runtime.app_started = True
    _APP.fault, _APP.failing = FAULTS[fault], True
    for path, body in WRITES:
        _assert_refused(await _post(http, path, body), f"{fault} on {path}")


async def test_every_route_answers_503_while_the_service_is_still_starting(
    runtime: _Runtime, http: httpx.AsyncClient
) -> None:
    assert not runtime.app_started
    for path, body in WRITES:
        response = await http.post(path, json=body)
        _assert_refused(response, path)
        assert "still starting" in response.json()["detail"]
    assert (await http.get("/v1/vision/plans")).status_code == 503
    assert (await http.get("/healthz")).status_code == 200, "health stays open"
    assert _APP.submitted == []


async def test_the_pipeline_refuses_triggers_with_503_while_it_says_it_is_not_ready(
    runtime: _Runtime, http: httpx.AsyncClient
) -> None:
    runtime.app_started = True
    trigger = {"kind": "manual", "source": "cli"}
    _APP.ready = True
    accepted = await http.post("/v1/triggers", json=trigger)
    assert accepted.status_code == 202, accepted.text

    _APP.ready = False
    assert (await http.get("/readyz")).status_code == 503
    refused = await http.post("/v1/triggers", json=trigger)
    _assert_refused(refused, "a trigger while not ready")
    assert "not ready" in refused.json()["detail"] and "engine" in refused.json()["detail"]
    assert len(_APP.submitted) == 1, "nothing is taken while the service says it is not ready"

    _APP.ready = True
    await http.get("/readyz")  # a fresh verdict, as the next probe gives it
    assert (await http.post("/v1/triggers", json=trigger)).status_code == 202
    assert len(_APP.submitted) == 2


async def test_bad_input_is_still_a_4xx_while_not_ready(runtime: _Runtime, http: httpx.AsyncClient) -> None:
    runtime.app_started = True
    _APP.ready = False
    response = await http.post("/v1/triggers", json={"kind": "nosuch", "source": "cli"})
    assert response.status_code == 422


# ---- gRPC ------------------------------------------------------------------------------------------


async def _vision_call(runtime: _Runtime, method: str, request: Any) -> grpc.aio.AioRpcError:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{runtime.grpc.bound_port}") as channel:
        stub = vpb_grpc.VisionStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await getattr(stub, method)(request, timeout=10)
    return refused.value


@pytest.mark.parametrize("fault", sorted(set(FAULTS) - {"the service still starting"}))
async def test_every_grpc_write_answers_a_full_store_with_unavailable(runtime: _Runtime, fault: str) -> None:
    runtime.app_started = True
    _APP.fault, _APP.failing = FAULTS[fault], True
    await runtime.start_grpc()
    try:
        for method, request in [
            ("MakePlan", vpb.PlanRequest(intent="open the editor")),
            ("RunPlan", vpb.PlanId(plan_id="p1")),
            ("DenyPlan", vpb.PlanId(plan_id="p1")),
        ]:
            error = await _vision_call(runtime, method, request)
            assert error.code() is grpc.StatusCode.UNAVAILABLE, f"{fault} on {method}: {error.details()}"
            assert len((error.details() or "").split()) >= 4
            assert int(dict(error.trailing_metadata() or ())["retry-after"]) >= 1
    finally:
        assert runtime.grpc.server is not None
        await runtime.grpc.server.stop(None)


async def test_a_grpc_plan_is_refused_with_unavailable_while_not_ready(runtime: _Runtime) -> None:
    runtime.app_started = True
    _APP.ready = False
    await runtime.start_grpc()
    try:
        error = await _vision_call(runtime, "MakePlan", vpb.PlanRequest(intent="open the editor"))
        assert error.code() is grpc.StatusCode.UNAVAILABLE
        assert "not ready" in (error.details() or "")
    finally:
        assert runtime.grpc.server is not None
        await runtime.grpc.server.stop(None)
