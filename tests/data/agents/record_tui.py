"""Records the screens of the real line-editing agents and REPLs of tests/agents/tui_agents.py in tmux,
for the supervisor's unit tests (the baseline/draft/dialog classification), as record.py does for Codex.

    .venv/bin/python -m tests.data.agents.record_tui            # or with some of: gemini qwen ipython ...
    .venv/bin/python -m tests.data.agents.record_tui activity   # who-typed data of tmux, printed

Writes tests/data/agents/<agent>/<state>.ansi: a first line `# cursor_x cursor_y`, then
`tmux capture-pane -p -e`. Each agent runs from its recipe (offline, a private folder, the refusing
loopback endpoint, a 120x40 window of a private tmux server) under /tmp/kronii-agents-rec/<agent> (the
path the screens show). A person's keys go through a second tmux client attached on a pty of its own
(tests/agents/tmux_person.py); kronii's own keys go with `tmux send-keys`, as the supervisor sends them.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.agents.claude_code import CLAUDE_WORKING
from tests.agents.real_codex import CodexPane, plain
from tests.agents.tmux_person import PersonClient, client_activity, person_client
from tests.agents.tui_agents import (
    BASH,
    CLAUDE,
    GEMINI,
    INK_WORKING,
    IPYTHON,
    NODE,
    OPENCODE,
    PTPYTHON,
    QWEN,
    SQLITE3,
    RunningAgent,
    TuiAgent,
    run_agent,
)

OUT = Path(__file__).resolve().parent
ROOT = Path("/tmp/kronii-agents-rec")
DRAFT = "please also refactor the"
FIRST, SECOND = "'say hello'", "'and keep it short'"
# sqlite3 runs a statement at its `;`. tmux takes a `;` that ends an argument as the end of its
# command (send-keys -l "x;" types only "x"); `\\;` there is a literal `;`.
PROMPTS = {"sqlite3": ("select 'say hello'\\;", "select 'and keep it short'\\;")}

# What a person's multi-line draft looks like in each: a bracketed paste from the person's terminal
# for the Ink agents; the start of a block, line by line, for the REPLs.
MULTILINE: dict[str, Callable[[PersonClient], str]] = {}


def _paste_lines(person: PersonClient) -> str:
    person.paste("first line of the task\nsecond line\nthird line")
    return "third line"


def _claude_lines(person: PersonClient) -> str:
    """Claude Code: a backslash then Enter starts a new line of the draft (a pasted block of several
    lines shows as `[Pasted text #1 +2 lines]`)."""
    person.type("first line of the task\\")
    person.keys("Enter")
    person.type("second line")
    return "second line"


def _opencode_lines(person: PersonClient) -> str:
    """opencode: Ctrl-J starts a new line of the draft."""
    person.type("first line of the task")
    person.keys("C-j")
    person.type("second line")
    return "second line"


def _typed_block(first: str, second: str) -> Callable[[PersonClient], str]:
    def typed(person: PersonClient) -> str:
        person.type(first)
        person.keys("Enter")
        person.type(second)
        return second.strip()

    return typed


MULTILINE.update(
    {
        "gemini": _paste_lines,
        "qwen": _paste_lines,
        "claude": _claude_lines,
        "opencode": _opencode_lines,
        "ipython": _typed_block("def f():", "return 1"),
        "ptpython": _typed_block("def f():", "return 1"),
        "node": _typed_block("function f() {", "  return 1"),
        "sqlite3": _typed_block("select 1,", "  2"),
        "bash": _typed_block("for x in 1 2; do", "echo $x"),
    }
)


def save(pane: CodexPane, agent: TuiAgent, state: str) -> str:
    x, y = pane.cursor()
    screen = pane.capture()
    path = OUT / agent.name / f"{state}.ansi"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {x} {y}\n{screen}", encoding="utf-8")
    flag = subprocess.run(
        ["tmux", "-S", pane.socket, "display", "-p", "-t", pane.target, "#{cursor_flag}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    print(f"saved {agent.name}/{state}.ansi (cursor {x} {y}, {'shown' if flag == '1' else 'hidden'})")
    return screen


def wait_settled(running: RunningAgent, check: Callable[[str], bool], what: str, timeout: float = 30) -> str:
    """Until check holds on two screens 0.3 s apart that are the same (the program stopped drawing)."""
    deadline = time.monotonic() + timeout
    while True:
        screen = running.pane.wait_screen(check, max(deadline - time.monotonic(), 0.1), what)
        time.sleep(0.3)
        if running.pane.capture() == screen:
            return screen


def submit(running: RunningAgent, prompt: str, state: str | None) -> None:
    """As the supervisor types: the prompt in one send-keys, then Enter once it is on screen."""
    pane = running.pane
    pane.send_text(prompt)
    prompt = prompt.replace("\\;", ";")
    pane.wait_text(prompt, 10)
    time.sleep(0.3)
    pane.keys("Enter")
    if state is not None:
        with contextlib.suppress(AssertionError):
            pane.wait_screen(
                lambda s: (
                    INK_WORKING in plain(s) or CLAUDE_WORKING in plain(s) or "esc interrupt" in plain(s)
                ),
                3,
                "a working line",
            )
            save(pane, running.agent, state)
    if not running.agent.history_on_exit:
        deadline = time.monotonic() + 30
        while prompt not in running.history() and time.monotonic() < deadline:
            time.sleep(0.05)
    wait_settled(running, running.agent.is_idle, "the idle screen after the prompt")


def record_agent(agent: TuiAgent) -> None:
    folder = ROOT / agent.name
    with run_agent(agent, folder / "main") as running:
        pane = running.pane
        start = time.monotonic()
        wait_settled(running, agent.is_idle, "the idle screen", 60)
        print(f"{agent.name}: start to idle {time.monotonic() - start:.2f} s")
        save(pane, agent, "idle")
        with person_client(running.socket, agent.name) as person:
            person.type(DRAFT)
            pane.wait_text(DRAFT, 10)
            time.sleep(1)
            save(pane, agent, "draft")
            person.keys(*["BSpace"] * len(DRAFT))
            wait_settled(running, agent.is_idle, "the idle screen after the draft was deleted")
            save(pane, agent, "draft_deleted")
        first, second = PROMPTS.get(agent.name, (FIRST, SECOND))
        submit(running, first, "working")
        save(pane, agent, "submitted")
        submit(running, second, None)
        save(pane, agent, "submitted_twice")
        if not agent.history_on_exit:
            print(f"{agent.name}: history {running.history()!r}")
    with run_agent(agent, folder / "multiline") as running:
        wait_settled(running, agent.is_idle, "the idle screen", 60)
        with person_client(running.socket, agent.name) as person:
            last = MULTILINE[agent.name](person)
            running.pane.wait_text(last, 10)
            time.sleep(1)
            save(running.pane, agent, "draft_multiline")
    for dialog in agent.dialogs:
        with run_agent(agent, folder / f"dialog-{dialog.name}", dialog=dialog.name) as running:
            running.wait_dialog(dialog.name, 60)
            time.sleep(1)
            save(running.pane, agent, f"dialog_{dialog.name}")


def record_activity() -> None:
    """What tmux tells about who typed: the person's attached client against send-keys and
    paste-buffer, from a plain command and from a control-mode client (tmux -C)."""
    with run_agent(NODE, ROOT / "activity") as running, person_client(running.socket, "node") as person:
        running.wait_idle(30)
        socket = running.socket
        control = subprocess.Popen(
            ["tmux", "-S", socket, "-C", "attach-session", "-t", "node"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        assert control.stdin is not None
        try:

            def show(label: str) -> None:
                info = subprocess.run(
                    [
                        "tmux",
                        "-S",
                        socket,
                        "display",
                        "-p",
                        "-t",
                        "node",
                        "#{session_activity} #{window_activity}",
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()
                print(
                    f"{label:40} now {int(time.time())} clients {client_activity(socket)} "
                    f"session_activity {info[0]} window_activity {info[1]}"
                )

            def step(label: str, act: Callable[[], None]) -> None:
                now = int(time.time())
                while int(time.time()) <= now + 1:
                    time.sleep(0.05)
                act()
                time.sleep(0.3)
                show(label)

            time.sleep(0.5)
            show(f"attached (person {person.name})")
            step("send-keys (plain command)", lambda: running.pane.send_text("1"))
            step("send-keys (control client)", lambda: _control(control, "send-keys -t node -l 2"))
            step("paste-buffer (plain command)", lambda: running.pane.paste("3"))
            step("a key through the person's client", lambda: person.type("4"))
            step("a paste from the person's terminal", lambda: person.paste("5"))
        finally:
            _control(control, "detach-client")
            control.wait(timeout=5)


def _control(control: subprocess.Popen[str], command: str) -> None:
    assert control.stdin is not None
    control.stdin.write(command + "\n")
    control.stdin.flush()


RECORDED = {
    agent.name: agent for agent in (GEMINI, QWEN, CLAUDE, OPENCODE, IPYTHON, PTPYTHON, NODE, SQLITE3, BASH)
}


def main() -> None:
    shutil.rmtree(ROOT, ignore_errors=True)
    which = sys.argv[1:] or [*RECORDED, "activity"]
    try:
        for name in which:
            if name == "activity":
                record_activity()
            else:
                record_agent(RECORDED[name])
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
