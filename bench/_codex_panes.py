"""The real Codex CLI part of bench/supervisor_triggers.py: triggers through the supervisor into
live Codex panes (the pinned npm package, offline, its model endpoint a loopback server that refuses
at once, so each prompt is one short turn), next to a raw `tmux send-keys` into the same pane.

- to first byte: from the API call (or the raw call) to the first output Codex writes in reaction
  (tmux `pipe-pane -O` into a stamper: CLOCK_MONOTONIC per chunk), measured from an idle pane;
- to submit: until the prompt is an entry of Codex's history.jsonl (written when it submits);
- to delivered: until the supervisor answers `delivered`.
- concurrent: 200 triggers over 5 Codex panes at once; every prompt must be its own history entry."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (puts the repository root on sys.path, for `tests`)
import httpx

from tests.agents.real_codex import CODEX_BIN, history

STAMPER = (
    "import sys, time, json\n"
    "out = open(sys.argv[1], 'a', buffering=1)\n"
    "while True:\n"
    "    chunk = sys.stdin.buffer.read1(65536)\n"
    "    if not chunk: break\n"
    "    out.write(json.dumps(time.monotonic()) + '\\n')\n"
)


def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-S", socket, *args], capture_output=True, text=True, check=True).stdout


def _stamps(path: Path) -> list[float]:
    if not path.exists():
        return []
    return [float(line) for line in path.read_text().splitlines() if line.strip()]


class CodexPanes:
    def __init__(
        self, http: httpx.AsyncClient, socket: str, codex_home: Path, project: Path, folder: Path
    ) -> None:
        self.http = http
        self.socket = socket
        self.home = codex_home
        self.project = project
        self.folder = folder

    async def spawn(self, agent: str) -> dict[str, Any]:
        response = await self.http.post("/v1/runtimes/spawn", json={
            "workspace_id": "benchcodex", "agent_id": agent, "role": agent, "kind": "codex",
            "command": [str(CODEX_BIN)], "cwd": str(self.project),
        })  # fmt: skip
        response.raise_for_status()
        runtime: dict[str, Any] = response.json()["runtime"]
        await self.wait_idle(runtime["pty_target"], 60)
        # Offline, Codex takes its first turn only once its model list fetch gave up (about 10 s):
        # one warm-up prompt, then the pane is as a person finds it later.
        await self.trigger(agent, f"warm up {agent}")
        await self.wait_history(f"warm up {agent}", 60)
        await self.wait_idle(runtime["pty_target"], 60)
        return runtime

    async def wait_idle(self, pane: str, within: float) -> None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            screen = _tmux(self.socket, "capture-pane", "-p", "-t", pane)
            if (
                "Ask Codex to do anything" in screen
                and "esc to interrupt" not in screen
                and "for agents" in screen
            ):
                return
            await asyncio.sleep(0.05)
        raise RuntimeError(f"Codex in {pane} did not become idle within {within} s")

    async def wait_history(self, text: str, within: float) -> float:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if any(entry["text"] == text for entry in history(self.home)):
                return time.monotonic()
            await asyncio.sleep(0.005)
        raise RuntimeError(f"{text!r} never reached Codex's history")

    async def trigger(self, agent: str, prompt: str) -> str:
        trigger_id = f"bc-{uuid.uuid4().hex}"
        response = await self.http.post("/v1/triggers", json={
            "trigger_id": trigger_id, "agent_id": agent, "workspace_id": "benchcodex", "thread_id": trigger_id,
            "prompt": prompt})  # fmt: skip
        if response.status_code != 200:
            return f"HTTP {response.status_code}: {response.text[:300]}"
        return str(response.json()["result"])

    def pipe(self, pane: str, out: Path) -> None:
        stamper = self.folder / "stamper.py"
        stamper.write_text(STAMPER)
        _tmux(self.socket, "pipe-pane", "-O", "-t", pane, f"{sys.executable} -u {stamper} {out}")

    async def first_output_after(self, out: Path, since: float, within: float = 5) -> float:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            later = [at for at in _stamps(out) if at > since]
            if later:
                return min(later)
            await asyncio.sleep(0.002)
        raise RuntimeError("Codex wrote nothing after the input")


async def sequential(panes: CodexPanes, agent: str, pane: str, count: int) -> dict[str, list[float]]:
    out = panes.folder / f"stamps-{agent}.jsonl"
    panes.pipe(pane, out)
    series: dict[str, list[float]] = {"first_byte": [], "submit": [], "delivered": [], "results": []}
    for index in range(count):
        await panes.wait_idle(pane, 30)
        await asyncio.sleep(0.2)  # let the last redraw settle: the next output is the reaction
        prompt = f"bench {index} {uuid.uuid4().hex[:6]}: summarise the last change"
        started = time.monotonic()
        result = await panes.trigger(agent, prompt)
        answered = time.monotonic()
        submitted = await panes.wait_history(prompt, 30)
        first = await panes.first_output_after(out, started)
        series["first_byte"].append(first - started)
        series["submit"].append(submitted - started)
        series["delivered"].append(answered - started)
        series["results"].append(1.0 if result == "delivered" else 0.0)
    return series


async def raw_send_keys(panes: CodexPanes, pane: str, count: int) -> dict[str, list[float]]:
    """The floor in the same pane: one `tmux send-keys -l` process, 150 ms, Enter (as the Codex kind
    does), measured the same way."""
    out = panes.folder / "stamps-raw.jsonl"
    panes.pipe(pane, out)
    series: dict[str, list[float]] = {"first_byte": [], "submit": []}
    for index in range(count):
        await panes.wait_idle(pane, 30)
        await asyncio.sleep(0.2)
        prompt = f"raw {index} {uuid.uuid4().hex[:6]}: summarise the last change"
        started = time.monotonic()
        subprocess.run(["tmux", "-S", panes.socket, "send-keys", "-t", pane, "-l", "--", prompt], check=True)  # noqa: ASYNC221 - the baseline is this blocking call
        await asyncio.sleep(0.15)
        subprocess.run(["tmux", "-S", panes.socket, "send-keys", "-t", pane, "Enter"], check=True)  # noqa: ASYNC221
        submitted = await panes.wait_history(prompt, 30)
        first = await panes.first_output_after(out, started)
        series["first_byte"].append(first - started)
        series["submit"].append(submitted - started)
    return series


async def concurrent(panes: CodexPanes, agents: list[str], total: int) -> dict[str, Any]:
    prompts = [
        (agents[i % len(agents)], f"burst {i:03d} {uuid.uuid4().hex[:6]}: check the logs")
        for i in range(total)
    ]
    before = len(history(panes.home))
    began = time.monotonic()
    results = await asyncio.gather(*(panes.trigger(agent, prompt) for agent, prompt in prompts))
    answered = time.monotonic() - began
    wanted = {prompt for _, prompt in prompts}
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        texts = [entry["text"] for entry in history(panes.home)[before:]]
        if wanted <= set(texts):
            break
        await asyncio.sleep(0.2)
    submitted = time.monotonic() - began
    texts = [entry["text"] for entry in history(panes.home)[before:]]
    burst = [t for t in texts if t.startswith("burst ")]
    return {
        "triggers": total,
        "panes": len(agents),
        "delivered": results.count("delivered"),
        "results": {r: results.count(r) for r in sorted(set(results))},
        "history_entries": len(burst),
        "each_its_own_entry": sorted(burst) == sorted(wanted),
        "mixed_entries": sum(1 for t in burst if t not in wanted),
        "seconds_to_all_answers": round(answered, 2),
        "seconds_to_all_in_history": round(submitted, 2),
        "triggers_per_second": round(total / answered, 1),
    }


def codex_config(folder: Path) -> tuple[Path, Path]:
    project = folder / "codex-project"
    project.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return folder / "codex-home", project


def dump(series: dict[str, Any]) -> str:
    return json.dumps(series)
