"""Two harmless lines the engine used to change (issue 12), next to the real secrets in lines like them."""

from __future__ import annotations

import base64
import json

import pytest
from kronii.redaction import Level, RedactionEngine

ENGINE = RedactionEngine()
DIGEST = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899"


def _encoded(document: object) -> str:
    return base64.b64encode(json.dumps(document, separators=(",", ":")).encode()).decode()


@pytest.mark.parametrize(
    "document",
    [
        {"user": "alice", "role": "admin"},
        {"name": "api-server", "replicas": 3, "image": "nginx:1.25"},
        {"alg": "HS256", "typ": "JWT"},
        [{"env": "staging", "region": "eu-west-1"}],
    ],
)
def test_base64_of_harmless_json_stays(document: object) -> None:
    line = f"echo '{_encoded(document)}' | base64 -d"
    assert ENGINE.redact(line).text == line


@pytest.mark.parametrize(
    "document",
    [
        {"user": "alice", "token": "hunter2"},  # names a secret
        {"user": "alice", "session": "Zx9kLmN2pQrStUvWxYz0123456789Abc"},  # holds a random string
    ],
)
def test_base64_of_json_with_a_secret_is_masked(document: object) -> None:
    line = f"echo '{_encoded(document)}' | base64 -d"
    assert ENGINE.redact(line).level is not Level.GREEN


@pytest.mark.parametrize(
    "line",
    [
        f"docker pull registry.example.com/team/api-server@sha256:{DIGEST}",
        f"image: ghcr.io/acme/payments-api@sha256:{DIGEST}",
        f"pip install --require-hashes api-client==2.1 --hash=sha256:{DIGEST}",
    ],
)
def test_image_digest_stays_when_the_name_says_api(line: str) -> None:
    assert ENGINE.redact(line).text == line


def test_hex_secret_next_to_api_is_still_masked() -> None:
    assert DIGEST not in ENGINE.redact(f"API_KEY={DIGEST}").text
    assert DIGEST not in ENGINE.redact(f"api secret {DIGEST}").text
    # A digest label of the wrong length is no digest.
    assert DIGEST[:48] not in ENGINE.redact(f"api token sha256:{DIGEST[:48]}").text
