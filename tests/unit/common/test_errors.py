"""The one error vocabulary: each KroniiError maps to its HTTP status, gRPC code and JSON body; the HTTP
handler renders it on a real FastAPI app, the interceptor on a real grpc.aio server (behind the
guard, which still answers INTERNAL for what no service meant to say), and the shared JSON helpers
refuse a bad body with a 400 and a sentence."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient
from grpc_health.v1 import health_pb2
from kronii.edge.api_edge import (
    KroniiErrorInterceptor,
    as_json,
    install_error_handler,
    read_body,
)
from kronii.edge.grpc_guard import INTERNAL_SENTENCE, GuardInterceptor
from kronii.foundation.errors import (
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    KroniiError,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    StillStarting,
    StorageFull,
    Unauthenticated,
    Unavailable,
    Unprocessable,
)

# (class, code, HTTP status, gRPC status): the codes capture's callers and audit rows already know.
TABLE: list[tuple[type[KroniiError], str, int, grpc.StatusCode]] = [
    (InvalidArgument, "invalid_argument", 400, grpc.StatusCode.INVALID_ARGUMENT),
    (Unprocessable, "unprocessable", 422, grpc.StatusCode.INVALID_ARGUMENT),
    (Unauthenticated, "unauthenticated", 401, grpc.StatusCode.UNAUTHENTICATED),
    (PermissionDenied, "permission_denied", 403, grpc.StatusCode.PERMISSION_DENIED),
    (NotFound, "not_found", 404, grpc.StatusCode.NOT_FOUND),
    (FailedPrecondition, "failed_precondition", 409, grpc.StatusCode.FAILED_PRECONDITION),
    (ResourceExhausted, "resource_exhausted", 429, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (Unavailable, "unavailable", 503, grpc.StatusCode.UNAVAILABLE),
    (StillStarting, "starting", 503, grpc.StatusCode.UNAVAILABLE),
    (StorageFull, "storage_full", 503, grpc.StatusCode.UNAVAILABLE),
    (KroniiError, "internal", 500, grpc.StatusCode.INTERNAL),
]
BY_NAME = {kind.__name__: kind for kind, *_ in TABLE}


@pytest.mark.parametrize(("kind", "code", "status", "grpc_code"), TABLE)
def test_each_error_carries_its_code_http_status_and_grpc_status(
    kind: type[KroniiError], code: str, status: int, grpc_code: grpc.StatusCode
) -> None:
    error = kind("a sentence", field="name")
    assert (error.code, error.http_status, error.message, error.field) == (code, status, "a sentence", "name")
    assert getattr(grpc.StatusCode, error.grpc_status) is grpc_code
    assert str(error) == "a sentence"


def test_conflict_is_failed_precondition_and_a_caller_mistake_is_never_5xx() -> None:
    assert Conflict is FailedPrecondition
    mistakes = [kind for kind, *_ in TABLE if kind is not KroniiError and not issubclass(kind, Unavailable)]
    assert all(400 <= kind.http_status < 500 for kind in mistakes)
    assert issubclass(Unprocessable, InvalidArgument)


def test_the_errors_module_imports_neither_grpc_nor_fastapi() -> None:
    probe = (
        "import sys, kronii.foundation.errors; "
        "print(sorted(m for m in ('grpc', 'fastapi', 'starlette', 'google.protobuf') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


# ---- HTTP -----------------------------------------------------------------------------------------


def _http_app() -> FastAPI:
    app = FastAPI()
    install_error_handler(app)

    @app.get("/raise/{name}")
    async def raise_named(name: str, field: str = "", retry_after_ms: int = 0) -> None:
        raise BY_NAME[name](f"{name} happened", field=field, retry_after_ms=retry_after_ms)

    @app.post("/health-check/{service}")
    async def parse(service: str, request: Request) -> dict[str, Any]:
        return as_json(await read_body(request, health_pb2.HealthCheckRequest(), service=service or None))

    @app.post("/strict")
    async def strict(request: Request) -> dict[str, Any]:
        return as_json(await read_body(request, health_pb2.HealthCheckRequest(), empty_ok=False))

    return app


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(_http_app(), raise_server_exceptions=False)


@pytest.mark.parametrize(("kind", "code", "status", "grpc_code"), TABLE)
def test_the_handler_answers_the_status_with_the_sentence_in_detail(
    client: TestClient, kind: type[KroniiError], code: str, status: int, grpc_code: grpc.StatusCode
) -> None:
    response = client.get(f"/raise/{kind.__name__}")
    assert response.status_code == status
    assert response.json() == {"code": kind.code, "detail": f"{kind.__name__} happened"}
    # Every 503 tells the caller when to come back; the others only when the raiser said so.
    assert ("retry-after" in response.headers) is (status == 503)


def test_the_body_names_the_field_at_fault(client: TestClient) -> None:
    response = client.get("/raise/InvalidArgument", params={"field": "client_id"})
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_argument",
        "detail": "InvalidArgument happened",
        "field": "client_id",
    }


@pytest.mark.parametrize(("retry_after_ms", "header"), [(2500, "2"), (300, "1")])
def test_a_throttled_caller_is_told_when_to_come_back(
    client: TestClient, retry_after_ms: int, header: str
) -> None:
    response = client.get("/raise/ResourceExhausted", params={"retry_after_ms": retry_after_ms})
    assert response.status_code == 429
    assert response.headers["retry-after"] == header


def test_read_body_parses_the_json_and_adds_the_path(client: TestClient) -> None:
    assert client.post("/health-check/from-path", json={}).json() == {"service": "from-path"}
    assert client.post("/health-check/from-path", content=b"").json() == {"service": "from-path"}


@pytest.mark.parametrize(
    ("content", "sentence"),
    [
        (b"{not json", "the body is not valid JSON"),
        (b"[1, 2]", "the body must be a JSON object (a HealthCheckRequest)"),
        (b'{"no_such_field": 1}', "not a valid HealthCheckRequest: "),
        (b'{"service": 5}', "not a valid HealthCheckRequest: "),
    ],
)
def test_a_malformed_body_is_a_400_with_a_sentence(client: TestClient, content: bytes, sentence: str) -> None:
    response = client.post("/strict", content=content, headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["detail"].startswith(sentence)


def test_an_empty_body_is_refused_where_one_is_required(client: TestClient) -> None:
    response = client.post("/strict", content=b"")
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid_argument",
        "detail": "the body must be a JSON object (a HealthCheckRequest)",
    }


def test_as_json_uses_proto_names_enum_names_and_prints_defaults() -> None:
    assert as_json(health_pb2.HealthCheckResponse()) == {"status": "UNKNOWN"}
    serving = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
    assert as_json(serving) == {"status": "SERVING"}


# ---- gRPC -----------------------------------------------------------------------------------------

SERVICE = "kronii.test.Errors"
REQUEST = health_pb2.HealthCheckRequest
RESPONSE = health_pb2.HealthCheckResponse
SERVING = RESPONSE(status=RESPONSE.SERVING)


async def raise_named(request: Any, context: Any) -> Any:
    raise BY_NAME[request.service](f"{request.service} happened")


async def stream_then_refuse(request: Any, context: Any) -> AsyncIterator[Any]:
    yield SERVING
    raise NotFound("the second item is gone")


async def boom(request: Any, context: Any) -> Any:
    raise RuntimeError("secret detail from /srv/kronii")


def _handlers() -> grpc.GenericRpcHandler:
    kinds = {"request_deserializer": REQUEST.FromString, "response_serializer": RESPONSE.SerializeToString}
    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Raise": grpc.unary_unary_rpc_method_handler(raise_named, **kinds),
            "Stream": grpc.unary_stream_rpc_method_handler(stream_then_refuse, **kinds),
            "Boom": grpc.unary_unary_rpc_method_handler(boom, **kinds),
        },
    )


@pytest.fixture(scope="module")
async def port() -> AsyncIterator[int]:
    # The order service.py uses: the guard outside, so it sees the abort and lets it through.
    server = grpc.aio.server(interceptors=[GuardInterceptor(), KroniiErrorInterceptor()])
    server.add_generic_rpc_handlers([_handlers()])
    bound = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield bound
    finally:
        await server.stop(0)


async def _unary(port: int, method: str, request: Any) -> grpc.aio.AioRpcError:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(
            f"/{SERVICE}/{method}",
            request_serializer=REQUEST.SerializeToString,
            response_deserializer=RESPONSE.FromString,
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(request, timeout=5)
    return caught.value


@pytest.mark.parametrize(("kind", "code", "status", "grpc_code"), TABLE)
async def test_the_interceptor_ends_the_call_with_the_errors_status_and_sentence(
    port: int, kind: type[KroniiError], code: str, status: int, grpc_code: grpc.StatusCode
) -> None:
    error = await _unary(port, "Raise", REQUEST(service=kind.__name__))
    assert (error.code(), error.details()) == (grpc_code, f"{kind.__name__} happened")


async def _collect(port: int, into: list[Any]) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_stream(
            f"/{SERVICE}/Stream",
            request_serializer=REQUEST.SerializeToString,
            response_deserializer=RESPONSE.FromString,
        )
        async for item in call(REQUEST(), timeout=5):
            into.append(item)


async def test_a_stream_ends_with_the_errors_status_after_the_items_sent(port: int) -> None:
    received: list[Any] = []
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _collect(port, received)
    assert received == [SERVING]
    assert (caught.value.code(), caught.value.details()) == (
        grpc.StatusCode.NOT_FOUND,
        "the second item is gone",
    )


async def test_any_other_exception_is_still_the_guards_internal_sentence(port: int) -> None:
    error = await _unary(port, "Boom", REQUEST())
    assert (error.code(), error.details()) == (grpc.StatusCode.INTERNAL, INTERNAL_SENTENCE)
