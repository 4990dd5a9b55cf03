"""Private key blocks are masked whole, BEGIN through END; a truncated block through its key material."""

from __future__ import annotations

from kronii.redaction.detectors import PrivateKeyDetector

from tests.unit.redaction.redaction_support import detect

DETECTOR = PrivateKeyDetector()
BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\nMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n"


def test_pkcs8_block_masked_from_begin_to_end() -> None:
    block = f"-----BEGIN PRIVATE KEY-----\n{BODY}-----END PRIVATE KEY-----"
    assert detect(DETECTOR, f"key.pem:\n{block}\nnext line") == [("PRIVATE_KEY", block)]


def test_rsa_openssh_ec_and_encrypted_blocks() -> None:
    for label in ("RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY"):
        block = f"-----BEGIN {label}-----\n{BODY}-----END {label}-----"
        assert detect(DETECTOR, block) == [("PRIVATE_KEY", block)]


def test_pgp_private_key_block() -> None:
    block = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBGYx2k8BCAC7\n=Xy4Z\n-----END PGP PRIVATE KEY BLOCK-----"
    assert detect(DETECTOR, block) == [("PRIVATE_KEY", block)]


def test_json_escaped_key_on_one_line() -> None:
    value = "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADAN\\n-----END PRIVATE KEY-----"
    assert detect(DETECTOR, f'{{"private_key": "{value}\\n"}}') == [("PRIVATE_KEY", value)]


def test_truncated_block_masked_through_its_key_material() -> None:
    text = f"$ cat id_rsa | head -3\n-----BEGIN OPENSSH PRIVATE KEY-----\n{BODY}$ ls -la\ntotal 48\n"
    block = text[text.index("-----BEGIN") : text.index("$ ls")]
    assert detect(DETECTOR, text) == [("PRIVATE_KEY", block)]


def test_putty_key_file() -> None:
    text = (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5\n"
        "Private-Lines: 1\nAAAAIB3s\nPrivate-MAC: 7a9b0c2d4e6f"
    )
    assert detect(DETECTOR, text) == [("PRIVATE_KEY", text)]


def test_public_keys_and_certificates_are_not_private_keys() -> None:
    text = (
        "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----\n-----BEGIN CERTIFICATE-----\nMIID\n"
    )
    assert detect(DETECTOR, text) == []
