"""The input limits on a real uvicorn server: body size (declared and streamed, per-route limits),
JSON depth and NUL, control and bidi characters in paths and queries, declaration errors as
sentences, and exceptions a request causes answered with a sentence instead of a bare 500."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Query, Request
from kronii.edge.limits import (
    DEFAULT_BODY_LIMIT,
    MAX_JSON_DEPTH,
    PathId,
    body_limit,
    install_limits,
    json_depth_exceeds,
    unsafe_character,
)
from kronii.launcher.infra import free_port
from pydantic import BaseModel, Field
from sqlalchemy.exc import DataError

BIG_ROUTE_LIMIT = 3 * 1024 * 1024


class Named(BaseModel):
    name: str = Field(max_length=8)


def _app() -> FastAPI:
    app = FastAPI()
    install_limits(app)

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    @app.post("/big")
    @body_limit(BIG_ROUTE_LIMIT)
    async def big(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    @app.post("/named")
    async def named(body: Named) -> dict[str, str]:
        return {"name": body.name}

    @app.get("/items/{item_id}")
    async def item(item_id: PathId, n: int = Query(1, ge=1, le=5)) -> dict[str, object]:
        return {"item_id": item_id, "n": n}

    @app.get("/fail/{kind}")
    async def fail(kind: str) -> None:
        if kind == "recursion":
            raise RecursionError("maximum recursion depth exceeded")
        if kind == "value":
            int("9" * 5_000)
        if kind == "storage":
            raise DataError("INSERT", {}, ValueError("invalid byte sequence for encoding UTF8: 0x00"))
        raise KeyError("kronii.internal.secret")

    return app


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(_app(), host="127.0.0.1", port=port, log_config=None, lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(5)


def _detail(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, (response.status_code, response.text[:300])
    detail = response.json()["detail"]
    assert isinstance(detail, str)
    return detail


def test_json_depth_counts_arrays_and_objects_but_not_brackets_in_strings() -> None:
    assert not json_depth_exceeds(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH)
    assert json_depth_exceeds(b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1))
    assert json_depth_exceeds(b'{"a":' * 40 + b"1" + b"}" * 40)
    assert not json_depth_exceeds(b'{"text": "' + b"[{" * 100 + b'\\" [[[["}')


@pytest.mark.parametrize("text", ["a\x00b", "a\x1bb", "a\x7fb", "a\u202eb", "a\u2066b", "a\u200fb", "a\x85b"])
def test_unsafe_characters_are_found(text: str) -> None:
    assert unsafe_character(text) == text[1]


@pytest.mark.parametrize("text", ["runtime-1", "café", "日本語", "a b", "emoji \U0001f600"])
def test_ordinary_text_is_safe(text: str) -> None:
    assert unsafe_character(text) is None


def test_declared_body_over_the_default_limit_is_a_413(url: str) -> None:
    response = httpx.post(f"{url}/echo", content=b"x" * (DEFAULT_BODY_LIMIT + 1))
    assert (
        _detail(response, 413) == f"the body is larger than this route's limit of {DEFAULT_BODY_LIMIT} bytes"
    )
    assert httpx.post(f"{url}/echo", content=b"x" * DEFAULT_BODY_LIMIT).json() == {"size": DEFAULT_BODY_LIMIT}


def test_a_route_can_declare_a_larger_limit(url: str) -> None:
    two_mb = 2 * 1024 * 1024
    assert httpx.post(f"{url}/big", content=b"x" * two_mb, timeout=30).json() == {"size": two_mb}
    too_big = httpx.post(f"{url}/big", content=b"x" * (BIG_ROUTE_LIMIT + 1), timeout=30)
    assert str(BIG_ROUTE_LIMIT) in _detail(too_big, 413)


def test_streamed_bodies_are_counted_and_replayed_whole(url: str) -> None:
    def chunks(count: int) -> Iterator[bytes]:
        for _ in range(count):
            yield b"y" * 65_536

    small = httpx.post(f"{url}/echo", content=chunks(8))
    assert "Content-Length" not in small.request.headers
    assert small.json() == {"size": 8 * 65_536}
    large = httpx.post(f"{url}/echo", content=chunks(20), timeout=30)
    assert "limit" in _detail(large, 413)


def test_deep_json_is_a_400_and_brackets_in_strings_do_not_count(url: str) -> None:
    deep = httpx.post(f"{url}/echo", content=b"[" * 1_000 + b"]" * 1_000)
    assert _detail(deep, 400) == f"the JSON body is nested more than {MAX_JSON_DEPTH} levels deep"
    text = b'{"a": "' + b"[" * 1_000 + b'"}'
    assert httpx.post(f"{url}/echo", content=text).json() == {"size": len(text)}


@pytest.mark.parametrize("path", ["/items/a%00b", "/items/a%E2%80%AEb", "/items/a%1Bb"])
def test_control_and_bidi_characters_in_the_path_are_a_400(url: str, path: str) -> None:
    assert "path contains a control or bidirectional-formatting character" in _detail(
        httpx.get(url + path), 400
    )


def test_control_characters_in_the_query_are_a_400(url: str) -> None:
    response = httpx.get(f"{url}/items/a", params={"n": "1\x00"})
    assert "query string" in _detail(response, 400)


def test_declaration_errors_are_sentences_400_for_arguments_422_for_bodies(url: str) -> None:
    argument = _detail(httpx.get(f"{url}/items/a", params={"n": 9}), 400)
    assert argument.startswith("the query parameter 'n' is not valid")
    too_long = _detail(httpx.get(f"{url}/items/" + "i" * 300), 400)
    assert "item_id" in too_long
    body = _detail(httpx.post(f"{url}/named", json={"name": "far too long a name"}), 422)
    assert body.startswith("the body field 'name' is not valid")
    broken = httpx.post(f"{url}/named", content=b"{", headers={"content-type": "application/json"})
    assert _detail(broken, 422) == "the body is not valid JSON"


@pytest.mark.parametrize(
    ("kind", "status", "sentence"),
    [
        ("recursion", 400, "the request is nested too deeply to read"),
        ("value", 400, "a value in the request cannot be read: it is out of range or malformed"),
        (
            "storage",
            400,
            "a value in the request cannot be stored: it is out of range or holds a character the database refuses",
        ),
        ("bug", 500, "the service failed on this request; its log has the details"),
    ],
)
def test_exceptions_become_sentences_never_class_names(
    url: str, kind: str, status: int, sentence: str
) -> None:
    response = httpx.get(f"{url}/fail/{kind}")
    assert _detail(response, status) == sentence
    assert "Error" not in response.text and "kronii." not in response.text
