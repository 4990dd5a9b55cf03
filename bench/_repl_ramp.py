"""The ramp part of bench/supervisor_triggers.py: concurrent callers (5, 10, 20, 40) into 5 panes of a
real `python3 -i` (or `bash`), through the supervisor with its defaults, each caller a gRPC or HTTP
client that sends its triggers one after the other and waits for each one's final outcome (a
deferred one is read again with GetTrigger until it ends).

The truth is what ran: each prompt appends its own marker to the pane's file (`open(...).write()` in
Python, `echo ... >>` in bash), so after the step settles a marker that is there ran, once or more.
Per step: p50/p95/max from the call to the final outcome, the count delivered, the outcomes by
result and code, and the false ones: a `delivered` whose prompt never ran, a `timeout` (or other
end) whose prompt did run, a prompt that ran twice, a line in a pane's file that is no marker
(two prompts merged)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (puts the repository root on sys.path)
import grpc
import httpx
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

FINAL = {"delivered", "timeout", "failed", "typed_not_submitted"}
# An answer that is no outcome (an HTTP error, a gRPC status) ends the wait too.
NOT_OUTCOMES = ("HTTP ",)
# A caller stops waiting for one trigger's final outcome after this long (counted as such).
GIVE_UP_SECS = 120.0
WORKSPACE = "benchramp"


class RampPanes:
    """Five panes of one program (`python` or `bash`), each appending markers to a file of its own."""

    def __init__(self, http: httpx.AsyncClient, stub: pb_grpc.SupervisorServiceStub, token: str,
                 folder: Path, program: str) -> None:  # fmt: skip
        self.http = http
        self.stub = stub
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.folder = folder
        self.program = program
        self.agents: list[str] = []

    async def spawn(self, count: int, python: str) -> None:
        for n in range(count):
            agent = f"{self.program}{n}"
            if self.program.startswith("python"):
                kind, command, ready = "python", [python, "-i", "-q"], ">>>"
            else:
                kind, command, ready = "shell", ["bash", "--norc", "--noprofile"], "$#"
            response = await self.http.post("/v1/runtimes/spawn", json={
                "workspace_id": WORKSPACE, "agent_id": agent, "role": agent, "kind": kind, "command": command,
                "cwd": str(self.folder)})  # fmt: skip
            response.raise_for_status()
            runtime = response.json()["runtime"]
            await self._wait_prompt(runtime["runtime_id"], ready)
            self.agents.append(agent)

    async def _wait_prompt(self, runtime_id: str, ready: str) -> None:
        for _ in range(200):
            lines = (await self.http.get(f"/v1/runtimes/{runtime_id}/logs")).json()["lines"]
            if any(
                line.strip().startswith(ready) or line.rstrip()[-1:] in ready
                for line in lines
                if line.strip()
            ):
                return
            await asyncio.sleep(0.05)
        raise RuntimeError(f"{self.program} pane {runtime_id} never showed {ready!r}: {lines[-5:]}")

    def ran_file(self, agent: str) -> Path:
        return self.folder / f"ran-{agent}.log"

    def prompt(self, agent: str, marker: str) -> str:
        """`python`: every prompt to a pane opens alike (as an orchestrator's often do: "Review the
        ..."), the marker at its end; `python-unique`: the marker opens it; `bash`: `echo <marker>`."""
        path = self.ran_file(agent)
        if self.program == "python":
            return f"open({str(path)!r}, 'a').write({marker!r} + chr(10))"
        if self.program == "python-unique":
            return f"mk = {marker!r}; open({str(path)!r}, 'a').write(mk + chr(10))"
        return f"echo {marker} >> {path}"

    def ran(self) -> tuple[Counter[str], list[str]]:
        """Markers that ran (how often), and lines that are no marker (prompts merged)."""
        counts: Counter[str] = Counter()
        strays: list[str] = []
        for agent in self.agents:
            path = self.ran_file(agent)
            for line in path.read_text().splitlines() if path.exists() else []:
                if line.startswith("mk-") and len(line) == 15:
                    counts[line] += 1
                else:
                    strays.append(line)
        return counts, strays

    async def _ask(self, api: str, trigger_id: str, agent: str, prompt: str) -> tuple[str, str, str]:
        if api == "http":
            response = await self.http.post("/v1/triggers", timeout=GIVE_UP_SECS, json={
                "trigger_id": trigger_id, "agent_id": agent, "workspace_id": WORKSPACE, "thread_id": trigger_id,
                "prompt": prompt})  # fmt: skip
            if response.status_code != 200:
                return f"HTTP {response.status_code}", "", response.text[:200]
            answer: dict[str, Any] = response.json()
            return answer["result"], answer.get("error_code", ""), answer.get("detail", "")
        request = pb.TriggerRuntimeRequest(trigger_id=trigger_id, agent_id=agent, workspace_id=WORKSPACE,
                                           thread_id=trigger_id, prompt=prompt)  # fmt: skip
        message = await self.stub.TriggerRuntime(request, metadata=self.metadata, timeout=GIVE_UP_SECS)
        return message.result, message.error_code, message.detail

    async def trigger(self, api: str, agent: str, marker: str) -> tuple[str, str, str, float]:
        """One trigger to its final outcome: (result, code, detail, seconds from the call)."""
        trigger_id = f"r-{marker}"
        prompt = self.prompt(agent, marker)
        started = time.monotonic()
        try:
            result, code, detail = await self._ask(api, trigger_id, agent, prompt)
        except (httpx.TimeoutException, grpc.aio.AioRpcError) as error:
            return f"no answer within {GIVE_UP_SECS:g} s", "", str(error)[:200], time.monotonic() - started
        while result not in FINAL and not result.startswith(NOT_OUTCOMES):
            await asyncio.sleep(0.05)
            got = (await self.http.get(f"/v1/triggers/{trigger_id}")).json()
            result, code, detail = got["result"], got.get("error_code", ""), got.get("detail", "")
            if time.monotonic() - started > GIVE_UP_SECS:
                return f"no final outcome within {GIVE_UP_SECS} s ({result})", code, detail, GIVE_UP_SECS

        return result, code, detail, time.monotonic() - started


async def ramp_step(panes: RampPanes, callers: int, per_caller: int) -> dict[str, Any]:
    """`callers` clients at once, caller i on pane i % 5, each sending `per_caller` triggers in turn."""
    outcomes: list[tuple[str, str, str, str, float]] = []  # marker, result, code, detail, seconds

    async def caller(index: int) -> None:
        agent = panes.agents[index % len(panes.agents)]
        api = "http" if index % 2 == 0 else "grpc"
        for _ in range(per_caller):
            marker = f"mk-{uuid.uuid4().hex[:12]}"
            result, code, detail, took = await panes.trigger(api, agent, marker)
            outcomes.append((marker, result, code, detail, took))

    began = time.monotonic()
    await asyncio.gather(*(caller(i) for i in range(callers)))
    seconds = time.monotonic() - began
    # Let the panes finish what they were given, then read what ran.
    markers = {o[0] for o in outcomes}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        counts, _ = panes.ran()
        if markers <= set(counts):
            break
        await asyncio.sleep(0.2)
    counts, strays = panes.ran()
    times = sorted(o[4] for o in outcomes)
    delivered = [o for o in outcomes if o[1] == "delivered"]
    step = {
        "callers": callers,
        "triggers": len(outcomes),
        "seconds": round(seconds, 2),
        "final_outcome_p50_ms": round(_pct(times, 0.50) * 1000, 1),
        "final_outcome_p95_ms": round(_pct(times, 0.95) * 1000, 1),
        "final_outcome_max_ms": round(times[-1] * 1000, 1) if times else None,
        "delivered": len(delivered),
        "outcomes": dict(Counter(f"{o[1]} {o[2]}".strip() for o in outcomes)),
        "false_delivered": sum(1 for o in delivered if counts[o[0]] == 0),
        "false_not_delivered": sum(1 for o in outcomes if o[1] != "delivered" and counts[o[0]] > 0),
        "ran_twice": sum(1 for marker in markers if counts[marker] > 1),
        "ran": sum(1 for marker in markers if counts[marker] > 0),
        "stray_lines": strays[:5],
        "details_not_delivered": sorted({o[3] for o in outcomes if o[1] != "delivered"})[:5],
    }
    print(json.dumps(step), file=sys.stderr, flush=True)
    return step


def _pct(ordered: list[float], fraction: float) -> float:
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


async def ramp(
    http: httpx.AsyncClient, grpc_port: int, token: str, folder: Path, python: str,
    program: str, steps: list[int], per_caller: int,
) -> dict[str, Any]:  # fmt: skip
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}")
    try:
        panes = RampPanes(http, pb_grpc.SupervisorServiceStub(channel), token, folder, program)
        await panes.spawn(5, python)
        await ramp_step(panes, 5, 1)  # warm up: each pane's first prompt
        return {
            "program": program,
            "kind": "python (python3 -i)" if program.startswith("python") else "shell (bash)",
            "panes": 5,
            "triggers_per_caller": per_caller,
            "steps": [await ramp_step(panes, callers, per_caller) for callers in steps],
        }
    finally:
        await channel.close()
