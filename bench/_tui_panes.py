"""Real line-editing agents and REPLs under the supervisor with `--kind generic` and its defaults
(the conformance suite's agents, tests/agents/tui_agents.py: Gemini CLI, Qwen Code, ipython, ptpython,
node, sqlite3, python3 -i, bash), each spawned as the conformance suite does (`env -i`, the recipe's
variables, PATH and TERM; a private folder; the model endpoint a loopback server that refuses at once).

- per agent, N triggers one after the other, the agent idle before each: from the API call to the
  first output the agent writes in reaction (tmux `pipe-pane -O` into a stamper, CLOCK_MONOTONIC per
  chunk), to the supervisor's final answer (`delivered` p50/p95, goal p95 < 1 s), and to the prompt
  being recorded as run (its history entry, or for an agent that writes history only on exit, its
  output line in the pane's scrollback); next to a raw `tmux send-keys -l` + Enter into the same pane,
  measured the same way;
- burst: 200 triggers at once over 5 panes of mixed agents, each prompt checked against the agent's own
  history: none mixed (two prompts in one entry), none lost, none run twice, no false `delivered`
  (reported delivered, never ran) and no false `timeout` (reported timeout, but ran).

Standalone: python bench/_tui_panes.py [--sequential 20] [--burst 200] [--agents gemini,qwen,...]
writes bench/results/supervisor_tui_agents.json."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (puts the repository root on sys.path, for `tests`)
import httpx
from _common import machine, percentile, save, scratch_folder

from tests.agents.real_codex import git_repository
from tests.agents.refusing_model import refusing_model_server
from tests.agents.tui_agents import AGENTS, TuiAgent, agent_env

FINAL = {"delivered", "failed", "timeout", "typed_not_submitted", "already_active"}
WORKSPACE = "benchtui"
SEQUENTIAL_AGENTS = ("gemini", "qwen", "ipython", "ptpython", "node", "sqlite3", "python3", "bash")
BURST_AGENTS = ("gemini", "qwen", "ipython", "node", "bash")
BY_NAME = {agent.name: agent for agent in AGENTS}
# Each chunk the pane writes: its CLOCK_MONOTONIC time and its text (some agents redraw while idle,
# so the reaction is told from their own noise by what it shows).
STAMPER = (
    "import sys, time, json\n"
    "out = open(sys.argv[1], 'a', buffering=1)\n"
    "while True:\n"
    "    chunk = sys.stdin.buffer.read1(65536)\n"
    "    if not chunk: break\n"
    "    out.write(json.dumps([time.monotonic(), chunk.decode('utf-8', 'replace')]) + '\\n')\n"
)
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def kind_for(agent: TuiAgent) -> str:
    """`generic` for every agent; bash takes prompts as command lines only under the `shell` kind (a
    shell in front is otherwise what an agent exited back to)."""
    return "shell" if agent.name == "bash" else "generic"


def prompt_for(agent: TuiAgent, tag: str) -> str:
    """One line each agent takes as one message and, for a REPL, runs: its output is a line `tag`."""
    return {
        "gemini": f"say {tag}",
        "qwen": f"say {tag}",
        "node": f"console.log('{tag}')",
        "sqlite3": f"select '{tag}';",
        "bash": f"echo {tag}",
    }.get(agent.name, f"print('{tag}')")


def _tmux(socket: str, *args: str) -> str:
    done = subprocess.run(["tmux", "-S", socket, *args], capture_output=True, text=True, check=True)
    return done.stdout


def _stamps(path: Path) -> list[tuple[float, str]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            at, text = json.loads(line)
            out.append((float(at), str(text)))
    return out


def ms(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 0.50) * 1000, 1) if values else None,
        "p95_ms": round(percentile(values, 0.95) * 1000, 1) if values else None,
        "max_ms": round(max(values) * 1000, 1) if values else None,
    }


@dataclass
class Seat:
    """One agent running under the supervisor in a private folder."""

    agent: TuiAgent
    private: Path
    runtime: dict[str, Any]
    agent_id: str

    @property
    def pane(self) -> str:
        return str(self.runtime["pty_target"])


class TuiPanes:
    """Spawns recipe agents through the supervisor and reads their truth (screen, history)."""

    def __init__(self, http: httpx.AsyncClient, socket: str, folder: Path, base_url: str) -> None:
        self.http = http
        self.socket = socket
        self.folder = folder
        self.base_url = base_url
        folder.mkdir(parents=True, exist_ok=True)
        self.stamper = folder / "stamper.py"
        self.stamper.write_text(STAMPER)

    async def spawn(self, agent: TuiAgent, agent_id: str) -> Seat:
        where = self.folder / agent_id
        private = (where / "private").resolve()
        project = git_repository(where / "project").resolve()
        variables = agent.prepare(private, project, self.base_url, None)
        argv = [arg.replace("{private}", str(private)) for arg in agent.argv]
        env = agent_env(variables, base={})
        path = os.environ.get("PATH", "/usr/bin:/bin")
        command = [
            "env",
            "-i",
            *[f"{k}={v}" for k, v in env.items()],
            f"PATH={path}",
            "TERM=xterm-256color",
            *argv,
        ]
        response = await self.http.post("/v1/runtimes/spawn", json={
            "workspace_id": WORKSPACE, "agent_id": agent_id, "role": "agent", "kind": kind_for(agent),
            "command": command, "cwd": str(project)})  # fmt: skip
        if response.status_code != 201:
            raise RuntimeError(f"spawning {agent.name}: HTTP {response.status_code} {response.text[:300]}")
        seat = Seat(agent, private, response.json()["runtime"], agent_id)
        await self.wait_idle(seat, 90)
        return seat

    def screen(self, seat: Seat, *, escapes: bool = False, scrollback: bool = False) -> str:
        args = ["capture-pane", "-p", "-J", "-t", seat.pane]
        args += ["-e"] if escapes else []
        args += ["-S", "-"] if scrollback else []
        return _tmux(self.socket, *args)

    async def wait_idle(self, seat: Seat, within: float = 30) -> None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if seat.agent.is_idle(self.screen(seat, escapes=True)):
                return
            await asyncio.sleep(0.05)
        raise RuntimeError(f"{seat.agent.name} not idle within {within} s:\n{self.screen(seat)}")

    def runs(self, seat: Seat, tag: str) -> int:
        """How many times the prompt tagged `tag` is recorded as run: entries of the agent's own
        history that carry it, or, for an agent that writes history only on exit, output lines that
        are exactly `tag` in the pane's scrollback."""
        if not seat.agent.history_on_exit:
            return sum(tag in entry for entry in seat.agent.history(seat.private))
        return sum(line.strip() == tag for line in self.screen(seat, scrollback=True).splitlines())

    async def wait_run(self, seat: Seat, tag: str, within: float = 30) -> float | None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.runs(seat, tag):
                return time.monotonic()
            await asyncio.sleep(0.01)
        return None

    async def trigger(self, seat: Seat, prompt: str, within: float = 180) -> dict[str, Any]:
        """One trigger followed to its final outcome; `answered_at` is when that outcome was known."""
        trigger_id = f"bt-{uuid.uuid4().hex[:16]}"
        response = await self.http.post("/v1/triggers", timeout=within, json={
            "trigger_id": trigger_id, "agent_id": seat.agent_id, "workspace_id": WORKSPACE,
            "thread_id": trigger_id, "prompt": prompt})  # fmt: skip
        if response.status_code != 200:
            return {"trigger_id": trigger_id, "result": f"HTTP {response.status_code}",
                    "detail": response.text[:300], "answered_at": time.monotonic()}  # fmt: skip
        outcome: dict[str, Any] = response.json()
        first = dict(outcome)
        deadline = time.monotonic() + within
        while outcome.get("result") not in FINAL and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
            outcome = (await self.http.get(f"/v1/triggers/{trigger_id}")).json()
        outcome["answered_at"] = time.monotonic()
        outcome["first_answer"] = {k: first.get(k) for k in ("result", "error_code", "detail")}
        return outcome

    @contextlib.contextmanager
    def piped(self, seat: Seat, name: str) -> Iterator[Path]:
        out = self.folder / f"stamps-{seat.agent_id}-{name}.log"
        _tmux(self.socket, "pipe-pane", "-O", "-t", seat.pane, f"{sys.executable} -u {self.stamper} {out}")
        try:
            yield out
        finally:
            _tmux(self.socket, "pipe-pane", "-t", seat.pane)

    def close(self, seat: Seat) -> None:
        """Ends the agent's pane (the benchmark's own), so that finished agents use no CPU."""
        subprocess.run(
            ["tmux", "-S", self.socket, "kill-pane", "-t", seat.pane], capture_output=True, check=False
        )

    async def settle(self, seat: Seat, stamps: Path, gap: float = 0.3) -> int:
        """The agent idle, then `gap` s for its last redraw: returns how many chunks it wrote in the
        last 0.3 s (its own idle noise, which would be read as a reaction)."""
        await self.wait_idle(seat)
        await asyncio.sleep(gap)
        since = time.monotonic() - 0.3
        return sum(1 for at, _ in _stamps(stamps) if at > since)


