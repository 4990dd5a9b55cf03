"""The fleet part of bench/orchestrator_wakes.py: N threads of two agents each over a few workspaces
(one tmux session each, so that a person's client attached to one window types into that window
only), one message per thread to its first agent, all at once; the orchestrator wakes the first
agents, their answers wake their partners. Counted from what each agent read (its log), what each pane
shows (capture-pane, whole scrollback) and kronii's notes on each thread."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import psutil
from _common import percentile
from _wake_harness import Agent, Harness, counter, epoch, note_times

from tests.agents.harness import AttachedClient

DELIVERED = 'result="delivered"'
SYNC = "a person worked in an agent's pane"
OUTCOMES = "kronii_orchestrator_wake_outcomes_total"


@dataclass
class Pair:
    thread: str
    first: Agent
    second: Agent
    group: str = "plain"  # typed (a person types in the first's window), bystander (same session), plain
    sent_wall: float = 0.0
    person: AttachedClient | None = None
    draft: str = ""
    enter_wall: float = 0.0


@dataclass
class Usage:
    """The supervisor's CPU seconds and peak RSS between start() and stop()."""

    process: psutil.Process
    cpu: float = 0.0
    rss_peak: int = 0
    seconds: float = 0.0
    _began: float = 0.0
    _task: asyncio.Task[None] | None = field(default=None, repr=False)

    def _cpu(self) -> float:
        times = self.process.cpu_times()
        return float(times.user + times.system)

    async def _sample(self) -> None:
        while True:
            self.rss_peak = max(self.rss_peak, self.process.memory_info().rss)
            await asyncio.sleep(0.2)

    def start(self) -> None:
        self.cpu, self._began = self._cpu(), time.monotonic()
        self.rss_peak = self.process.memory_info().rss
        self._task = asyncio.create_task(self._sample())

    def stop(self) -> dict[str, float]:
        if self._task is not None:
            self._task.cancel()
        self.seconds = time.monotonic() - self._began
        self.cpu = self._cpu() - self.cpu
        return {
            "supervisor_cpu_seconds": round(self.cpu, 2),
            "supervisor_cpu_percent_of_one_core": round(100 * self.cpu / self.seconds, 1),
            "supervisor_rss_peak_mib": round(self.rss_peak / 2**20, 1),
        }


def _pairs(h: Harness, threads: int, typed: int, workspaces: int) -> list[Pair]:
    """Threads 0..typed-1: a person types in the first agent's window, each in a workspace (a tmux
    session) of its own, shared only with the next `typed` threads' pairs, one each (bystanders: the
    supervisor reads a session's clients for every pane of it). The rest over `workspaces` others."""
    folder = h.folder / "fleet"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for t in range(threads):
        group = "typed" if t < typed else "bystander" if t < 2 * typed else "plain"
        workspace = f"person{t % typed}" if group != "plain" else f"fleet{t % workspaces}"
        first, second = f"t{t:02d}a", f"t{t:02d}b"
        out.append(Pair(
            f"work-{t:02d}",
            Agent(workspace, first, "first", folder / f"{first}.jsonl", partner=second),
            Agent(workspace, second, "second", folder / f"{second}.jsonl"),
            group,
        ))  # fmt: skip
    return out


async def _spawn_all(h: Harness, pairs: list[Pair]) -> float:
    began = time.monotonic()
    gate = asyncio.Semaphore(4)

    async def one(agent: Agent) -> None:
        async with gate:
            await h.spawn(agent, "http")

    agents = [agent for pair in pairs for agent in (pair.first, pair.second)]
    # One agent per workspace first, alone: two spawns at once into a workspace that has no tmux
    # session yet both create it, and the second fails ("duplicate session", HTTP 503).
    openers = {agent.workspace: agent for agent in reversed(agents)}
    for agent in openers.values():
        await h.spawn(agent, "http")
    await asyncio.gather(*(one(agent) for agent in agents if agent not in openers.values()))
    return time.monotonic() - began


async def _type_drafts(h: Harness, typed: list[Pair]) -> None:
    for index, pair in enumerate(typed):
        pair.person = AttachedClient(h.socket, pair.first.session, window=pair.first.name)
        pair.draft = f"my draft {index}"
        await asyncio.sleep(0.5)  # the client attached and drawn
        await asyncio.to_thread(pair.person.type, pair.draft)
    deadline = time.monotonic() + 15
    while not all(f"first> {p.draft}" in h.pane(p.first) for p in typed):
        if time.monotonic() > deadline:
            raise RuntimeError("a person's draft never showed in its pane")
        await asyncio.sleep(0.05)


async def _delivered(h: Harness) -> float:
    return counter(await h.metrics(), OUTCOMES, DELIVERED)


async def _wait_delivered(h: Harness, target: float, within: float) -> float | None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if await _delivered(h) >= target:
            return time.time()
        await asyncio.sleep(0.25)
    return None


