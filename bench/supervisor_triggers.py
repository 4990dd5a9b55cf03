"""Triggers through the supervisor's HTTP and gRPC APIs into live panes of the fake Codex TUI.

- latency, one trigger at a time (uncontended): from the API call to the first byte read by the
  agent in its PTY, and to the submit key, p50/p95/p99, per API;
- sustained: 1,000 triggers over 20 panes at once (half HTTP, half gRPC): triggers per second,
  the same latencies under load, and the supervisor's CPU and memory;
- baseline, in the same run: a raw `tmux send-keys` subprocess call, from its start to the first
  byte in the PTY (and how long the call itself takes);
- the real Codex CLI (bench/_codex_panes.py): one trigger at a time into a live Codex pane (to
  first byte, to submit, to delivered) next to raw `tmux send-keys` into the same pane, and 200
  triggers at once over 5 Codex panes, each checked against Codex's own history.

The agent kind is Codex's: a 150 ms pause before Enter (its paste-burst window), so the submit
latency includes it by design.

- real agents under the generic kind (bench/_tui_panes.py): per agent of the conformance suite,
  trigger to first byte vs raw `tmux send-keys` and trigger to `delivered`, and 200 triggers at once
  over 5 panes of mixed agents, checked against each agent's own history;
- ramp (bench/_repl_ramp.py): 5, 10, 20, 40 concurrent callers into 5 panes of `python3 -i`, then
  of `bash`, each caller sending its triggers in turn and waiting for each final outcome: p95 to the
  final outcome, delivered, and false outcomes against what each prompt's marker shows ran.

Usage: python bench/supervisor_triggers.py [--sequential 200] [--sustained 1000] [--panes 20]
       [--codex 50] [--codex-burst 200] [--codex-panes 5] [--ramp 5,10,20,40] [--ramp-per-caller 5]
       [--ramp-programs python,bash] [--ramp-only] [--agents-only] [--no-agents]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import psutil
from _codex_panes import CodexPanes, codex_config, concurrent, raw_send_keys, sequential
from _common import machine, percentile, save, scratch_folder
from _repl_ramp import ramp
from _tui_panes import run_tui_benchmarks
from kronii.launcher.infra import free_port
from kronii.stores.db import migrate_up
from kronii.supervisor.core.tokens import issue_token
from kronii.supervisor.v1 import supervisor_pb2 as pb
from kronii.supervisor.v1 import supervisor_pb2_grpc as pb_grpc

from tests.agents.harness import FAKE_CODEX, codex_bin, private_socket, read_jsonl
from tests.agents.real_codex import codex_version, prepare_codex_home
from tests.agents.refusing_model import refusing_model_server
from tests.infra import start_test_infra
from tests.mesh import Proc, python_module, wait_http_ready

SECRET = "kronii-bench-secret-0123456789abcdef"  # noqa: S105 - the benchmark's own throwaway server


def figures(values: list[float]) -> dict[str, float]:
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 0.50) * 1000, 2),
        "p95_ms": round(percentile(values, 0.95) * 1000, 2),
        "p99_ms": round(percentile(values, 0.99) * 1000, 2),
        "max_ms": round(max(values) * 1000, 2) if values else float("nan"),
    }


class Bench:
    def __init__(self, url: str, grpc_port: int, log: Path) -> None:
        self.url = url
        self.grpc_port = grpc_port
        self.log = log
        self.token = issue_token(SECRET.encode(), subject="bench", scopes={"trigger", "operate", "read"},
                                 workspaces={"*"}, now=time.time(), ttl_secs=7200)  # fmt: skip
        self.http = httpx.AsyncClient(
            base_url=url, headers={"authorization": f"Bearer {self.token}"}, timeout=60
        )
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}")
        self.stub = pb_grpc.SupervisorServiceStub(self.channel)
        self.sent: dict[str, tuple[str, float, float]] = {}  # prompt -> (api, sent_at, answered_at)

    async def trigger(self, api: str, agent: str, index: int) -> str:
        prompt = f"bench {api} {index} {uuid.uuid4().hex[:8]}: review the diff and report"
        trigger_id = f"b-{uuid.uuid4().hex}"
        sent = time.monotonic()
        if api == "http":
            response = await self.http.post("/v1/triggers", json={
                "trigger_id": trigger_id, "agent_id": agent, "workspace_id": "bench", "thread_id": trigger_id,
                "prompt": prompt})  # fmt: skip
            result = response.json()["result"]
        else:
            request = pb.TriggerRuntimeRequest(trigger_id=trigger_id, agent_id=agent, workspace_id="bench",
                                               thread_id=trigger_id, prompt=prompt)  # fmt: skip
            answer = await self.stub.TriggerRuntime(
                request, metadata=(("authorization", f"Bearer {self.token}"),)
            )
            result = answer.result
        self.sent[prompt] = (api, sent, time.monotonic())
        return str(result)

    def latencies(self, since: int) -> dict[str, dict[str, list[float]]]:
        out: dict[str, dict[str, list[float]]] = {}
        for entry in read_jsonl(self.log)[since:]:
            seen = self.sent.get(entry["prompt"])
            if seen is None:
                continue
            api, sent, _ = seen
            bucket = out.setdefault(api, {"first_byte": [], "submit": []})
            bucket["first_byte"].append(entry["first_byte_at"] - sent)
            bucket["submit"].append(entry["submit_at"] - sent)
        return out

    async def close(self) -> None:
        await self.http.aclose()
        await self.channel.close()


async def spawn(bench: Bench, agent: str) -> dict[str, Any]:
    response = await bench.http.post("/v1/runtimes/spawn", json={
        "workspace_id": "bench", "agent_id": agent, "kind": "codex", "role": agent,
        "command": [sys.executable, str(FAKE_CODEX)]})  # fmt: skip
    response.raise_for_status()
    runtime: dict[str, Any] = response.json()["runtime"]
    for _ in range(200):
        lines = (await bench.http.get(f"/v1/runtimes/{runtime['runtime_id']}/logs")).json()["lines"]
        if any(line.startswith("\u203a") for line in lines):
            return runtime
        await asyncio.sleep(0.05)
    raise RuntimeError(f"{agent} never showed its input line")


def raw_tmux(socket: str, pane: str, log: Path, count: int) -> dict[str, Any]:
    """The floor: one `tmux send-keys` process per call, as libtmux and the CLI do."""
    to_first_byte: list[float] = []
    call: list[float] = []
    for index in range(count):
        before = len(read_jsonl(log))
        text = f"raw {index} {uuid.uuid4().hex[:8]}"
        started = time.monotonic()
        subprocess.run(["tmux", "-S", socket, "send-keys", "-t", pane, "-l", "--", text], check=True)
        call.append(time.monotonic() - started)
        time.sleep(0.15)
        subprocess.run(["tmux", "-S", socket, "send-keys", "-t", pane, "Enter"], check=True)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            entries = read_jsonl(log)[before:]
            match = [e for e in entries if e["prompt"] == text]
            if match:
                to_first_byte.append(match[0]["first_byte_at"] - started)
                break
            time.sleep(0.005)
    return {"call": figures(call), "to_first_byte": figures(to_first_byte)}


@contextlib.asynccontextmanager
async def supervisor_running(folder: Path) -> AsyncIterator[tuple[Bench, Proc, str, Path, Path]]:
    """A supervisor with its defaults against embedded NATS, Redis, PostgreSQL and a private tmux
    server, the fake Codex on its PATH and a private CODEX_HOME: (bench, its process, tmux socket,
    CODEX_HOME, the Codex project)."""
    codex = codex_bin(folder)
    codex_home, project = codex_config(folder)
    with start_test_infra() as infra, private_socket() as socket, refusing_model_server() as model_url:
        migrate_up(infra.database)
        http_port, grpc_port = free_port(), free_port()
        env = dict(os.environ)
        env.update(infra.env())
        env.update(codex.env())
        env.update(prepare_codex_home(codex_home, trusted=[project], base_url=model_url))
        env.update(
            KRONII_DATA_DIR=str(folder / "data"), KRONII_SUPERVISOR_HTTP_PORT=str(http_port),
            KRONII_SUPERVISOR_GRPC_PORT=str(grpc_port), KRONII_SUPERVISOR_TMUX_SOCKET=socket,
            KRONII_SUPERVISOR_TOKEN_SECRET=SECRET, KRONII_LOG_LEVEL=os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
        )  # fmt: skip
        supervisor = Proc(python_module("kronii.supervisor"), env)
        bench = Bench(f"http://127.0.0.1:{http_port}", grpc_port, codex.submit_log)
        try:
            wait_http_ready(bench.url, proc=supervisor)
            yield bench, supervisor, socket, codex_home, project
        except Exception:
            print("the supervisor's last log lines:\n" + "\n".join(supervisor.lines[-40:]), file=sys.stderr)
            raise
        else:
            _print_errors(supervisor)
        finally:
            await bench.close()
            supervisor.terminate()


def _print_errors(supervisor: Proc) -> None:
    first = next(
        (i for i, line in enumerate(supervisor.lines) if "Traceback" in line or "ERROR" in line), None
    )
    if first is not None:
        print(
            "the supervisor logged errors:\n" + "\n".join(supervisor.lines[first : first + 60]),
            file=sys.stderr,
        )


async def ramps(bench: Bench, folder: Path, options: dict[str, Any]) -> list[dict[str, Any]]:
    """Concurrent callers into 5 panes of each program (bench/_repl_ramp.py)."""
    out = []
    for program in options["programs"]:
        where = folder / f"ramp-{program}"
        where.mkdir(parents=True, exist_ok=True)
        out.append(
            await ramp(bench.http, bench.grpc_port, bench.token, where, sys.executable, program,
                       options["steps"], options["per_caller"])
        )  # fmt: skip
        print(json.dumps(out[-1], indent=2), file=sys.stderr)
    return out


async def run_tui_only() -> None:
    """Only the real line-editing agents under the generic kind (bench/_tui_panes.py)."""
    folder = scratch_folder("kronii-bench-tui-")
    async with supervisor_running(folder) as (bench, _supervisor, socket, _home, _project):
        results = await run_tui_benchmarks(bench.http, socket, folder / "tui")
    save("supervisor_tui_agents", {"machine": machine(), **results})


async def run_ramp_only(options: dict[str, Any]) -> None:
    folder = scratch_folder("kronii-bench-ramp-")
    async with supervisor_running(folder) as (bench, _supervisor, _socket, _home, _project):
        results = await ramps(bench, folder, options)
    save("supervisor_ramp", {"machine": machine(), "ramps": results, "targets": _ramp_targets(results)})


def _ramp_targets(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's goal: p95 to a final outcome under 2 s at 20 callers, every prompt delivered."""
    at_20 = [step for ramp_result in results for step in ramp_result["steps"] if step["callers"] == 20]
    return {
        "p95_under_2_s_at_20_callers": all(s["final_outcome_p95_ms"] < 2000 for s in at_20)
        if at_20
        else None,
        "every_prompt_delivered": all(
            step["delivered"] == step["triggers"] for r in results for step in r["steps"]
        ),
        "no_false_outcome": all(
            step["false_delivered"] == step["false_not_delivered"] == step["ran_twice"] == 0
            for r in results
            for step in r["steps"]
        ),
    }