async def first_output_after(
    stamps: Path, since: float, needle: str, within: float = 5
) -> tuple[float | None, float | None]:
    """(the first chunk the pane wrote after `since`, the first one that shows `needle`: the echo
    of the typed text, told from an agent's idle redraws)."""
    deadline = time.monotonic() + within
    first: float | None = None
    while time.monotonic() < deadline:
        later = [(at, text) for at, text in _stamps(stamps) if at > since]
        first = later[0][0] if later else None
        echo = next((at for at, text in later if needle in ANSI.sub("", text)), None)
        if echo is not None:
            return first, echo
        await asyncio.sleep(0.005)
    return first, None


def _tag(kind: str, index: int) -> str:
    return f"{kind}{index:03d}x{uuid.uuid4().hex[:6]}"


class Series:
    """Times from each send (seconds), by what was seen."""

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = {"first_byte": [], "any_output": [], "delivered": [], "ran": []}
        self.noisy = 0

    async def reaction(self, stamps: Path, started: float, tag: str) -> None:
        any_output, echo = await first_output_after(stamps, started, tag[:4])
        if any_output is not None:
            self.values["any_output"].append(any_output - started)
        if echo is not None:
            self.values["first_byte"].append(echo - started)

    def add(self, what: str, at: float | None, started: float) -> None:
        if at is not None:
            self.values[what].append(at - started)

    def figures(self) -> dict[str, Any]:
        return {
            "to_first_byte": ms(self.values["first_byte"]),
            "to_any_output": ms(self.values["any_output"]),
            "to_delivered": ms(self.values["delivered"]),
            "to_ran": ms(self.values["ran"]),
            "ran": len(self.values["ran"]),
            "idle_redraws_before_send": self.noisy,
        }