async def _press_enter(h: Harness, typed: list[Pair]) -> dict[str, Any]:
    """Before the person sends their line: each typed thread has its deferral note and the pane
    shows the draft alone."""
    deferred = 0
    for pair in typed:
        with contextlib.suppress(RuntimeError):
            await _until_deferred(h, pair)
            deferred += 1
    before = {
        pair.first.name: _shows_only_draft(h.pane(pair.first, scrollback=True), pair.draft) for pair in typed
    }
    for pair in typed:
        assert pair.person is not None
        pair.enter_wall = time.time()
        await asyncio.to_thread(pair.person.type, "\r")
    return {"deferral_noted_before_enter": deferred, "draft_alone_before_enter": before}


async def _until_deferred(h: Harness, pair: Pair, within: float = 20) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        notes = note_times(await h.messages(pair.first.workspace, pair.thread), pair.first.name)
        if notes["deferred"]:
            return
        await asyncio.sleep(0.2)
    raise RuntimeError(f"no deferral note on {pair.thread}")


def _shows_only_draft(screen: str, draft: str) -> bool:
    lines = screen.splitlines()
    return any(line.rstrip() == f"first> {draft}" for line in lines) and "[kronii]" not in screen


def _wake_lines(h: Harness, agent: Agent, thread: str) -> list[dict[str, Any]]:
    return [line for line in h.lines_read(agent) if line["thread"] == thread]


async def _truth(h: Harness, pair: Pair) -> dict[str, Any]:
    """One thread as it ended: per agent, wakes read, wakes in the pane, kronii's notes."""
    messages = await h.messages(pair.first.workspace, pair.thread)
    out: dict[str, Any] = {"thread": pair.thread, "group": pair.group}
    for agent in (pair.first, pair.second):
        notes = note_times(messages, agent.name)
        read = [line["line"] for line in _wake_lines(h, agent, pair.thread)]
        screen = h.pane(agent, scrollback=True).splitlines()
        out[agent.role] = {
            "agent": agent.name,
            "wakes_read": len(read),
            "same_wake_read_twice": len(read) - len(set(read)),
            "wakes_in_pane": sum(f"[kronii] thread {pair.thread}:" in line for line in screen),
            "same_wake_twice_in_pane": _repeated([line for line in screen if "[kronii] thread" in line]),
            "sync_wakes": sum(SYNC in line for line in read),
            "delivered_notes": notes["delivered"],
            "deferred_notes": notes["deferred"],
            "other_notes": len(notes["other"]),
            "lines_read": [line["line"][:60] for line in h.lines_read(agent)],
        }
    answer = [m for m in messages if m.get("author") == pair.first.name and m.get("kind") == "result"]
    out["first_answer_at"] = epoch(answer[0].get("at")) if answer else None
    if pair.draft:
        out["person"] = _person_truth(h, pair, out["first"])
    return out


def _repeated(lines: list[str]) -> int:
    return len(lines) - len(set(lines))


def _person_truth(h: Harness, pair: Pair, first: dict[str, Any]) -> dict[str, Any]:
    read = [line["line"] for line in h.lines_read(pair.first)]
    screen = h.pane(pair.first, scrollback=True)
    return {
        "draft_read_alone": pair.draft in read,
        "merged_lines": [
            line for line in [*read, *screen.splitlines()] if pair.draft in line and "[kronii]" in line
        ],
        "deferred_before_enter": any(at < pair.enter_wall for at in first["deferred_notes"]),
        "delivered_after_enter": bool(first["delivered_notes"])
        and min(first["delivered_notes"]) > pair.enter_wall,
        "delivered_after_enter_s": round(min(first["delivered_notes"]) - pair.enter_wall, 2)
        if first["delivered_notes"]
        else None,
    }


def _ms(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50_ms": round(percentile(values, 0.50) * 1000, 1) if values else None,
        "p95_ms": round(percentile(values, 0.95) * 1000, 1) if values else None,
        "max_ms": round(max(values) * 1000, 1) if values else None,
    }


