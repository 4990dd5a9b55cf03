"""Harmless stays harmless: public key material and documented example values are left alone (issue 32), and
the real things beside them are still masked."""

from __future__ import annotations

import pytest
from kronii.redaction import Level, RedactionEngine

ENGINE = RedactionEngine()

PGP_PUBLIC = """-----BEGIN PGP PUBLIC KEY BLOCK-----

mQINBGPxnd8BEADLgTqP8QQ6t0xvXkW2K7rHcJ5pNqTzvK0zLwQnHqR5yB2PfE8aZ
Vq3kT7nW9xYb2cLmR4pS8dF1gH6jK0lZ5aX3eC7vB9nM2qW4rT6yU8iO1pA3sD5f
=Abc1
-----END PGP PUBLIC KEY BLOCK-----"""
CERTIFICATE = """-----BEGIN CERTIFICATE-----
MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ
RTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD
-----END CERTIFICATE-----"""
PRIVATE = """-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACDjKqp5Fc65tEnRulDqKii7GmoB+QvaJFotHYdpfRiiZQAAAJgAbcdNAG3H
-----END OPENSSH PRIVATE KEY-----"""


@pytest.mark.parametrize(
    "text",
    [
        PGP_PUBLIC,
        CERTIFICATE,
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl deploy",
        "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBEmKSENjQEezOmxkZMy7opKgwFB9nkt5YRrYMjNuG5N87uRgg6CLrbo5wAdT/y6v0mKV0U2w0WZ2YB/++Tpockg=",
        "ED25519 key fingerprint is SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU.",
        "Key fingerprint = 7F4B 3C2A 19E8 D5B6 0A1F  4E3D 2C1B 0A9F 8E7D 6C5B",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "export AWS_ACCESS_KEY_ID=AKIAI44QH8DHBEXAMPLE",
        "Use the test card 4242 4242 4242 4242, any future date and any CVC.",
        "Declined: 4000 0000 0000 0002; 3D Secure: 4000 0025 0000 3155",
        "Write to alice@example.com, bob@example.org or ops@mail.example.net.",
        "git config user.email you@project.test",
        "server: https://203.0.113.40:6443, backup 198.51.100.7, router 192.0.2.1",
        "inet6 2001:db8:fbe9::d31/64 scope global",
        "Call the fictional office on (415) 555-0132.",
        "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "src: url(data:font/woff2;base64,d09GMgABAAAAAAZQAA4AAAAADZgAAAX5AAEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAGhYbHhwgBmAAgkIRCAqJSId5ATYCJAMUCwwABCAFhGQHThtECxHFpKLkRHw7Y3Q2YXf0)",
    ],
)
def test_public_and_documented_values_stay(text: str) -> None:
    result = ENGINE.redact(text)
    assert result.text == text, result.findings


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (PRIVATE, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"),
        ("aws_access_key_id = AKIAJ4XW7QZ2MB5RT6NP", "AKIAJ4XW7QZ2MB5RT6NP"),
        ("paid with 4539 1488 0343 6467 today", "4539 1488 0343 6467"),
        ("Write to alice@fastmail.com about it", "alice@fastmail.com"),
        ("write to alice@example.company.com", "alice@example.company.com"),
        ("ssh deploy@81.2.69.40 -p 22", "81.2.69.40"),
        ("Call me on (415) 555-2671.", "555-2671"),
    ],
)
def test_the_real_things_beside_them_are_still_masked(text: str, value: str) -> None:
    result = ENGINE.redact(text)
    assert value not in result.text
    assert result.level is not Level.GREEN


def test_a_secret_next_to_a_public_key_is_still_masked() -> None:
    text = f"{PGP_PUBLIC}\npassword: Sommer2024!Blau"
    result = ENGINE.redact(text)
    assert "Sommer2024!Blau" not in result.text
    assert "mQINBGPxnd8BEADLgTqP8QQ6t0xvXkW2K7rHcJ5pNqTzvK0zLwQnHqR5yB2PfE8aZ" in result.text