async def run(sequential_count: int, sustained: int, panes: int, real: dict[str, int],
              ramp_options: dict[str, Any]) -> None:  # fmt: skip
    folder = scratch_folder("kronii-bench-sup-")
    async with supervisor_running(folder) as (bench, supervisor, socket, codex_home, project):
        runtimes = [await spawn(bench, f"agent{n:02d}") for n in range(panes)]
        # Warm up both APIs and the control connection.
        for index in range(10):
            await bench.trigger("http" if index % 2 else "grpc", "agent00", -index)

        start = len(read_jsonl(bench.log))
        results: list[str] = []
        for index in range(sequential_count):
            results.append(await bench.trigger("http" if index % 2 == 0 else "grpc", "agent00", index))
        uncontended = bench.latencies(start)

        process = psutil.Process(supervisor.process.pid)
        cpu_before = process.cpu_times()
        rss_peak = process.memory_info().rss
        start = len(read_jsonl(bench.log))
        per_pane = sustained // panes

        async def worker(n: int) -> list[str]:
            out = []
            for index in range(per_pane):
                api = "http" if (n + index) % 2 == 0 else "grpc"
                out.append(await bench.trigger(api, f"agent{n:02d}", 10_000 + n * per_pane + index))
            return out

        async def sample_memory() -> None:
            nonlocal rss_peak
            while True:
                rss_peak = max(rss_peak, process.memory_info().rss)
                await asyncio.sleep(0.5)

        sampler = asyncio.create_task(sample_memory())
        began = time.monotonic()
        batches = await asyncio.gather(*(worker(n) for n in range(panes)))
        took = time.monotonic() - began
        sampler.cancel()
        cpu_after = process.cpu_times()
        loaded = bench.latencies(start)
        sustained_results = [r for batch in batches for r in batch]
        cpu = (cpu_after.user + cpu_after.system) - (cpu_before.user + cpu_before.system)

        raw = raw_tmux(socket, runtimes[-1]["pty_target"], bench.log, 100)
        real_codex = await real_codex_section(bench, socket, codex_home, project, folder, real)
        ramp_results = await ramps(bench, folder, ramp_options) if ramp_options["steps"] else []
        tui_agents = (
            await run_tui_benchmarks(bench.http, socket, folder / "tui") if ramp_options["tui"] else {}
        )

    def shaped(data: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
        return {
            api: {kind: figures(values) for kind, values in kinds.items()}
            for api, kinds in sorted(data.items())
        }

    first_byte_p95 = max(figures(v["first_byte"])["p95_ms"] for v in uncontended.values())
    save(
        "supervisor_triggers",
        {
            "machine": machine(),
            "agent": "fake Codex TUI (bracketed paste, 120 ms paste-burst rule); codex kind: 150 ms before Enter",
            "real_codex": real_codex,
            "uncontended": {
                "triggers": sequential_count,
                "delivered": results.count("delivered"),
                "latency": shaped(uncontended),
            },
            "sustained": {
                "triggers": len(sustained_results),
                "panes": panes,
                "delivered": sustained_results.count("delivered"),
                "seconds": round(took, 2),
                "triggers_per_second": round(len(sustained_results) / took, 1),
                "latency": shaped(loaded),
                "supervisor_cpu_seconds": round(cpu, 2),
                "supervisor_cpu_percent_of_one_core": round(100 * cpu / took, 1),
                "supervisor_rss_peak_mib": round(rss_peak / 2**20, 1),
            },
            "raw_tmux_send_keys": raw,
            "ramps": ramp_results,
            "ramp_targets": _ramp_targets(ramp_results),
            "generic_agents": tui_agents,
            "targets": {
                "first_byte_p95_under_50_ms": first_byte_p95 < 50,
                "first_byte_p95_within_3x_raw_tmux": first_byte_p95 <= 3 * raw["to_first_byte"]["p95_ms"],
            },
        },
    )


async def real_codex_section(
    bench: Bench, socket: str, codex_home: Path, project: Path, folder: Path, real: dict[str, int]
) -> dict[str, Any]:
    panes = CodexPanes(bench.http, socket, codex_home, project, folder)
    agents = [f"codex{n}" for n in range(real["panes"])]
    runtimes = [await panes.spawn(agent) for agent in agents]
    one = await sequential(panes, agents[0], runtimes[0]["pty_target"], real["sequential"])
    raw = await raw_send_keys(panes, runtimes[0]["pty_target"], real["sequential"])
    burst = await concurrent(panes, agents, real["burst"])
    print(json.dumps(burst, indent=2), file=sys.stderr)
    first_p95 = figures(one["first_byte"])["p95_ms"]
    raw_p95 = figures(raw["first_byte"])["p95_ms"]
    return {
        "agent": f"Codex CLI {codex_version()} (npm), offline, model endpoint refusing at once",
        "one_at_a_time": {
            "triggers": len(one["delivered"]),
            "delivered": int(sum(one["results"])),
            "to_first_byte": figures(one["first_byte"]),
            "to_submit": figures(one["submit"]),
            "to_delivered": figures(one["delivered"]),
        },
        "raw_tmux_send_keys": {
            "to_first_byte": figures(raw["first_byte"]),
            "to_submit": figures(raw["submit"]),
        },
        "concurrent": burst,
        "targets": {
            "first_byte_p95_within_2x_raw": first_p95 <= 2 * raw_p95,
            "first_byte_p95_ratio_to_raw": round(first_p95 / raw_p95, 2) if raw_p95 else None,
            "delivered_p95_under_1_s": figures(one["delivered"])["p95_ms"] < 1000,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sequential", type=int, default=200)
    parser.add_argument("--sustained", type=int, default=1000)
    parser.add_argument("--panes", type=int, default=20)
    parser.add_argument("--codex", type=int, default=50, help="one-at-a-time triggers into a real Codex pane")
    parser.add_argument(
        "--codex-burst", type=int, default=200, help="concurrent triggers over the Codex panes"
    )
    parser.add_argument("--codex-panes", type=int, default=5)
    parser.add_argument("--ramp", default="5,10,20,40", help="concurrent callers per step ('' for none)")
    parser.add_argument("--ramp-per-caller", type=int, default=5, help="triggers each caller sends in turn")
    parser.add_argument("--ramp-programs", default="python,bash", help="what the 5 ramp panes run")
    parser.add_argument(
        "--ramp-only", action="store_true", help="only the ramp (bench/results/supervisor_ramp.json)"
    )
    parser.add_argument(
        "--agents-only", action="store_true",
        help="only the real agents under the generic kind (bench/results/supervisor_tui_agents.json)",
    )  # fmt: skip
    parser.add_argument(
        "--no-agents", action="store_true", help="leave out the real agents under the generic kind"
    )
    args = parser.parse_args()
    real = {"sequential": args.codex, "burst": args.codex_burst, "panes": args.codex_panes}
    ramp_options = {
        "steps": [int(n) for n in args.ramp.split(",") if n.strip()],
        "per_caller": args.ramp_per_caller,
        "programs": [p for p in args.ramp_programs.split(",") if p.strip()],
        "tui": not args.no_agents,
    }
    if args.agents_only:
        asyncio.run(run_tui_only())
    elif args.ramp_only:
        asyncio.run(run_ramp_only(ramp_options))
    else:
        asyncio.run(run(args.sequential, args.sustained, args.panes, real, ramp_options))


if __name__ == "__main__":
    main()