def _each(truths: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for truth in truths:
        yield truth["first"]
        yield truth["second"]


def _waves(pairs: list[Pair], truths: list[dict[str, Any]]) -> dict[str, Any]:
    """Post to the first agent's delivered note; the first agent's answer to its partner's."""
    first_wave = [min(t["first"]["delivered_notes"]) - p.sent_wall for p, t in zip(pairs, truths, strict=True)
                  if t["first"]["delivered_notes"]]  # fmt: skip
    second_wave = [
        min(t["second"]["delivered_notes"]) - t["first_answer_at"]
        for t in truths
        if t["second"]["delivered_notes"] and t["first_answer_at"]
    ]
    return {"post_to_first_agent_delivered": _ms(first_wave),
            "first_agents_answer_to_partner_delivered": _ms(second_wave)}  # fmt: skip


def _undisturbed(pairs: list[Pair], truths: list[dict[str, Any]]) -> dict[str, Any]:
    plain = [(p, t) for p, t in zip(pairs, truths, strict=True) if p.group == "plain"]
    ends = [max(t["second"]["delivered_notes"]) for _, t in plain if t["second"]["delivered_notes"]]
    span = (max(ends) - min(p.sent_wall for p, _ in plain)) if ends else float("nan")
    wakes = sum(len(a["delivered_notes"]) for _, t in plain for a in (t["first"], t["second"]))
    return {
        "threads": len(plain),
        "wakes": wakes,
        "seconds_first_post_to_last_delivered": round(span, 2),
        "wakes_per_second": round(wakes / span, 1) if span == span and span > 0 else None,
        **_waves([p for p, _ in plain], [t for _, t in plain]),
    }


def _tally(pairs: list[Pair], truths: list[dict[str, Any]]) -> dict[str, Any]:
    agents = list(_each(truths))
    lost = [
        a["agent"]
        for a in agents
        if not a["wakes_read"] or not a["wakes_in_pane"] or not a["delivered_notes"]
    ]
    duplicated = [
        a["agent"] for a in agents
        if a["same_wake_read_twice"] or a["same_wake_twice_in_pane"] or len(a["delivered_notes"]) > a["wakes_read"]
    ]  # fmt: skip
    bystanders = [(p, t) for p, t in zip(pairs, truths, strict=True) if p.group == "bystander"]
    return {
        "agents": len(agents),
        "wakes_delivered": sum(len(a["delivered_notes"]) for a in agents),
        "wakes_read": sum(a["wakes_read"] for a in agents),
        "sync_wakes": sum(a["sync_wakes"] for a in agents),
        "lost": lost,
        "duplicated": duplicated,
        "deferred_wakes": sum(len(a["deferred_notes"]) for a in agents),
        "deferred_on_plain_threads": [
            t["thread"]
            for p, t in zip(pairs, truths, strict=True)
            if p.group == "plain" and (t["first"]["deferred_notes"] or t["second"]["deferred_notes"])
        ],
        "undisturbed": _undisturbed(pairs, truths),
        "bystanders": {
            "threads": len(bystanders),
            "first_agents_deferred": sum(1 for _, t in bystanders if t["first"]["deferred_notes"]),
            **_waves([p for p, _ in bystanders], [t for _, t in bystanders]),
        },
    }


async def _wave(h: Harness, pairs: list[Pair], typed: list[Pair]) -> tuple[dict[str, Any], float | None]:
    """All posts at once; the person sends their line once the others are delivered (30 s at most:
    past the supervisor's max defer, 60 s, a wake would fail rather than wait)."""
    base = await _delivered(h)
    near = len([p for p in pairs if p.group != "plain"])
    others = base + 2 * (len(pairs) - near)

    async def post(pair: Pair) -> None:
        pair.sent_wall = time.time()
        await h.post(pair.first.workspace, pair.thread, pair.first.name, f"please do {pair.thread}")

    await asyncio.gather(*(post(pair) for pair in pairs))
    plain_done = await _wait_delivered(h, others, 30)
    person = await _press_enter(h, typed) if typed else {}
    if plain_done is None:
        await _wait_delivered(h, others, 180)
    # Each typed thread's first agent may be woken twice: its message, then kronii's sync note.
    return person, await _wait_delivered(h, base + 2 * len(pairs), 180)


async def fleet(h: Harness, threads: int, typed_count: int, workspaces: int) -> dict[str, Any]:
    pairs = _pairs(h, threads, typed_count, workspaces)
    spawn_seconds = await _spawn_all(h, pairs)
    typed = [pair for pair in pairs if pair.group == "typed"]
    try:
        await _type_drafts(h, typed)
        usage = Usage(h.supervisor)
        usage.start()
        person, all_done = await _wave(h, pairs, typed)
        used = usage.stop()
        await asyncio.sleep(6)  # past one orchestrator sweep (5 s): a wake made twice would show now
        truths = [await _truth(h, pair) for pair in pairs]
    finally:
        for pair in typed:
            if pair.person is not None:
                pair.person.close()
    return _report(pairs, truths, spawn_seconds, used, person, all_done)


def _report(pairs: list[Pair], truths: list[dict[str, Any]], spawn_seconds: float, used: dict[str, float],
            person: dict[str, Any], all_done: float | None) -> dict[str, Any]:  # fmt: skip
    tally = _tally(pairs, truths)
    persons = [t["person"] for t in truths if "person" in t]
    first_sent = min(p.sent_wall for p in pairs)
    odd = set(tally["lost"] + tally["duplicated"])
    return {
        "threads": len(pairs),
        "agents_spawned_in_s": round(spawn_seconds, 1),
        "agent": "bench/_wake_agent.py (line-reading; reads and answers over HTTP with its runtime token "
        "from its own process), kind generic",
        **tally,
        "seconds_first_post_to_all_delivered": round(all_done - first_sent, 2) if all_done else None,
        **used,
        "person": {**person, "panes": persons},
        "examples": [t for t in truths if t["group"] == "typed"][:1]
        + [t for t in truths if {t["first"]["agent"], t["second"]["agent"]} & odd][:3],
        "targets": {
            "none_lost": not tally["lost"],
            "none_duplicated": not tally["duplicated"],
            "none_while_a_person_types": all(
                p["draft_read_alone"]
                and not p["merged_lines"]
                and p["deferred_before_enter"]
                and p["delivered_after_enter"]
                for p in persons
            ),
        },
    }
