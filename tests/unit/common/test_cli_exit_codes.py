"""One error vocabulary from a service to every kronii command: the HTTP error body carries the
error's `code`, and every CLI maps codes to exit codes through one table (kronii.launcher.cli.exits)."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from kronii.edge.api_edge import install_error_handler
from kronii.edge.limits import install_limits
from kronii.foundation import errors
from kronii.launcher.cli import exits

# Every error of the vocabulary (kronii.foundation.errors); a service's own errors subclass them.
_EVERY_ERROR = sorted(
    {
        kind
        for kind in vars(errors).values()
        if isinstance(kind, type)
        and issubclass(kind, errors.KroniiError)
        and kind.__module__ == errors.__name__
    },
    key=lambda kind: kind.__name__,
)


@pytest.mark.parametrize("kind", _EVERY_ERROR, ids=lambda kind: kind.__name__)
async def test_every_error_answers_with_its_code_and_the_table_knows_it(
    kind: type[errors.KroniiError],
) -> None:
    app = FastAPI()
    install_error_handler(app)

    @app.get("/fail")
    async def fail() -> None:
        raise kind("it went wrong", field="name")

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://x") as client:
        answer = await client.get("/fail")
    assert answer.status_code == kind.http_status
    assert answer.json() == {"code": kind.code, "detail": "it went wrong", "field": "name"}
    assert kind.code in exits.EXIT_FOR_CODE


@pytest.mark.parametrize(
    ("code", "exit_code"),
    [("invalid_argument", exits.USAGE), ("unprocessable", exits.USAGE), ("too_large", exits.USAGE),
     ("not_found", exits.NOT_FOUND), ("unauthenticated", exits.REFUSED), ("permission_denied", exits.REFUSED),
     ("resource_exhausted", exits.REFUSED), ("failed_precondition", exits.REFUSED),
     ("unavailable", exits.UNREACHABLE), ("starting", exits.UNREACHABLE), ("internal", exits.FAILED)],
)  # fmt: skip
def test_a_refusal_exits_by_the_code_its_body_carries_whatever_the_status(code: str, exit_code: int) -> None:
    # A 409 is a refusal in every command now (it was a failure in two and a refusal in two).
    assert exits.exit_for_error(409 if code != "failed_precondition" else 400, {"code": code}) == exit_code


@pytest.mark.parametrize(
    ("status", "exit_code"),
    [(400, exits.USAGE), (413, exits.USAGE), (404, exits.NOT_FOUND), (401, exits.REFUSED), (409, exits.REFUSED),
     (502, exits.UNREACHABLE), (503, exits.UNREACHABLE), (504, exits.UNREACHABLE), (500, exits.FAILED)],
)  # fmt: skip
def test_an_answer_without_a_code_exits_by_the_code_of_its_status(status: int, exit_code: int) -> None:
    assert exits.exit_for_error(status, "<html>bad gateway</html>") == exit_code
    assert exits.exit_for_error(status, {"code": "no-such-code"}) == exit_code


def test_grpc_refusals_go_through_the_same_table() -> None:
    assert exits.exit_for_grpc_status("FAILED_PRECONDITION") == exits.REFUSED
    assert exits.exit_for_grpc_status("OUT_OF_RANGE") == exits.USAGE
    assert exits.exit_for_grpc_status("DEADLINE_EXCEEDED") == exits.UNREACHABLE
    assert exits.exit_for_grpc_status("DATA_LOSS") == exits.FAILED


async def test_the_common_layers_refusals_carry_a_code_too() -> None:
    """A body over the route's limit (413) and a field that fails its declaration (422)."""
    app = FastAPI()
    install_limits(app, max_body=64)

    @app.post("/thing")
    async def thing(count: int) -> dict[str, int]:
        return {"count": count}

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://x") as client:
        large = await client.post("/thing?count=1", content=b"{" + b" " * 100 + b"}")
        bad = await client.post("/thing?count=many")
    assert (large.status_code, large.json()["code"]) == (413, "too_large")
    assert (bad.status_code, bad.json()["code"]) == (400, "invalid_argument")
    assert exits.exit_for_error(large.status_code, large.json()) == exits.USAGE
