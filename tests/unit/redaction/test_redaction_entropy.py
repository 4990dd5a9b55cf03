"""High-entropy strings: random tokens are found; hashes, ids, identifiers and paths are not."""

from __future__ import annotations

import base64
import random
import string

import pytest
from kronii.redaction.detectors import EntropyDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = EntropyDetector()


@pytest.mark.parametrize(
    "token",
    [
        "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFi",  # Base64
        "q8Xw2Lp9Rt4Vb7Nm1Kc6Hd3Js5Gf0Aa",  # Base62
        "7Hq_d9K-2mXv8PzL4tRw1YbN6cJs3Fe",  # Base64url
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCY9xa1b2",
    ],
)
def test_random_tokens_are_found(token: str) -> None:
    assert detect(DETECTOR, f"value {token} end") == [("HIGH_ENTROPY", token)]


def test_most_random_tokens_of_each_length_are_found() -> None:
    generator = random.Random(20240601)
    alphabet = string.ascii_letters + string.digits
    for length in (20, 24, 32, 40, 64):
        tokens = ["".join(generator.choice(alphabet) for _ in range(length)) for _ in range(200)]
        found = sum(1 for token in tokens if detect(DETECTOR, f"x {token} y"))
        assert found >= 180, (length, found)
        blobs = [base64.b64encode(generator.randbytes(length)).decode() for _ in range(200)]
        found = sum(1 for blob in blobs if detect(DETECTOR, f"x {blob} y"))
        assert found >= 180, (length, found)


def test_hex_needs_a_secret_word_on_its_line() -> None:
    secret = "3f9a2b7c4d1e8f6a0b5c9d2e7f1a4b8c"
    assert detect(DETECTOR, f"webhook signing secret {secret}") == [("HIGH_ENTROPY", secret)]
    assert detect(DETECTOR, f"object {secret} stored") == []


@pytest.mark.parametrize(
    "text",
    [
        "id 123e4567-e89b-12d3-a456-426614174000",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: A <a@exemple.com>",
        "9fceb02 (HEAD -> main) Fix build\nb3f1a9c3e4d5f6a7b8c9d0e1f2a3b4c5d6e7f8a9 merge",
        '"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="',
        "github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5UwLGTwt4=",
        "--hash=sha256:2cf8a1b2c3d4e5f60718293a4b5c6d7e8f9012345abcdef0123456789abcdef",
        "AbstractSingletonProxyFactoryBeanWithUtf8Support",
        "test_redaction_engine_handles_utf8_input_2",
        "ERR_CONNECTION_REFUSED_BY_UPSTREAM_PEER42",
        "/usr/lib/python3.11/site-packages/requests/adapters.py",
        "https://github.com/encode/httpx/blob/master/httpx/_client.py",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        "docker pull python@sha256:6b3b2f0a1c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f",
        "image_2024_05_17_final_v3_backup_copy",
    ],
)
def test_not_secrets(text: str) -> None:
    assert detect(DETECTOR, text) == []
