"""kronii.supervisor.core.identity: the proof a supervisor gives that it holds this host's token secret,
and the unauthenticated GET /v1/identity that answers it (against a stand-in app)."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from kronii.edge.api_edge import install_error_handler
from kronii.supervisor.api.http_api import supervisor_router
from kronii.supervisor.core.identity import (
    check_nonce,
    identity_key,
    identity_proof,
    new_nonce,
    proof_matches,
)

SECRET = b"kronii-test-secret-0123456789abcdef"
NONCE = "00112233445566778899aabbccddeeff"


def test_proof_is_hmac_of_the_context_and_nonce_under_a_key_derived_from_the_secret() -> None:
    key = hmac.new(SECRET, b"identity", hashlib.sha256).digest()
    expected = hmac.new(key, b"kronii-supervisor-identity:" + NONCE.encode(), hashlib.sha256).hexdigest()
    assert identity_key(SECRET) == key and key != SECRET
    assert identity_proof(SECRET, NONCE) == expected


def test_proof_depends_on_the_secret_and_the_nonce() -> None:
    other = new_nonce()
    assert identity_proof(SECRET, NONCE) != identity_proof(SECRET, other)
    assert identity_proof(SECRET, NONCE) != identity_proof(b"another-secret-0123456789abcdef", NONCE)


def test_proof_matches_only_the_right_answer() -> None:
    proof = identity_proof(SECRET, NONCE)
    assert proof_matches(SECRET, NONCE, proof)
    assert proof_matches(SECRET, NONCE, proof.upper())
    assert not proof_matches(SECRET, NONCE, identity_proof(b"another-secret-0123456789abcdef", NONCE))
    assert not proof_matches(SECRET, new_nonce(), proof)
    for answer in (None, 7, "", "zz", "\u00e9" * 64, ["a"]):
        assert not proof_matches(SECRET, NONCE, answer)


def test_new_nonces_are_fresh_valid_hex() -> None:
    nonces = {new_nonce() for _ in range(50)}
    assert len(nonces) == 50
    assert all(check_nonce(n) == n and len(n) == 32 for n in nonces)


@pytest.mark.parametrize(
    "nonce", ["", "abc", "0" * 15, "0" * 129, "g" * 32, "00 11223344556677", "0x" + "0" * 30]
)
def test_a_nonce_that_is_not_16_to_128_hex_digits_is_refused_with_a_sentence(nonce: str) -> None:
    with pytest.raises(ValueError, match="nonce must be 16 to 128 hex digits"):
        identity_proof(SECRET, nonce)


class _Proving:
    """What the supervisor app offers the route: identity_proof(nonce) from its own secret."""

    def identity_proof(self, nonce: str) -> str:
        return identity_proof(SECRET, nonce)

    def authenticate(self, token: str | None) -> Any:
        raise AssertionError("GET /v1/identity must not ask for a token")


async def _get(app: Any, path: str, params: dict[str, str] | None = None) -> httpx.Response:
    api = FastAPI()
    install_error_handler(api)  # as every service's app has it
    api.include_router(supervisor_router(lambda: app))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=api), base_url="http://supervisor"
    ) as http:
        return await http.get(path, params=params)


async def test_identity_route_answers_without_a_token() -> None:
    response = await _get(_Proving(), "/v1/identity", {"nonce": NONCE})
    assert response.status_code == 200
    body = response.json()
    assert body["service"] == "supervisor" and proof_matches(SECRET, NONCE, body["proof"])
    assert SECRET.decode() not in response.text


@pytest.mark.parametrize("params", [{}, {"nonce": "short"}, {"nonce": "z" * 32}, {"nonce": "0" * 200}])
async def test_identity_route_refuses_a_bad_nonce_with_400_and_a_sentence(params: dict[str, str]) -> None:
    response = await _get(_Proving(), "/v1/identity", params)
    assert response.status_code == 400
    assert response.json()["detail"] == "nonce must be 16 to 128 hex digits (0-9, a-f)"


async def test_identity_route_is_in_the_openapi_document() -> None:
    schema = (await _get(_Proving(), "/openapi.json")).json()
    operation = schema["paths"]["/v1/identity"]["get"]
    assert [p["name"] for p in operation["parameters"]] == ["nonce"]
    assert "security" not in operation