async def through_supervisor(panes: TuiPanes, seat: Seat, count: int, gap: float = 0.3) -> dict[str, Any]:
    series = Series()
    results: Counter[str] = Counter()
    anomalies: list[dict[str, Any]] = []
    with panes.piped(seat, "supervisor") as stamps:
        for index in range(count):
            series.noisy += await panes.settle(seat, stamps, gap) > 0
            tag = _tag("s", index)
            started = time.monotonic()
            outcome = await panes.trigger(seat, prompt_for(seat.agent, tag))
            ran_at = await panes.wait_run(seat, tag, 30)
            await series.reaction(stamps, started, tag)
            results[_result(outcome)] += 1
            series.add(
                "delivered", outcome["answered_at"] if outcome["result"] == "delivered" else None, started
            )
            series.add("ran", ran_at, started)
            if outcome["result"] != "delivered" or ran_at is None:
                anomalies.append({"tag": tag, "ran": ran_at is not None, **_brief(outcome),
                                  "screen": panes.screen(seat).rstrip().splitlines()[-6:]})  # fmt: skip
    return {"triggers": count, "results": dict(results), **series.figures(), "anomalies": anomalies[:10]}


def _brief(outcome: dict[str, Any]) -> dict[str, Any]:
    keys = ("trigger_id", "result", "error_code", "detail", "first_answer")
    return {k: outcome.get(k) for k in keys if outcome.get(k) not in (None, "")}


