"""A line-reading agent for bench/orchestrator_wakes.py, run in a pane the supervisor spawned (kind
`generic`): it shows a prompt `ROLE> `, reads one line (what kronii typed into its pane, or a person),
and for a wake (`[kronii] thread T: ...`) reads its thread and answers, with the token, address and
workspace the supervisor put in its environment (KRONII_RUNTIME_TOKEN, KRONII_SUPERVISOR_URL,
KRONII_WORKSPACE_ID). Each line it reads is stamped (CLOCK_MONOTONIC and the wall clock) into LOG, one
JSON object a line.

    first:   reads what is new, posts a `result` to PARTNER (which wakes PARTNER);
    second:  reads what is new, posts `resolved` to the person (nobody is woken);
    either, woken for kronii's sync note (a person worked in its pane): reads it, answers nothing.

VIA is how it reads and posts: `cli` runs `kronii thread read|post` (the way an agent's instructions
name it), `http` calls POST /v1/threads/read and /v1/threads/messages with urllib from this process
(no new process per wake: 100 agents woken at once on 2 cores would otherwise spend the run starting
Python). Usage: _wake_agent.py ROLE NAME LOG VIA [PARTNER]"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

THREAD = re.compile(r"\[kronii\] thread (\S+):")
SYNC = "a person worked in an agent's pane"


def _http(path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(  # noqa: S310 - the supervisor's URL, from its own env
        os.environ["KRONII_SUPERVISOR_URL"] + path,
        data=json.dumps(body).encode(),
        headers={
            "authorization": f"Bearer {os.environ['KRONII_RUNTIME_TOKEN']}",
            "content-type": "application/json",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - as above
        answer: dict[str, Any] = json.loads(response.read() or b"{}")
    return answer


def _cli(*args: str) -> dict[str, Any]:
    program = shutil.which("kronii") or str(Path(sys.executable).parent / "kronii")
    done = subprocess.run([program, "thread", *args, "--json"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        print(f"kronii thread {args[0]} failed ({done.returncode}): {done.stderr.strip()}", flush=True)
        return {}
    answer: dict[str, Any] = json.loads(done.stdout or "{}")
    return answer


def read(via: str, thread: str) -> list[dict[str, Any]]:
    if via == "cli":
        return list(_cli("read", thread).get("messages", []))
    workspace = os.environ["KRONII_WORKSPACE_ID"]
    return list(
        _http("/v1/threads/read", {"workspace_id": workspace, "thread_id": thread}).get("messages", [])
    )


def post(via: str, thread: str, to: str, kind: str, text: str) -> None:
    if via == "cli":
        _cli("post", thread, text, "--to", to, "--kind", kind)
        return
    workspace = os.environ["KRONII_WORKSPACE_ID"]
    _http("/v1/threads/messages", {"workspace_id": workspace, "thread_id": thread, "to": [to],
                                   "kind": kind, "body": text})  # fmt: skip


def act(role: str, via: str, thread: str, partner: str, line: str) -> None:
    messages = read(via, thread)
    print(f"read {len(messages)} new on {thread}", flush=True)
    if SYNC in line:  # a person worked in this pane: looked at, nothing to answer
        return
    if role == "first":
        post(via, thread, partner, "result", f"done: {thread} (from {role})")
        print(f"posted result to {partner}", flush=True)
    else:
        post(via, thread, "person", "resolved", f"reviewed: {thread}")
        print("posted resolved to the person", flush=True)


def main() -> None:
    role, name, log, via = sys.argv[1:5]
    partner = sys.argv[5] if len(sys.argv) > 5 else ""
    with open(log, "a", buffering=1) as out:
        while True:
            try:
                line = input(f"{role}> ")
            except EOFError:
                return
            found = THREAD.search(line)
            out.write(json.dumps({"agent": name, "mono": time.monotonic(), "wall": time.time(),
                                  "thread": found.group(1) if found else "", "line": line}) + "\n")  # fmt: skip
            if found:
                try:
                    act(role, via, found.group(1), partner, line)
                except Exception as error:  # shown in the pane, the run goes on
                    print(f"failed: {error}", flush=True)
            elif line.strip():
                print(f"(not for me: {line.strip()[:40]})", flush=True)


if __name__ == "__main__":
    main()
