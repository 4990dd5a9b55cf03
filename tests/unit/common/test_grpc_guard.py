"""The gRPC guard on a real grpc.aio server: malformed requests are INVALID_ARGUMENT naming the
message type on every kind of method, an escaped exception is INTERNAL with a sentence (no class,
no message), and a servicer's own abort passes through unchanged."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
import sqlalchemy.exc
from grpc_health.v1 import health_pb2
from kronii.edge.grpc_guard import INTERNAL_SENTENCE, GuardInterceptor

SERVICE = "kronii.test.Guarded"
REQUEST = health_pb2.HealthCheckRequest
RESPONSE = health_pb2.HealthCheckResponse
SERVING = RESPONSE(status=RESPONSE.SERVING)
MALFORMED = b"\xff\xff\xff"
MALFORMED_SENTENCE = "the request is not a valid grpc.health.v1.HealthCheckRequest message"


async def echo(request: Any, context: Any) -> Any:
    assert isinstance(request, REQUEST)
    return SERVING


async def boom(request: Any, context: Any) -> Any:
    raise RuntimeError("secret detail from /srv/kronii")


async def database_away(request: Any, context: Any) -> Any:
    raise sqlalchemy.exc.OperationalError("SELECT 1", {}, ConnectionRefusedError("postgresql://u:pw@db"))


async def refuse(request: Any, context: Any) -> Any:
    await context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")


async def stream_then_fail(request: Any, context: Any) -> AsyncIterator[Any]:
    yield SERVING
    raise ValueError("half way")


async def count(requests: AsyncIterator[Any], context: Any) -> Any:
    seen = [request async for request in requests]
    return RESPONSE(status=len(seen))


def _handlers() -> grpc.GenericRpcHandler:
    kinds = {"request_deserializer": REQUEST.FromString, "response_serializer": RESPONSE.SerializeToString}
    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Echo": grpc.unary_unary_rpc_method_handler(echo, **kinds),
            "Boom": grpc.unary_unary_rpc_method_handler(boom, **kinds),
            "Refuse": grpc.unary_unary_rpc_method_handler(refuse, **kinds),
            "DatabaseAway": grpc.unary_unary_rpc_method_handler(database_away, **kinds),
            "Stream": grpc.unary_stream_rpc_method_handler(stream_then_fail, **kinds),
            "Count": grpc.stream_unary_rpc_method_handler(count, **kinds),
        },
    )


@pytest.fixture
async def port() -> AsyncIterator[int]:
    server = grpc.aio.server(interceptors=[GuardInterceptor()])
    server.add_generic_rpc_handlers([_handlers()])
    bound = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield bound
    finally:
        await server.stop(0)


async def _unary(port: int, method: str, payload: bytes) -> bytes:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(
            f"/{SERVICE}/{method}", request_serializer=None, response_deserializer=None
        )
        result: bytes = await call(payload, timeout=5)
        return result


async def _error(awaitable: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await awaitable
    return caught.value


async def test_well_formed_requests_reach_the_servicer_parsed(port: int) -> None:
    raw = await _unary(port, "Echo", REQUEST(service="x").SerializeToString())
    assert RESPONSE.FromString(raw).status == RESPONSE.SERVING


@pytest.mark.parametrize("method", ["Echo", "Boom", "Refuse"])
async def test_malformed_unary_request_is_invalid_argument(port: int, method: str) -> None:
    error = await _error(_unary(port, method, MALFORMED))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == MALFORMED_SENTENCE


async def test_escaped_exception_is_internal_with_a_sentence(port: int) -> None:
    error = await _error(_unary(port, "Boom", b""))
    assert error.code() == grpc.StatusCode.INTERNAL
    assert error.details() == INTERNAL_SENTENCE


async def test_servicer_abort_passes_through(port: int) -> None:
    error = await _error(_unary(port, "Refuse", b""))
    assert (error.code(), error.details()) == (grpc.StatusCode.NOT_FOUND, "no such thing")


async def test_server_stream_failing_midway_is_internal_after_the_items_sent(port: int) -> None:
    received: list[bytes] = []
    error = await _error(_collect(port, "Stream", b"", received))
    assert [RESPONSE.FromString(item).status for item in received] == [RESPONSE.SERVING]
    assert (error.code(), error.details()) == (grpc.StatusCode.INTERNAL, INTERNAL_SENTENCE)
    malformed = await _error(_collect(port, "Stream", MALFORMED, []))
    assert (malformed.code(), malformed.details()) == (grpc.StatusCode.INVALID_ARGUMENT, MALFORMED_SENTENCE)


async def _collect(port: int, method: str, payload: bytes, into: list[bytes]) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_stream(
            f"/{SERVICE}/{method}", request_serializer=None, response_deserializer=None
        )
        async for item in call(payload, timeout=5):
            into.append(item)


async def test_client_stream_parses_each_message(port: int) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.stream_unary(f"/{SERVICE}/Count", request_serializer=None, response_deserializer=None)
        good = REQUEST(service="a").SerializeToString()
        raw = await call(iter([good, good, good]), timeout=5)
        assert RESPONSE.FromString(raw).status == 3
        error = await _error(call(iter([good, MALFORMED]), timeout=5))
    assert (error.code(), error.details()) == (grpc.StatusCode.INVALID_ARGUMENT, MALFORMED_SENTENCE)


async def test_a_store_outage_is_unavailable_with_a_sentence_and_no_url(port: int) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _unary(port, "DatabaseAway", REQUEST().SerializeToString())
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    assert caught.value.details() == "PostgreSQL is not reachable; nothing was done, try again shortly"