async def raw_send_keys(panes: TuiPanes, seat: Seat, count: int) -> dict[str, Any]:
    """The floor in the same pane: `tmux send-keys -l -- <prompt>` then `tmux send-keys Enter` (two
    processes, back to back), measured the same way."""
    series = Series()
    on_first_enter = 0
    with panes.piped(seat, "raw") as stamps:
        for index in range(count):
            series.noisy += await panes.settle(seat, stamps) > 0
            tag = _tag("r", index)
            started = time.monotonic()
            await _run(["tmux", "-S", panes.socket, "send-keys", "-t", seat.pane, "-l", "--",
                        _tmux_literal(prompt_for(seat.agent, tag))])  # fmt: skip
            await _run(["tmux", "-S", panes.socket, "send-keys", "-t", seat.pane, "Enter"])
            ran_at = await panes.wait_run(seat, tag, 5)
            await series.reaction(stamps, started, tag)
            on_first_enter += ran_at is not None
            if ran_at is None:  # a paste-aware agent took the Enter as part of the text: a second one
                await _run(["tmux", "-S", panes.socket, "send-keys", "-t", seat.pane, "Enter"])
                ran_at = await panes.wait_run(seat, tag, 15)
            if ran_at is None:  # still not run: the line is dropped, the pane idle again
                await _run(["tmux", "-S", panes.socket, "send-keys", "-t", seat.pane, "C-c"])
            series.add("ran", ran_at, started)
    figures = series.figures()
    figures.pop("to_delivered")
    return {"sends": count, **figures, "ran_on_first_enter": on_first_enter}


def _tmux_literal(text: str) -> str:
    """tmux reads an argument's trailing `;` as the end of its command (a person's `tmux send-keys -l
    "select 1;"` loses it): escaped, it is typed."""
    return text[:-1] + "\\;" if text.endswith(";") else text


async def _run(argv: list[str]) -> None:
    process = await asyncio.create_subprocess_exec(*argv)
    if await process.wait() != 0:
        raise RuntimeError(f"{argv[:4]} failed")


