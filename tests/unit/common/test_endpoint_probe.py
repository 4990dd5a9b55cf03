"""The model endpoint check behind the pipeline's and the vision engine's readiness: a port where nothing
listens does not answer (with the reason), any HTTP answer means the server is there, credentials in the
URL are never shown, and the check runs in the background until stopped. Real sockets."""

from __future__ import annotations

import asyncio

from kronii.launcher.infra import free_port
from kronii.llm.endpoint_probe import EndpointProbe, models_url


async def _http_server(status: str) -> tuple[asyncio.Server, int, list[bytes]]:
    seen: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(f"HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".encode())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], seen


async def test_nothing_listening_is_not_ready_with_the_reason_and_no_credentials_shown() -> None:
    probe = EndpointProbe(f"http://user:hunter22@127.0.0.1:{free_port()}/v1")
    assert probe.status().ready is False and "has not been reached yet" in probe.status().detail
    assert await probe.check() is False
    status = probe.status()
    assert status.ready is False and status.required is False
    assert "does not answer (connection refused)" in status.detail
    assert "hunter22" not in status.detail


async def test_any_http_answer_means_the_server_is_there() -> None:
    server, port, seen = await _http_server("401 Unauthorized")
    try:
        probe = EndpointProbe(f"http://127.0.0.1:{port}/v1/")
        assert await probe.check() is True
        assert probe.status().ready is True
        assert seen[0].startswith(b"GET /v1/models HTTP/1.1")
    finally:
        server.close()
        await server.wait_closed()


async def test_the_background_check_follows_the_server_and_stops_when_asked() -> None:
    server, port, seen = await _http_server("200 OK")
    probe = EndpointProbe(f"http://127.0.0.1:{port}", every_secs=0.05)
    probe.start()
    try:
        for _ in range(200):
            if len(seen) >= 2:
                break
            await asyncio.sleep(0.02)
        assert len(seen) >= 2 and probe.status().ready
        server.close()
        await server.wait_closed()
        for _ in range(200):
            if probe.answers is False:
                break
            await asyncio.sleep(0.02)
        assert probe.status().ready is False
    finally:
        await probe.stop()
    checked = probe.checked_at
    await asyncio.sleep(0.2)
    assert probe.checked_at == checked, "no check after stop"


def test_the_models_address_from_any_base_url() -> None:
    assert models_url("http://h:1") == "http://h:1/v1/models"
    assert models_url("http://h:1/v1/") == "http://h:1/v1/models"
