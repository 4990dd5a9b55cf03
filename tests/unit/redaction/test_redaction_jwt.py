"""JSON Web Tokens: three base64url parts whose header is a JSON object with "alg"."""

from __future__ import annotations

from kronii.redaction.detectors import JwtDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = JwtDetector()
# The example JWS of RFC 7519, section 3.1.
RFC_7519 = (
    "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
    ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
)


def test_rfc_7519_example_token() -> None:
    assert detect(DETECTOR, f"Authorization: Bearer {RFC_7519}") == [("JWT", RFC_7519)]


def test_unsecured_token_with_empty_signature() -> None:
    # RFC 7519 section 6.1: {"alg":"none"} and an empty third part.
    token = "eyJhbGciOiJub25lIn0.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODB9."
    assert detect(DETECTOR, f"id_token={token}") == [("JWT", token)]


def test_header_without_alg_is_not_a_jwt() -> None:
    # {"typ":"JWT"} only.
    token = "eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl"
    assert detect(DETECTOR, token) == []


def test_base64_json_that_is_not_a_header() -> None:
    # eyJ... that does not decode to JSON at all.
    assert detect(DETECTOR, "eyJhbGciOiJIUzI1NiIsInR5cCI6.eyJzdWIiOiIxMjM0NTY3.abc") == []