async def one_agent(panes: TuiPanes, agent: TuiAgent, count: int) -> dict[str, Any]:
    seat = await panes.spawn(agent, f"seq-{agent.name.replace('3', '')}")
    # The first prompt of a fresh agent (its first turn, its baseline): a warm-up, not measured.
    warm = _tag("w", 0)
    await panes.trigger(seat, prompt_for(agent, warm))
    await panes.wait_run(seat, warm, 60)
    supervised = await through_supervisor(panes, seat, count)
    # The same after 6 s idle (past one 5 s pass of the supervisor's reconciler, which looks at
    # every pane): does the wait before typing come from the screen not yet seen still?
    rested = await through_supervisor(panes, seat, max(3, count // 4), gap=6.0)
    raw = await raw_send_keys(panes, seat, count)
    # One trigger after the raw sends: the screen changed while the supervisor did not type.
    after_raw = await through_supervisor(panes, seat, 1)
    first, raw_first = supervised["to_first_byte"]["p50_ms"], raw["to_first_byte"]["p50_ms"]
    delivered_p95 = supervised["to_delivered"]["p95_ms"]
    panes.close(seat)
    return {
        "agent": agent.name,
        "kind": kind_for(agent),
        "pinned": agent.pinned,
        "supervisor": supervised,
        "raw_tmux_send_keys": raw,
        "supervisor_after_6_s_idle": {
            k: rested[k] for k in ("triggers", "results", "to_first_byte", "to_delivered", "anomalies")
        },
        "supervisor_after_the_raw_sends": {k: after_raw[k] for k in ("results", "to_delivered", "anomalies")},
        "targets": {
            "delivered_p95_under_1_s": delivered_p95 is not None and delivered_p95 < 1000,
            "all_delivered_and_ran": supervised["results"] == {"delivered": count}
            and supervised["ran"] == count,
            "first_byte_p50_ratio_to_raw": round(first / raw_first, 2) if first and raw_first else None,
        },
    }


async def burst(panes: TuiPanes, names: tuple[str, ...], total: int) -> dict[str, Any]:
    """`total` triggers at once over one pane of each agent, then each prompt against the history."""
    seats = [await panes.spawn(BY_NAME[name], f"burst-{name.replace('3', '')}") for name in names]
    for seat in seats:  # each agent's first turn, as in the one-at-a-time part
        warm = _tag("w", 1)
        await panes.trigger(seat, prompt_for(seat.agent, warm))
        await panes.wait_run(seat, warm, 60)
    plan = [(seats[i % len(seats)], _tag("b", i)) for i in range(total)]
    began = time.monotonic()
    outcomes = await asyncio.gather(
        *(panes.trigger(seat, prompt_for(seat.agent, tag), 600) for seat, tag in plan)
    )
    answered = time.monotonic() - began
    deadline = time.monotonic() + 120  # what was handed over finishes running
    while time.monotonic() < deadline:
        if all(panes.runs(seat, tag) for seat, tag in plan):
            break
        await asyncio.sleep(0.5)
    with contextlib.suppress(RuntimeError):
        for seat in seats:
            await panes.wait_idle(seat, 30)
    per_agent = {seat.agent.name: _burst_truth(panes, seat, plan, outcomes) for seat in seats}
    for seat in seats:
        panes.close(seat)
    times = [o["answered_at"] - began for o in outcomes]
    totals = {key: sum(a[key] for a in per_agent.values()) for key in
              ("delivered", "ran", "lost", "ran_twice", "mixed_entries", "false_delivered", "false_timeout",
               "false_other")}  # fmt: skip
    return {
        "triggers": total,
        "agents": list(names),
        "seconds_to_all_answers": round(answered, 2),
        "final_outcome": ms(times),
        "results": dict(Counter(_result(o) for o in outcomes)),
        **totals,
        "per_agent": per_agent,
        "targets": {
            "none_mixed": totals["mixed_entries"] == 0,
            "none_lost": totals["lost"] == 0,
            "no_false_outcome": totals["false_delivered"]
            == totals["false_timeout"]
            == totals["false_other"]
            == 0,
        },
    }


def _result(outcome: dict[str, Any]) -> str:
    return f"{outcome['result']} {outcome.get('error_code', '')}".strip()


def _burst_truth(
    panes: TuiPanes, seat: Seat, plan: list[tuple[Seat, str]], outcomes: list[dict[str, Any]]
) -> dict[str, Any]:
    mine = [(tag, outcome) for (s, tag), outcome in zip(plan, outcomes, strict=True) if s is seat]
    tags = [tag for tag, _ in mine]
    if seat.agent.history_on_exit:
        lines = panes.screen(seat, scrollback=True).splitlines()
        entries = [line for line in lines if any(tag in line for tag in tags)]
    else:
        entries = [e for e in seat.agent.history(seat.private) if any(tag in e for tag in tags)]
    runs = Counter(tag for entry in entries for tag in tags if tag in entry)
    mixed = [e for e in entries if sum(tag in e for tag in tags) > 1]
    false_delivered = [(t, o) for t, o in mine if o["result"] == "delivered" and runs[t] == 0]
    false_timeout = [(t, o) for t, o in mine if o["result"] == "timeout" and runs[t] > 0]
    false_other = [(t, o) for t, o in mine if o["result"] not in ("delivered", "timeout") and runs[t] > 0]
    lost = [(t, o) for t, o in mine if runs[t] == 0]
    return {
        "triggers": len(mine),
        "results": dict(Counter(_result(o) for _, o in mine)),
        "delivered": sum(o["result"] == "delivered" for _, o in mine),
        "ran": sum(1 for t in tags if runs[t]),
        "lost": len(lost),
        "ran_twice": sum(1 for t in tags if runs[t] > 1),
        "mixed_entries": len(mixed),
        "false_delivered": len(false_delivered),
        "false_timeout": len(false_timeout),
        "false_other": len(false_other),
        "examples": {
            "mixed": mixed[:3],
            "lost": [{"tag": t, **_brief(o)} for t, o in lost[:3]],
            "false": [
                {"tag": t, **_brief(o)} for t, o in (false_delivered + false_timeout + false_other)[:5]
            ],
        },
    }


async def run_tui_benchmarks(
    http: httpx.AsyncClient,
    socket: str,
    folder: Path,
    *,
    sequential: int = 20,
    burst_total: int = 200,
    agents: tuple[str, ...] = SEQUENTIAL_AGENTS,
    burst_agents: tuple[str, ...] = BURST_AGENTS,
) -> dict[str, Any]:
    """The generic-kind benchmarks against a running supervisor (`http` carries its URL and a token
    with trigger/operate/read scopes; `socket` is its tmux server): per agent, then the burst."""
    missing = [why for name in {*agents, *burst_agents} if (why := BY_NAME[name].missing())]
    if missing:
        return {"skipped": missing}
    with refusing_model_server() as base_url:
        panes = TuiPanes(http, socket, folder, base_url)
        per_agent = []
        for name in agents:
            try:
                per_agent.append(await one_agent(panes, BY_NAME[name], sequential))
            except RuntimeError as error:  # one agent that breaks leaves the others measured
                per_agent.append({"agent": name, "error": str(error)[-2000:], "targets": {}})
            print(json.dumps(per_agent[-1]), file=sys.stderr, flush=True)
        mixed = await burst(panes, burst_agents, burst_total) if burst_total else None
        print(json.dumps(mixed), file=sys.stderr, flush=True)
    return {
        "kind": "generic, default settings",
        "agents": per_agent,
        "burst": mixed,
        "targets": {
            "delivered_p95_under_1_s_on_every_agent": all(
                a["targets"]["delivered_p95_under_1_s"] for a in per_agent
            ),
            "all_delivered_and_ran": all(a["targets"].get("all_delivered_and_ran") for a in per_agent),
            **(mixed["targets"] if mixed else {}),
        },
    }


@contextlib.asynccontextmanager
async def supervisor_alone(folder: Path) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """A supervisor with its defaults against embedded NATS, Redis, PostgreSQL and a private tmux
    server (as bench/supervisor_triggers.py starts one): an authorised client and the tmux socket."""
    from kronii.launcher.infra import free_port
    from kronii.stores.db import migrate_up
    from kronii.supervisor.core.tokens import issue_token

    from tests.agents.harness import private_socket
    from tests.infra import start_test_infra
    from tests.mesh import Proc, python_module, wait_http_ready

    secret = uuid.uuid4().hex * 2
    with start_test_infra() as infra, private_socket() as socket:
        migrate_up(infra.database)
        http_port, grpc_port = free_port(), free_port()
        env = {**os.environ, **infra.env()}
        env.update(
            KRONII_DATA_DIR=str(folder / "data"), KRONII_SUPERVISOR_HTTP_PORT=str(http_port),
            KRONII_SUPERVISOR_GRPC_PORT=str(grpc_port), KRONII_SUPERVISOR_TMUX_SOCKET=socket,
            KRONII_SUPERVISOR_TOKEN_SECRET=secret, KRONII_LOG_FORMAT="json",
            KRONII_LOG_LEVEL=os.environ.get("BENCH_LOG_LEVEL", "INFO"),
        )  # fmt: skip
        supervisor = Proc(python_module("kronii.supervisor"), env)
        token = issue_token(secret.encode(), subject="bench", scopes={"trigger", "operate", "read"},
                            workspaces={"*"}, now=time.time(), ttl_secs=7200)  # fmt: skip
        url = f"http://127.0.0.1:{http_port}"
        http = httpx.AsyncClient(base_url=url, headers={"authorization": f"Bearer {token}"}, timeout=60)
        try:
            wait_http_ready(url, proc=supervisor)
            yield http, socket
        finally:
            (folder / "supervisor.log").write_text("\n".join(supervisor.lines) + "\n")
            await http.aclose()
            supervisor.terminate()


async def main(options: argparse.Namespace) -> None:
    folder = scratch_folder("kronii-bench-tui-")
    print(f"working in {folder}", file=sys.stderr)
    async with supervisor_alone(folder) as (http, socket):
        results = await run_tui_benchmarks(
            http, socket, folder / "agents", sequential=options.sequential, burst_total=options.burst,
            agents=tuple(a for a in options.agents.split(",") if a),
            burst_agents=tuple(a for a in options.burst_agents.split(",") if a),
        )  # fmt: skip
    save("supervisor_tui_agents", {"machine": machine(), **results})


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sequential", type=int, default=20, help="one-at-a-time triggers per agent")
    parser.add_argument("--burst", type=int, default=200, help="triggers at once over the burst panes")
    parser.add_argument("--agents", default=",".join(SEQUENTIAL_AGENTS))
    parser.add_argument("--burst-agents", default=",".join(BURST_AGENTS))
    asyncio.run(main(parser.parse_args()))
