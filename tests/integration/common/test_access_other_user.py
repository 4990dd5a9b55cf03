"""A second local user is refused on every private or mutating route of every service, over HTTP,
gRPC and the capture socket, even holding valid tokens; the open routes stay open and private-free.

The stranger is a real second uid (created when the suite runs as root) running the system Python
with a copy of grpcio: nothing of kronii's environment is reachable by it.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import typing_extensions
from kronii.runtime.rendezvous import capture_socket_path
from kronii.runtime.services import installed_services

from tests.mesh import Proc, standalone_env

STRANGER = "kronii-stranger"
KRONII = str(Path(sys.executable).parent / "kronii")
HERE = Path(__file__).parent
OPEN = {"/healthz", "/readyz", "/metrics"}


@dataclass
class Stranger:
    uid: int
    gid: int
    python: str
    home: Path

    def run(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        result = subprocess.run(
            [self.python, str(self.home / "stranger_client.py")],
            input=json.dumps(calls),
            capture_output=True,
            text=True,
            timeout=300,
            user=self.uid,
            group=self.gid,
            extra_groups=[],
            cwd=self.home,
            env={"PYTHONPATH": str(self.home), "PATH": "/usr/bin:/bin", "GRPC_VERBOSITY": "NONE"},
            check=False,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        answers: list[dict[str, Any]] = json.loads(result.stdout)
        return answers


def _system_python() -> str | None:
    """A system interpreter of this one's minor version (the copied grpcio is built for it)."""
    wanted = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (f"/usr/bin/{wanted}", f"/usr/local/bin/{wanted}"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="module")
