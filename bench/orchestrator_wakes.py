"""The activation orchestrator (issue 29) on real panes: a supervisor process with its orchestrator and
its default settings, real tmux, line-reading agents (bench/_wake_agent.py, kind `generic`) that read
and answer their thread with the token the supervisor gave them.

- one at a time (`--posts`): a message posted as the person to one agent, timed from the POST
  /v1/threads/messages call to (i) the wake prompt in the agent's pane (tmux capture-pane, polled
  every 10 ms), (ii) the agent reading the line (its own CLOCK_MONOTONIC stamp) and (iii) kronii's
  `woke <agent>: delivered` note on the thread (POST /v1/threads/read, peek); the agent reads and
  answers with the `kronii thread` CLI. Baseline, interleaved in the same run: the same agent given a
  line by a direct POST /v1/triggers (the supervisor alone), to the line in the pane and to its
  `delivered` outcome. Goal: post to delivered p95 < 1 s;
- a fleet (`--threads`): 2 agents per thread (200 lines: `first` answers its partner, `second` the
  person), over several workspaces, reading and answering over HTTP from their own process; one message
  per thread to its first agent, all at once, then every wake the orchestrator makes (the first
  agents', then their partners' on their answers) until all are delivered: wakes per second, none
  lost, none duplicated, and none while a person types (a person's tmux client attached to a few first
  agents' windows, each in a workspace of its own, a draft typed before the posts and sent later: their
  wakes deferred, then delivered, never merged with the draft); the supervisor's CPU and peak RSS
  meanwhile. Each typed workspace holds one other pair nobody types to (bystanders: the supervisor reads
  the keys of every client of a pane's tmux session), reported apart from the undisturbed threads.

Usage: python bench/orchestrator_wakes.py [--posts 40] [--threads 50] [--typed 3] [--quick]
writes bench/results/orchestrator_wakes.json."""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, percentile, save
from _wake_fleet import fleet
from _wake_harness import FINAL, Agent, Harness, histogram_figures, supervisor_running

WAKE_HISTOGRAM = "kronii_orchestrator_wake_latency_seconds"


def ms(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 0.50) * 1000, 1) if values else None,
        "p95_ms": round(percentile(values, 0.95) * 1000, 1) if values else None,
        "max_ms": round(max(values) * 1000, 1) if values else None,
    }


