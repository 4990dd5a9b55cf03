"""Structure-aware redaction (issue 32): credential files of one line per host, base64 values decoded and judged,
a Kubernetes Secret's data, password hashes of htpasswd and crypt(3)."""

from __future__ import annotations

import base64
import json

import pytest
from kronii.redaction import Level, RedactionEngine

ENGINE = RedactionEngine()


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("db.internal:5432:app:appuser:Tr0ub4dor&3xyz", "Tr0ub4dor&3xyz"),
        ("localhost:*:*:postgres:hunter2hunter2", "hunter2hunter2"),
        ("*:*:*:*:pa\\:ss\\:word", "pa\\:ss\\:word"),
        ("https://dav.exemple.org/files alice S3cr3t!dav", "S3cr3t!dav"),
        ('# Secrets for authentication using CHAP\n"alice" * "p4ssw0rd" *', "p4ssw0rd"),
        ("admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/", "HqJZimcKQFAMYayBlzkrA"),
        ("bob:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "W6ph5Mm5Pz8GgiULbPgzG37mj9g"),
        ("legacy:$1$saltsalt$qjXMvbEw8oaL.CzflDugX/", "qjXMvbEw8oaL"),
    ],
)
def test_a_credential_file_line_masks_its_password(text: str, secret: str) -> None:
    result = ENGINE.redact(text)
    assert secret not in result.text
    assert result.level is not Level.GREEN


@pytest.mark.parametrize(
    "line",
    [
        "10:30:00:00:12",
        "2024-05-17 10:30:12 INFO started on 0.0.0.0:8080",
        "www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin",
        "ERROR:root:timeout:retrying:3",
        "a:b:c:d:e",
    ],
)
def test_colon_separated_lines_that_are_no_password_file_stay(line: str) -> None:
    assert ENGINE.redact(line).text == line


@pytest.mark.parametrize(
    "decoded",
    [
        "postgres://app:s3cr3tP@55w@db.internal:5432/app",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n-----END RSA PRIVATE KEY-----",
        "my phone is +44 7700 900461",
        json.dumps({"user": "deploy", "token": "ghp_R7kq2WmX9vLp4TzN8bYc3HsJ6dFa1QeU5gVo"}),
    ],
)
@pytest.mark.parametrize("layout", ["yaml", "json", "env"])
def test_a_base64_value_is_masked_when_what_it_decodes_to_is_sensitive(decoded: str, layout: str) -> None:
    value = _b64(decoded)
    text = {
        "yaml": f"spec:\n  DATABASE_URL: {value}\n",
        "json": f'{{"config": "{value}"}}',
        "env": f'"Env": ["APP_SETTINGS={value}", "PATH=/usr/bin"]',
    }[layout]
    result = ENGINE.redact(text)
    assert value[:24] not in result.text, result.text
    assert "/usr/bin" in result.text or layout != "env"


@pytest.mark.parametrize(
    "decoded",
    ['{"user":"alice","role":"admin"}', "replicas: 3\nimage: nginx:1.25", "hello world, nothing to see"],
)
def test_a_base64_value_of_harmless_text_stays(decoded: str) -> None:
    text = f"config: {_b64(decoded)}"
    assert ENGINE.redact(text).text == text


def test_every_value_of_a_kubernetes_secret_is_masked_in_yaml_and_json() -> None:
    yaml_text = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n"
        f"  username: {_b64('admin')}\n  tls.key: {_b64('x' * 40)}\ntype: Opaque\n"
    )
    result = ENGINE.redact(yaml_text)
    assert _b64("admin") not in result.text and _b64("x" * 40) not in result.text
    assert "name: db" in result.text and "type: Opaque" in result.text
    json_text = json.dumps(
        {"apiVersion": "v1", "data": {"password": _b64("hunter2"), "user": _b64("admin")}, "kind": "Secret"},
        indent=4,
    )
    result = ENGINE.redact(json_text)
    assert _b64("hunter2") not in result.text and _b64("admin") not in result.text
    assert '"kind": "Secret"' in result.text


def test_a_configmap_data_value_is_judged_not_masked_whole() -> None:
    text = f"apiVersion: v1\nkind: ConfigMap\ndata:\n  banner: {_b64('welcome to the staging cluster')}\n"
    assert ENGINE.redact(text).text == text
