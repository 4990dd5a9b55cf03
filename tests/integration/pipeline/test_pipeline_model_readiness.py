"""The pipeline's readiness includes the model endpoint its roles call (llm_backend = "openai"): pointed
at nothing, /readyz names it "the model endpoint at URL does not answer" (what `kronii status` shows),
never "every dependency ready"; it is not required (the rules floor every role, and a model server
started after `kronii up` must not stop the mesh), so the pipeline still answers ready. Once a server
answers on that address the row is ready within a few seconds. A real pipeline process and a real HTTP
server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
from kronii.launcher.infra import free_port

from tests.infra import InfraUrls
from tests.integration.pipeline.pipeline_support import pipeline_database, pipeline_env
from tests.mesh import start_service, wait_until


class _Models(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        data = b'{"object": "list", "data": [{"id": "m", "object": "model"}]}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _serve(port: int) -> Iterator[None]:
    server = ThreadingHTTPServer(("127.0.0.1", port), _Models)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def _readyz(url: str) -> tuple[int, dict[str, Any]] | None:
    try:
        response = httpx.get(f"{url}/readyz", timeout=3)
    except httpx.HTTPError:
        return None
    return response.status_code, response.json()


def test_an_openai_backend_pointing_at_nothing_is_not_ready_and_says_why(
    infra: InfraUrls, tmp_path: Path
) -> None:
    port = free_port()
    model_url = f"http://127.0.0.1:{port}/v1"
    env = pipeline_env(
        infra,
        pipeline_database(infra, "model"),
        tmp_path,
        KRONII_PIPELINE_LLM_BACKEND="openai",
        KRONII_PIPELINE_LLM_BASE_URL=model_url,
        KRONII_PIPELINE_LLM_MODEL="gemma",
    )
    with start_service("pipeline", env, ready=False) as pipeline:
        url = pipeline.url
        seen: list[tuple[int, dict[str, Any]]] = []

        def model_checked() -> bool:
            answer = _readyz(url)
            if answer is None or "model" not in answer[1].get("dependencies", {}):
                return False
            seen.append(answer)
            return "does not answer" in answer[1]["dependencies"]["model"]["detail"]

        wait_until(model_checked, 60, "the pipeline's readiness with its model endpoint checked")
        _, body = seen[-1]
        model = body["dependencies"]["model"]
        assert model["ready"] is False and model["required"] is False
        assert model["detail"].startswith(f"the model endpoint at {model_url} does not answer"), model

        serving = _serve(port)
        next(serving)
        try:
            wait_until(
                lambda: (
                    (_readyz(url) or (0, {}))[1].get("dependencies", {}).get("model", {}).get("ready") is True
                ),
                20,
                "the model row ready once the model answers",
            )
            ready = _readyz(url)
            assert ready is not None
            assert ready[1]["dependencies"]["model"] == {
                "ready": True,
                "detail": f"the model endpoint at {model_url} answers",
                "required": False,
            }
        finally:
            next(serving, None)
