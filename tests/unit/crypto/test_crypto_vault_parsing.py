"""The pure parsing of Vault transit ciphertexts and plaintexts. No Vault server is involved."""

from __future__ import annotations

import base64
import os

import pytest
from kronii.crypto import DecryptionError, WrappedKey
from kronii.crypto.vault import (
    decode_transit_plaintext,
    encode_transit_plaintext,
    parse_transit_version,
    transit_from_wrapped,
    wrapped_from_transit,
)

CIPHERTEXT = "vault:v3:" + base64.b64encode(os.urandom(60)).decode()


@pytest.mark.parametrize(("version", "expected"), [("1", 1), ("3", 3), ("12", 12), ("104", 104)])
def test_parses_the_key_version(version: str, expected: int) -> None:
    assert parse_transit_version(f"vault:v{version}:QUJD") == expected


@pytest.mark.parametrize(
    "ciphertext",
    [
        "",
        "vault:v0:QUJD",
        "vault:3:QUJD",
        "vault:vx:QUJD",
        "vault:v3:",
        "vault:v3:not base64!",
        "v3:QUJD",
        "vault:v3:QUJ",
    ],
)
def test_refuses_malformed_ciphertexts(ciphertext: str) -> None:
    with pytest.raises(DecryptionError, match="not a Vault transit ciphertext"):
        parse_transit_version(ciphertext)


def test_plaintext_round_trips_through_base64() -> None:
    key = os.urandom(32)
    encoded = encode_transit_plaintext(key)
    assert base64.b64decode(encoded) == key
    assert decode_transit_plaintext(encoded) == key


@pytest.mark.parametrize("plaintext", ["!!!", base64.b64encode(os.urandom(16)).decode()])
def test_refuses_a_bad_plaintext(plaintext: str) -> None:
    with pytest.raises(DecryptionError):
        decode_transit_plaintext(plaintext)


def test_wrapped_key_carries_the_version_of_its_ciphertext() -> None:
    wrapped = wrapped_from_transit("vault-transit", CIPHERTEXT)
    assert wrapped.key_version == 3
    assert transit_from_wrapped(wrapped) == CIPHERTEXT


def test_refuses_a_wrapped_key_whose_version_disagrees_with_its_ciphertext() -> None:
    wrapped = WrappedKey(provider="vault-transit", key_version=2, blob=CIPHERTEXT.encode())
    with pytest.raises(DecryptionError, match="does not match"):
        transit_from_wrapped(wrapped)


def test_refuses_a_binary_blob() -> None:
    wrapped = WrappedKey(provider="vault-transit", key_version=3, blob=b"\xff\xfe")
    with pytest.raises(DecryptionError):
        transit_from_wrapped(wrapped)