def stranger() -> Iterator[Stranger]:
    if os.geteuid() != 0:
        pytest.skip("a second local user can be created only when the suite runs as root")
    python = _system_python()
    if python is None:
        pytest.skip(f"no system python{sys.version_info.major}.{sys.version_info.minor} for the second user")
    try:
        entry = pwd.getpwnam(STRANGER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", STRANGER],
            check=True,
            capture_output=True,
        )
        entry = pwd.getpwnam(STRANGER)
    home = Path(tempfile.mkdtemp(prefix="kronii-stranger-"))
    shutil.copytree(Path(grpc.__file__).parent, home / "grpc")
    shutil.copy(typing_extensions.__file__, home / "typing_extensions.py")
    shutil.copy(HERE / "stranger_client.py", home / "stranger_client.py")
    for path in [home, *home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    try:
        yield Stranger(entry.pw_uid, entry.pw_gid, python, home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


@dataclass
class Mesh:
    env: dict[str, str]
    data_dir: Path

    def http_port(self, service: str) -> int:
        return int(self.env[f"KRONII_{service.upper()}_HTTP_PORT"])

    def grpc_port(self, service: str) -> int:
        return int(self.env[f"KRONII_{service.upper()}_GRPC_PORT"])


@pytest.fixture(scope="module")
def mesh() -> Iterator[Mesh]:
    data_dir = Path(tempfile.mkdtemp(prefix="kronii-access-")) / "data"
    env = {**standalone_env(data_dir), "KRONII_TEST_FAST_PG": "1"}
    proc = Proc([KRONII, "up"], env)
    try:
        proc.wait_for_line(lambda line: line.strip() == "kronii is up", 120)
        yield Mesh(env, data_dir)
    finally:
        proc.terminate()
        shutil.rmtree(data_dir.parent, ignore_errors=True)


SERVICES = [spec.name for spec in installed_services()]


def _operations(mesh: Mesh, service: str) -> list[tuple[str, str]]:
    """Every (method, concrete path) of the service's own OpenAPI, read as its own user."""
    spec = httpx.get(f"http://127.0.0.1:{mesh.http_port(service)}/openapi.json", timeout=10).json()
    found = []
    for template, item in spec["paths"].items():
        path = re.sub(r"\{[^}]+\}", "x1", template)
        for method in item:
            if method in {"get", "post", "put", "patch", "delete"}:
                found.append((method.upper(), path))
    return found


def _tokens(mesh: Mesh) -> dict[str, str]:
    made = subprocess.run(
        [KRONII, "agents", "token", "--scope", "trigger", "--scope", "operate", "--scope", "read"],
        env=mesh.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return {
        "none": "",
        "mesh": (mesh.data_dir / "secrets" / "api_token").read_text().strip(),
        "supervisor": made.stdout.strip(),
    }


@pytest.mark.parametrize("service", SERVICES)
def test_other_user_is_refused_on_every_private_http_route_even_with_tokens(
    stranger: Stranger, mesh: Mesh, service: str
) -> None:
    operations = [op for op in _operations(mesh, service) if op[1] not in OPEN]
    assert operations, f"{service} documents no private route"
    calls = []
    for name, token in _tokens(mesh).items():
        headers = {"content-type": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        for method, path in operations:
            body = "{}" if method != "GET" else None
            calls.append(
                {
                    "kind": "http",
                    "host": "127.0.0.1",
                    "port": mesh.http_port(service),
                    "method": method,
                    "path": path,
                    "headers": headers,
                    "body": body,
                    "label": f"{name} {method} {path}",
                }
            )
    answers = stranger.run(calls)
    wrong = [
        (call["label"], answer)
        for call, answer in zip(calls, answers, strict=True)
        if answer.get("status") != 403
    ]
    assert not wrong, wrong[:5]
    assert all("only the processes of the user" in answer["body"] for answer in answers)


@pytest.mark.parametrize("service", SERVICES)
def test_open_routes_answer_other_users_and_carry_no_secrets(
    stranger: Stranger, mesh: Mesh, service: str
) -> None:
    calls = [
        {"kind": "http", "host": "127.0.0.1", "port": mesh.http_port(service), "method": "GET", "path": path}
        for path in sorted(OPEN)
    ]
    answers = stranger.run(calls)
    assert [answer.get("status") for answer in answers] == [200, 200, 200], answers
    secrets = [p.read_text().strip() for p in (mesh.data_dir / "secrets").iterdir()]
    for answer in answers:
        assert str(mesh.data_dir) not in answer["body"]
        assert not any(secret in answer["body"] for secret in secrets)


def test_the_same_routes_answer_the_services_own_user(mesh: Mesh) -> None:
    """The control: the refusals above are about the caller's uid, not broken routes."""
    snapshot = httpx.get(f"http://127.0.0.1:{mesh.http_port('sensor')}/v1/snapshot", timeout=10)
    assert snapshot.status_code == 200
    schedule = httpx.get(f"http://127.0.0.1:{mesh.http_port('scheduler')}/v1/schedule", timeout=10)
    assert schedule.status_code == 200


API_MODULES = {"sensor": "kronii.activity.v1.activity_pb2"}


def _grpc_methods(service: str) -> list[tuple[str, bool]]:
    if not importlib.util.find_spec(f"kronii.{service}.v1") and service not in API_MODULES:
        return []  # a service without a proto (the console speaks HTTP only)
    module = importlib.import_module(API_MODULES.get(service, f"kronii.{service}.v1.{service}_pb2"))
    found = []
    for descriptor in module.DESCRIPTOR.services_by_name.values():
        for method in descriptor.methods:
            found.append((f"/{descriptor.full_name}/{method.name}", method.server_streaming))
    return found


# The pipeline serves only gRPC health; its proto holds messages, no service.
GRPC_SERVICES = [service for service in SERVICES if _grpc_methods(service)]


@pytest.mark.parametrize("service", GRPC_SERVICES)
def test_other_user_is_refused_on_every_grpc_method(stranger: Stranger, mesh: Mesh, service: str) -> None:
    methods = _grpc_methods(service)
    target = f"127.0.0.1:{mesh.grpc_port(service)}"
    mesh_token = (mesh.data_dir / "secrets" / "api_token").read_text().strip()
    calls = [
        {"kind": "grpc", "target": target, "method": method, "streaming": streaming, "metadata": metadata}
        for method, streaming in methods
        for metadata in ({}, {"authorization": f"Bearer {mesh_token}"})
    ]
    calls.append(
        {"kind": "grpc", "target": target, "method": "/grpc.health.v1.Health/Check", "streaming": False}
    )
    answers = stranger.run(calls)
    *private, health = answers
    assert all(answer.get("code") == "PERMISSION_DENIED" for answer in private), list(
        zip([c["method"] for c in calls], private, strict=False)
    )
    assert health["code"] == "OK"


def test_other_user_cannot_use_the_capture_socket(stranger: Stranger, mesh: Mesh) -> None:
    path = capture_socket_path(mesh.data_dir)
    assert path.exists(), path
    [answer] = stranger.run([{"kind": "unix", "path": str(path)}])
    assert not answer.get("answered"), answer
