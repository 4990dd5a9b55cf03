"""The supervisor's service tokens as JSON Web Tokens (PyJWT, HS256): what a token carries, what is
refused and why, and that expiry is judged by the `now` passed in, never by the wall clock."""

from __future__ import annotations

import hashlib
import hmac
import time
import warnings

import jwt
import pytest
from kronii.supervisor.core.tokens import TokenError, issue_token, verify_token

SECRET = b"s" * 32
KEY = hmac.new(SECRET, b"service-token", hashlib.sha256).digest()


def _token(
    *,
    scopes: set[str] | None = None,
    workspaces: set[str] | None = None,
    now: float = 1000,
    ttl_secs: float = 60,
) -> str:
    return issue_token(
        SECRET,
        subject="orchestrator",
        scopes=scopes or {"trigger"},
        workspaces=workspaces or {"ws1"},
        now=now,
        ttl_secs=ttl_secs,
    )


def test_a_token_is_an_hs256_jwt_with_the_callers_claims() -> None:
    token = _token(scopes={"trigger", "runtime:r1"}, workspaces={"ws1", "ws2"})
    assert jwt.get_unverified_header(token)["alg"] == "HS256"
    claims = jwt.decode(token, KEY, algorithms=["HS256"], options={"verify_exp": False})
    assert claims == {
        "sub": "orchestrator",
        "scopes": ["runtime:r1", "trigger"],
        "workspaces": ["ws1", "ws2"],
        "iat": 1000,
        "exp": 1060,
    }
    verified = verify_token(SECRET, token, now=1059)
    assert verified.owns_runtime("r1") and verified.expires_at == 1060


def test_expiry_is_judged_by_the_given_now_not_the_wall_clock() -> None:
    far_future = time.time() + 10 * 365 * 86400
    token = _token(now=far_future, ttl_secs=60)  # iat is years ahead of the wall clock
    assert verify_token(SECRET, token, now=far_future + 30).subject == "orchestrator"
    with pytest.raises(TokenError, match="the token has expired"):
        verify_token(SECRET, token, now=far_future + 60)


def test_an_old_kst1_token_is_refused_with_how_to_get_a_new_one() -> None:
    with pytest.raises(
        TokenError, match=r"kst1 token of an older kronii.*issue a new one \(kronii agents token\)"
    ):
        verify_token(SECRET, "kst1.eyJzdWIiOiJ4In0.c2lnbmF0dXJl", now=1000)


def test_a_token_without_a_required_claim_is_refused_even_when_signed() -> None:
    no_scopes = jwt.encode({"sub": "x", "workspaces": [], "exp": 2000}, KEY, algorithm="HS256")
    with pytest.raises(TokenError, match="claims are malformed: no 'scopes'"):
        verify_token(SECRET, no_scopes, now=1000)
    numeric_scopes = jwt.encode(
        {"sub": "x", "scopes": [1], "workspaces": [], "exp": 2000}, KEY, algorithm="HS256"
    )
    with pytest.raises(TokenError, match="claims are malformed"):
        verify_token(SECRET, numeric_scopes, now=1000)
    numeric_subject = jwt.encode(
        {"sub": 7, "scopes": [], "workspaces": [], "exp": 2000}, KEY, algorithm="HS256"
    )
    with pytest.raises(TokenError, match="claims are malformed"):
        verify_token(SECRET, numeric_subject, now=1000)


def test_a_token_signed_with_the_raw_secret_or_another_algorithm_is_refused() -> None:
    raw = jwt.encode({"sub": "x", "scopes": [], "workspaces": [], "exp": 2000}, SECRET, algorithm="HS256")
    with pytest.raises(TokenError, match="signature does not match"):
        verify_token(SECRET, raw, now=1000)
    other_alg = jwt.encode(
        {"sub": "x", "scopes": [], "workspaces": [], "exp": 2000}, KEY * 2, algorithm="HS512"
    )
    with pytest.raises(TokenError, match="not a kronii service token"):
        verify_token(SECRET, other_alg, now=1000)


def test_a_token_cut_short_is_refused() -> None:
    head, body, _signature = _token().split(".")
    with pytest.raises(TokenError, match="signature"):
        verify_token(SECRET, f"{head}.{body}.", now=1000)
    with pytest.raises(TokenError, match="not a kronii service token"):
        verify_token(SECRET, f"{head}.{body}", now=1000)


def test_the_shortest_allowed_secret_signs_without_a_key_length_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        token = issue_token(
            b"0123456789abcdef", subject="s", scopes={"read"}, workspaces={"*"}, now=1000, ttl_secs=60
        )
        assert verify_token(b"0123456789abcdef", token, now=1001).has("read")