async def _until(check: Any, within: float, what: str, every: float = 0.01) -> float:
    """Polls `check()` (sync or async) until true: the monotonic time it first was."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = check()
        if asyncio.iscoroutine(found):
            found = await found
        if found:
            return time.monotonic()
        await asyncio.sleep(every)
    raise RuntimeError(f"timed out after {within} s waiting for {what}")


def _watch(check: Any, within: float, what: str, every: float = 0.01) -> asyncio.Task[float]:
    """`_until` started now, beside the call it times (a call that answers late hides nothing)."""
    return asyncio.create_task(_until(check, within, what, every))


async def one_wake(h: Harness, agent: Agent, thread: str) -> dict[str, float]:
    """A message to the agent on a new thread: its times (seconds from the call)."""
    await h.wait_idle(agent)
    before = len(h.lines_read(agent))
    needle = f"[kronii] thread {thread}:"

    async def delivered() -> bool:
        notes = [m for m in await h.messages(agent.workspace, thread) if m.get("kind") == "outcome"]
        return any(str(m.get("body", "")).startswith(f"woke {agent.name}: delivered") for m in notes)

    pane = _watch(lambda: needle in h.pane(agent), 30, f"the wake in {agent.name}'s pane")
    note = _watch(delivered, 30, f"the delivered note on {thread}", every=0.02)
    sent, answered, _ = await h.post(agent.workspace, thread, agent.name, f"look at {thread}, please")
    pane_at, delivered_at = await pane, await note
    read = [line for line in h.lines_read(agent)[before:] if line["thread"] == thread]
    # Its answer posted: the agent is back at its prompt before the next one.
    await _until(lambda: h.pane(agent).rstrip().endswith(f"{agent.role}>"), 30, "the agent's answer")
    return {
        "answered": answered - sent,
        "pane": pane_at - sent,
        "read": read[0]["mono"] - sent if read else float("nan"),
        "delivered": delivered_at - sent,
    }


async def one_direct(h: Harness, agent: Agent, index: int) -> dict[str, float]:
    """The baseline: a direct trigger of the same agent (its line told apart by the agent as not a
    wake: it answers nothing), timed the same way."""
    await h.wait_idle(agent)
    before = len(h.lines_read(agent))
    prompt = f"[bench] direct {index}: look at the diff, please"
    pane = _watch(lambda: prompt in h.pane(agent), 30, f"the direct line in {agent.name}'s pane")
    sent = time.monotonic()
    trigger_id, first = await h.trigger(agent, prompt)
    answered = time.monotonic()
    result = str(first.get("result", ""))

    async def final() -> bool:
        nonlocal result
        if result not in FINAL:
            result = await h.trigger_result(trigger_id)
        return result in FINAL

    delivered_at = answered if result in FINAL else await _until(final, 30, "the trigger's outcome", 0.02)
    pane_at = await pane
    read = [line for line in h.lines_read(agent)[before:] if line["line"] == prompt]
    await _until(lambda: h.pane(agent).rstrip().endswith(f"{agent.role}>"), 30, "the agent's prompt")
    return {
        "answered": answered - sent,
        "pane": pane_at - sent,
        "read": read[0]["mono"] - sent if read else float("nan"),
        "delivered": delivered_at - sent if result == "delivered" else float("nan"),
    }


def _series(rows: list[dict[str, float]], key: str) -> list[float]:
    return [row[key] for row in rows if row[key] == row[key]]  # NaN: not seen


async def one_at_a_time(h: Harness, posts: int) -> dict[str, Any]:
    """Posts and direct triggers interleaved into one agent that reads with the CLI."""
    agent = await h.spawn(Agent("latency", "lat", "second", h.folder / "lat.jsonl"), "cli")
    for warm in range(2):  # the first turns of a fresh agent and of the CLI: not measured
        await one_wake(h, agent, f"warm-{warm}")
        await one_direct(h, agent, -1 - warm)
    scrape = await h.metrics()
    woken: list[dict[str, float]] = []
    direct: list[dict[str, float]] = []
    for index in range(posts):
        woken.append(await one_wake(h, agent, f"lat-{index:03d}"))
        direct.append(await one_direct(h, agent, index))
    metric = histogram_figures(scrape, await h.metrics(), WAKE_HISTOGRAM)
    figures = {
        "orchestrator": {key: ms(_series(woken, key)) for key in ("answered", "pane", "read", "delivered")},
        "direct_trigger": {
            key: ms(_series(direct, key)) for key in ("answered", "pane", "read", "delivered")
        },
    }
    delivered_p95 = figures["orchestrator"]["delivered"]["p95_ms"]
    direct_p95 = figures["direct_trigger"]["delivered"]["p95_ms"]
    pane_p95 = figures["orchestrator"]["pane"]["p95_ms"]
    direct_pane_p95 = figures["direct_trigger"]["pane"]["p95_ms"]
    return {
        "posts": posts,
        "agent": "bench/_wake_agent.py (line-reading; reads and answers with the `kronii thread` CLI), kind generic",
        **figures,
        "wake_latency_histogram": metric,
        "targets": {
            "post_to_delivered_p95_under_1_s": delivered_p95 is not None and delivered_p95 < 1000,
            "delivered_p95_ratio_to_direct_trigger": round(delivered_p95 / direct_p95, 2)
            if delivered_p95 and direct_p95
            else None,
            "pane_p95_ratio_to_direct_trigger": round(pane_p95 / direct_pane_p95, 2)
            if pane_p95 and direct_pane_p95
            else None,
        },
    }


async def run(options: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="kronii-bench-wakes-"))
    print(f"working in {folder}", flush=True)
    settings: dict[str, str] = {}
    async with supervisor_running(folder, settings) as harness:
        latency = await one_at_a_time(harness, options.posts) if options.posts else {}
        print(f"one at a time: {latency.get('targets')}", flush=True)
        many = (
            await fleet(harness, options.threads, options.typed, options.workspaces)
            if options.threads
            else {}
        )
    save(
        "orchestrator_wakes" + ("_quick" if options.quick else ""),
        {
            "machine": machine(),
            "settings": "the supervisor's defaults (quiet window 20 s, recheck 5 s, max defer 60 s, "
            "orchestrator sweep 5 s)",
            "one_at_a_time": latency,
            "fleet": many,
            "targets": {**latency.get("targets", {}), **many.get("targets", {})},
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--posts", type=int, default=40, help="one-at-a-time posts (and as many direct triggers)"
    )
    parser.add_argument("--threads", type=int, default=50, help="threads of the fleet, 2 agents each")
    parser.add_argument("--typed", type=int, default=3, help="first agents a person types a draft to")
    parser.add_argument("--workspaces", type=int, default=5, help="the fleet's workspaces (tmux sessions)")
    parser.add_argument(
        "--quick", action="store_true",
        help="10 posts, 10 threads (20 agents), 1 typed; results in orchestrator_wakes_quick.json",
    )  # fmt: skip
    options = parser.parse_args()
    if options.quick:
        options.posts, options.threads, options.typed, options.workspaces = 10, 10, 1, 2
    options.typed = min(options.typed, options.workspaces, options.threads)
    asyncio.run(run(options))


if __name__ == "__main__":
    main()
