"""A line-reading agent for the orchestrator's pilot (seed 002, section 20.5): it shows a prompt,
reads one line (what kronii typed into its pane, or a person), and when the line names a thread
(`[kronii] thread T: ...`) it does what its instructions say through the real `kronii thread` CLI,
with the token and workspace the supervisor put in its environment (THREAD_AGENT_DELAY: seconds it
"thinks" before reading):

    executioner: reads what is new; for the person's task or a reviewer's finding, posts a result
                 to the reviewer ("done: ...", "fixed: ...").
    reviewer:    reads what is new; for the first result, posts a finding to the executioner; for a
                 later one, posts `resolved` to the person.

Each step is printed, so the pane shows what the agent did. Run as `thread_agent.py ROLE NAME`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

THREAD = re.compile(r"\[kronii\] thread (\S+):")


def kronii(*args: str) -> dict[str, Any]:
    program = shutil.which("kronii") or str(Path(sys.executable).parent / "kronii")
    done = subprocess.run([program, "thread", *args, "--json"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        print(f"kronii thread {args[0]} failed ({done.returncode}): {done.stderr.strip()}", flush=True)
        return {}
    answer: dict[str, Any] = json.loads(done.stdout or "{}")
    return answer


def act(role: str, me: str, thread: str, state: dict[str, int]) -> None:
    delay = float(os.environ.get("THREAD_AGENT_DELAY", "0") or 0)
    if delay:
        print(f"thinking for {delay:g} s", flush=True)
        time.sleep(delay)
    messages = kronii("read", thread).get("messages", [])
    print(f"read {len(messages)} new on {thread}", flush=True)
    for message in messages:
        if message.get("author") == me or message.get("kind") in ("outcome", "sync", "blocked"):
            continue
        reply = respond(role, message, state)
        if reply is not None:
            to, kind, text = reply
            kronii("post", thread, text, "--to", to, "--kind", kind)
            print(f"posted {kind} to {to}: {text}", flush=True)


def respond(role: str, message: dict[str, Any], state: dict[str, int]) -> tuple[str, str, str] | None:
    kind, body = message.get("kind", "message"), str(message.get("body", ""))
    if role == "executioner" and kind in ("message", "handoff", "finding"):
        state["results"] = state.get("results", 0) + 1
        verb = "fixed" if kind == "finding" else "done"
        return "reviewer", "result", f"{verb}: {body[:60]} (result {state['results']})"
    if role == "reviewer" and kind == "result":
        state["reviews"] = state.get("reviews", 0) + 1
        if state["reviews"] == 1:
            return "executioner", "finding", "the change has no test for the empty input"
        return "person", "resolved", "reviewed: the empty input is tested now"
    return None


def main() -> None:
    role, me = sys.argv[1], sys.argv[2]
    state: dict[str, int] = {}
    while True:
        try:
            line = input(f"{role}> ")
        except EOFError:
            return
        found = THREAD.search(line)
        if found:
            act(role, me, found.group(1), state)
        elif line.strip():
            print(f"(not for me: {line.strip()[:40]})", flush=True)


if __name__ == "__main__":
    main()
