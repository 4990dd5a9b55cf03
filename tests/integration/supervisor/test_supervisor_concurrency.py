"""Many callers at once on few panes: each prompt typed, submitted and confirmed before the next one
for its pane starts, every caller answered with the truth (never a 5xx), none mixed."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.integration.supervisor.conftest import Supervisor, token, wait_ready_pane


def test_sixty_triggers_at_once_on_two_panes_are_sixty_separate_submits(supervisor: Supervisor) -> None:
    agents = [f"busy-{n}-{uuid.uuid4().hex[:4]}" for n in range(2)]
    for agent in agents:
        runtime = supervisor.spawn(agent, workspace="wsbusy")["runtime"]
        wait_ready_pane(supervisor, runtime["runtime_id"])
    prompts = [(agents[i % 2], f"burst {i:02d} {uuid.uuid4().hex[:6]}") for i in range(60)]
    headers = {"authorization": f"Bearer {token()}"}

    def send(agent_prompt: tuple[str, str]) -> tuple[int, dict[str, Any] | str]:
        agent, prompt = agent_prompt
        trigger_id = f"t-{uuid.uuid4().hex[:10]}"
        answer = httpx.post(f"{supervisor.url}/v1/triggers", headers=headers, timeout=120, json={
            "trigger_id": trigger_id, "agent_id": agent, "workspace_id": "wsbusy", "thread_id": trigger_id,
            "prompt": prompt})  # fmt: skip
        return answer.status_code, answer.json() if answer.status_code == 200 else answer.text

    with ThreadPoolExecutor(max_workers=60) as pool:
        answers = list(pool.map(send, prompts))
    failed = [a for a in answers if a[0] != 200]
    assert not failed, (failed[:3], supervisor.proc.output[-3000:])
    assert {a[1]["result"] for a in answers if isinstance(a[1], dict)} == {"delivered"}
    submitted = [
        entry["prompt"] for entry in supervisor.codex.submits() if entry["prompt"].startswith("burst ")
    ]
    assert sorted(submitted) == sorted(p for _, p in prompts)
