"""Structured documents and command lines with secrets in them, for the generated corpus (fixed seed).

Each format is written as the tool that reads it expects (JSON, YAML, TOML, INI, .env, URL query strings,
.netrc, .pgpass, docker's config.json auths, `kubectl get secret -o yaml`, `docker inspect`), three times with
different values: a password made of words (low entropy: only the key's name says it is a secret), a random
password, and a random API token. Base64 values (docker auths, Kubernetes data) are labelled as they appear:
the encoded form is what must not be left.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable, Iterable

from tests.unit.redaction.generated_samples import Label, Sample

SEED = 32_2026
WORDS = (
    "marigold",
    "otter",
    "lantern",
    "quartz",
    "saffron",
    "harbor",
    "velvet",
    "pepper",
    "cobalt",
    "meadow",
)


class Doc:
    """Text built piece by piece, with labelled values."""

    def __init__(self, group: str, kind: str, suffix: str) -> None:
        self.group, self.kind, self.suffix = group, kind, suffix
        self.parts: list[str] = []
        self.labels: list[tuple[int, int, str, str]] = []

    def text(self, piece: str) -> Doc:
        self.parts.append(piece)
        return self

    def value(self, piece: str, family: str, what: str) -> Doc:
        start = sum(len(p) for p in self.parts)
        self.parts.append(piece)
        self.labels.append((start, start + len(piece), family, what))
        return self

    def done(self) -> Sample:
        labels: tuple[Label, ...] = tuple(
            Label(s, e, family, f"{self.group}:{self.kind} {what}") for s, e, family, what in self.labels
        )
        return Sample(self.group, "".join(self.parts), labels, self.suffix)


def _word_password(rng: random.Random) -> str:
    return f"{rng.choice(WORDS)}-{rng.choice(WORDS).title()}-{rng.randint(10, 99)}"


def _random_password(rng: random.Random) -> str:
    chars = string.ascii_letters + string.digits + "!#%*+=?@^_"
    return "".join(rng.choice(chars) for _ in range(14))


def _token(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(32))


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _json(pw: str, tok: str) -> Doc:
    doc = Doc("structured", "json", ".json").text(
        '{\n  "database": {\n    "host": "db.internal",\n    "user": "app",\n'
    )
    doc.text('    "password": "').value(pw, "PASSWORD", "password").text('"\n  },\n  "api_key": "')
    return doc.value(tok, "SECRET", "api_key").text('",\n  "retries": 3\n}\n')


def _yaml(pw: str, tok: str) -> Doc:
    doc = Doc("structured", "yaml", ".yaml").text(
        "database:\n  host: db.internal\n  port: 5432\n  password: "
    )
    return (
        doc.value(pw, "PASSWORD", "password")
        .text("\nnotify:\n  api_token: ")
        .value(tok, "SECRET", "api_token")
        .text("\n")
    )


def _toml(pw: str, tok: str) -> Doc:
    doc = Doc("structured", "toml", ".toml").text(
        '[database]\nurl = "postgresql://db.internal/app"\npassword = "'
    )
    doc.value(pw, "PASSWORD", "password").text('"\n\n[service]\nsecret_key = "')
    return doc.value(tok, "SECRET", "secret_key").text('"\n')


def _ini(pw: str, tok: str) -> Doc:
    doc = Doc("structured", "ini", ".ini").text("[client]\nuser = backup\npassword = ")
    return (
        doc.value(pw, "PASSWORD", "password")
        .text("\n\n[s3]\nsecret_access_key = ")
        .value(tok, "SECRET", "secret_key")
        .text("\n")
    )


def _env(pw: str, tok: str) -> Doc:
    doc = (
        Doc("structured", "env", ".env")
        .text("APP_ENV=production\nDB_PASSWORD=")
        .value(pw, "PASSWORD", "password")
    )
    return doc.text("\nSESSION_SECRET=").value(tok, "SECRET", "session_secret").text("\nLOG_LEVEL=info\n")


def _query(pw: str, tok: str) -> Doc:
    doc = Doc("structured", "query", ".txt").text(
        "GET https://reports.internal.test/export?user=jdoe&password="
    )
    doc.value(pw, "PASSWORD", "password").text("&access_token=").value(tok, "SECRET", "access_token")
    return doc.text("&format=csv HTTP/1.1 200\n")


def _netrc(pw: str, tok: str) -> Doc:
    doc = Doc("structured", "netrc", ".netrc").text("machine git.internal.test login jdoe password ")
    doc.value(pw, "PASSWORD", "password").text("\nmachine api.internal.test\n  login deploy\n  password ")
    return doc.value(tok, "SECRET", "password").text("\n")


def _pgpass(pw: str, tok: str) -> Doc:
    doc = (
        Doc("structured", "pgpass", ".pgpass")
        .text("db.internal:5432:app:app_user:")
        .value(pw, "PASSWORD", "password")
    )
    return doc.text("\nreplica.internal:5432:*:replicator:").value(tok, "PASSWORD", "password").text("\n")


def _docker_config(pw: str, tok: str) -> Doc:
    doc = Doc("structured", "docker config.json", ".json").text(
        '{\n  "auths": {\n    "registry.internal.test": {\n      "auth": "'
    )
    doc.value(_b64(f"deploy:{pw}"), "PASSWORD", "auth (base64 user:password)").text(
        '"\n    },\n    "ghcr.io": {\n      "auth": "'
    )
    return doc.value(_b64(f"jdoe:{tok}"), "SECRET", "auth (base64 user:token)").text('"\n    }\n  }\n}\n')


def _kubectl(pw: str, tok: str) -> Doc:
    doc = Doc("structured", "kubectl secret yaml", ".yaml").text("apiVersion: v1\ndata:\n  password: ")
    doc.value(_b64(pw), "PASSWORD", "data (base64)").text("\n  api-token: ").value(
        _b64(tok), "SECRET", "data (base64)"
    )
    doc.text("\n  username: ").text(_b64("app_user"))
    return doc.text(
        "\nkind: Secret\nmetadata:\n  name: app-credentials\n  namespace: default\ntype: Opaque\n"
    )


def _docker_inspect(pw: str, tok: str) -> Doc:
    doc = Doc("structured", "docker inspect env", ".json").text('[\n  {\n    "Config": {\n      "Env": [\n')
    doc.text('        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",\n        "POSTGRES_PASSWORD=')
    doc.value(pw, "PASSWORD", "env").text('",\n        "API_TOKEN=').value(tok, "SECRET", "env")
    return doc.text('",\n        "LANG=C.UTF-8"\n      ]\n    }\n  }\n]\n')


FORMATS: tuple[Callable[[str, str], Doc], ...] = (
    _json, _yaml, _toml, _ini, _env, _query, _netrc, _pgpass, _docker_config, _kubectl, _docker_inspect,
)  # fmt: skip


def structured_samples() -> Iterable[Sample]:
    for index, build in enumerate(FORMATS):
        rng = random.Random(f"{SEED}/structured/{index}")
        for password in (_word_password(rng), _random_password(rng)):
            yield build(password, _token(rng)).done()


# Passwords given on the command line, from the tools' manuals (the flag or form each documents).
COMMANDS = (
    ("mysql", "mysql -h db.internal -u root -p{value} app"),
    ("mysql", "mysql --user=root --password={value} app"),
    ("sshpass", "sshpass -p {value} ssh deploy@10.0.4.7"),
    ("curl", "curl -u jdoe:{value} https://api.internal.test/v1/items"),
    ("psql", "PGPASSWORD={value} psql -h db.internal -U app"),
    ("htpasswd", "htpasswd -b /etc/nginx/.htpasswd admin {value}"),
    ("smbclient", "smbclient //nas/share -U jdoe%{value}"),
    ("redis-cli", "redis-cli -h cache.internal -a {value} ping"),
    ("docker login", "docker login -u jdoe -p {value} registry.internal.test"),
    ("openssl", "openssl pkcs12 -export -in cert.pem -passout pass:{value} -out cert.p12"),
    ("net use", "net use Z: \\\\nas\\share /user:CORP\\jdoe {value}"),
    ("mongo", "mongosh --username admin --password {value} --authenticationDatabase admin"),
)


def cli_samples() -> Iterable[Sample]:
    rng = random.Random(f"{SEED}/cli")
    for tool, command in COMMANDS:
        password = _word_password(rng) if rng.random() < 0.5 else _random_password(rng)
        before, _, after = command.partition("{value}")
        yield (
            Doc("cli", tool, ".sh")
            .text(before)
            .value(password, "PASSWORD", "password flag")
            .text(after)
            .done()
        )
