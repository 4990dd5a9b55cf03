"""Agents over TCP: registered with `kronii capture clients add`, they prove their Ed25519 key by
challenge-response and get a short session with exactly the capabilities registered; revoking them
ends it. Against the capture service as a process on real PostgreSQL and Redis."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import grpc
import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from kronii.capture.v1 import capture_pb2 as pb
from kronii.capture.v1 import capture_pb2_grpc as pb_grpc

from tests.infra import InfraUrls
from tests.integration.capture.capture_support import CaptureProc

KRONII = str(Path(sys.executable).with_name("kronii"))


async def clients(infra: InfraUrls, database: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    env.update(KRONII_DATABASE_URL=database, KRONII_REDIS_URL=infra.redis)
    return await asyncio.to_thread(
        subprocess.run,
        [KRONII, "capture", "clients", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def openssh_public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)


async def login(stub: pb_grpc.ScreenCaptureStub, client_id: str, key: Ed25519PrivateKey) -> pb.Session:
    challenge = await stub.BeginChallenge(pb.ChallengeRequest(client_id=client_id), timeout=10)
    session: pb.Session = await stub.Authenticate(
        pb.AuthenticateRequest(
            challenge_id=challenge.challenge_id, client_id=client_id, signature=key.sign(challenge.nonce)
        ),
        timeout=10,
    )
    return session


async def test_a_registered_agent_gets_a_session_with_only_its_capabilities_until_revoked(
    capture_service: CaptureProc, infra: InfraUrls, capture_database: str, tmp_path: Path
) -> None:
    key = Ed25519PrivateKey.generate()
    key_file = tmp_path / "agent.pub"
    key_file.write_bytes(openssh_public(key))
    added = await clients(
        infra,
        capture_database,
        "add",
        "codex-it",
        "--public-key",
        str(key_file),
        "--capability",
        "read_redacted",
    )
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "registered codex-it: READ_REDACTED"
    listed = await clients(infra, capture_database, "list")
    assert any(line.startswith("codex-it") and "active" in line for line in listed.stdout.splitlines())

    async with grpc.aio.insecure_channel(f"127.0.0.1:{capture_service.grpc_port}") as channel:
        stub = pb_grpc.ScreenCaptureStub(channel)
        session = await login(stub, "codex-it", key)
        assert list(session.capabilities) == ["READ_REDACTED"]
        bearer = (("authorization", f"Bearer {session.session_token}"),)

        # READ_REDACTED lets it ask for a token (an unknown id is NOT_FOUND, not a refusal) ...
        with pytest.raises(grpc.aio.AioRpcError) as unknown:
            await stub.IssueToken(
                pb.IssueTokenRequest(screenshot_id="no-such-id"), metadata=bearer, timeout=10
            )
        assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
        # ... but not to list screenshots or to request a capture.
        for call in (
            stub.ListScreenshots(pb.ListScreenshotsRequest(), metadata=bearer, timeout=10),
            stub.RequestScreenCapture(pb.CaptureRequest(bypass=pb.FOCUS_NEXT), metadata=bearer, timeout=10),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as denied:
                await call
            assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED

        # Another key for the same name does not get in.
        with pytest.raises(grpc.aio.AioRpcError) as impostor:
            await login(stub, "codex-it", Ed25519PrivateKey.generate())
        assert impostor.value.code() == grpc.StatusCode.UNAUTHENTICATED

        revoked = await clients(infra, capture_database, "revoke", "codex-it")
        assert revoked.returncode == 0, revoked.stderr
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            await stub.IssueToken(
                pb.IssueTokenRequest(screenshot_id="no-such-id"), metadata=bearer, timeout=10
            )
        assert ended.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await login(stub, "codex-it", key)
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_clients_add_refuses_a_key_that_is_not_ed25519_with_exit_code_2(
    infra: InfraUrls, capture_database: str, tmp_path: Path
) -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa

    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_file = tmp_path / "rsa.pub"
    key_file.write_bytes(
        rsa_key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    )
    refused = await clients(infra, capture_database, "add", "rsa-agent", "--public-key", str(key_file))
    assert refused.returncode == 2
    assert "not an Ed25519 public key" in refused.stderr
    unknown = await clients(
        infra, capture_database, "add", "x", "--public-key", str(key_file), "--capability", "root"
    )
    assert unknown.returncode == 2


async def test_agents_log_in_over_http_too_and_every_handshake_is_counted(
    capture_service: CaptureProc, infra: InfraUrls, capture_database: str, tmp_path: Path
) -> None:
    key = Ed25519PrivateKey.generate()
    key_file = tmp_path / "agent.pub"
    key_file.write_bytes(openssh_public(key))
    added = await clients(infra, capture_database, "add", "http-agent", "--public-key", str(key_file))
    assert added.returncode == 0, added.stderr

    async with httpx.AsyncClient(base_url=capture_service.http, timeout=10) as http:
        made = (await http.post("/v1/capture/challenge", json={"client_id": "http-agent"})).json()
        bad = await http.post(
            "/v1/capture/authenticate",
            json={"challenge_id": made["challenge_id"], "client_id": "http-agent", "signature_hex": "zz"},
        )
        assert bad.status_code == 400 and "signature_hex" in bad.text
        made = (await http.post("/v1/capture/challenge", json={"client_id": "http-agent"})).json()
        signature = key.sign(bytes.fromhex(made["nonce_hex"])).hex()
        session = await http.post(
            "/v1/capture/authenticate",
            json={
                "challenge_id": made["challenge_id"],
                "client_id": "http-agent",
                "signature_hex": signature,
            },
        )
        assert session.status_code == 200, session.text
        assert session.json()["capabilities"] == ["READ_REDACTED", "REQUEST_CAPTURE"]
        bearer = {"authorization": f"Bearer {session.json()['session_token']}"}
        listing = await http.get("/v1/capture/screenshots", headers=bearer)
        assert listing.status_code == 403 and "LIST_META" in listing.text
        metrics = (await http.get("/metrics")).text
    counted = {
        line.split("{", 1)[1].split("}", 1)[0]
        for line in metrics.splitlines()
        if line.startswith("kronii_capture_access_total{")
    }
    assert 'operation="challenge",result="ok"' in counted
    assert 'operation="authenticate",result="invalid_argument"' in counted
    assert 'operation="authenticate",result="ok"' in counted
