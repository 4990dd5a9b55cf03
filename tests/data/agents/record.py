"""Records the real Codex CLI's screens (and python3 -i's) in tmux for the supervisor's unit tests.

    .venv/bin/python -m tests.data.agents.record

Writes tests/data/agents/codex/<state>.ansi and tests/data/agents/python/<state>.ansi: a first line
`# cursor_x cursor_y`, then `tmux capture-pane -p -e` (the screen with its SGR escape codes).
Everything runs in a private tmux server, 120x40, under /tmp/kronii-agents-rec (the path the
screens show), with no network. Timings go to stdout.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.agents.real_codex import (
    CODEX_BIN,
    PLACEHOLDER_DIM,
    READY_FOOTER,
    WORKING,
    CodexPane,
    codex_env,
    history,
    plain,
    prepare_codex_home,
    require_codex,
    stop_codex_daemons,
    tmux_server,
)
from tests.agents.refusing_model import refusing_model_server

OUT = Path(__file__).resolve().parent
ROOT = Path("/tmp/kronii-agents-rec")
PROJECT = ROOT / "project"


def save(pane: CodexPane, folder: str, state: str) -> str:
    x, y = pane.cursor()
    screen = pane.capture()
    path = OUT / folder / f"{state}.ansi"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {x} {y}\n{screen}", encoding="utf-8")
    print(f"saved {folder}/{state}.ansi (cursor {x} {y})")
    return screen


def git_init(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def record_codex() -> None:
    codex = str(require_codex())
    home = ROOT / "home"
    codex_vars = prepare_codex_home(home, [PROJECT])
    with tmux_server(codex_env(codex_vars)) as socket:
        start = time.monotonic()
        pane = CodexPane.start(socket, [codex], cwd=PROJECT, env=codex_vars)
        time.sleep(0.3)
        save(pane, "codex", "starting")
        pane.wait_screen(lambda s: PLACEHOLDER_DIM in s, 30, "the placeholder")
        print(f"start to placeholder: {time.monotonic() - start:.2f} s")
        if READY_FOOTER not in plain(pane.capture()):
            save(pane, "codex", "starting_placeholder")
        pane.wait_idle(30)
        print(f"start to idle (started): {time.monotonic() - start:.2f} s")
        save(pane, "codex", "idle")

        pane.type("fix the login bug", gap=0.08)
        pane.wait_text("fix the login bug", 10)
        time.sleep(0.3)
        save(pane, "codex", "draft")
        pane.keys("C-c")  # with text in the box, Ctrl-C clears it
        pane.wait_idle(10)
        save(pane, "codex", "cleared_by_ctrl_c")

        pane.paste("first line of the task\nsecond line\nthird line")
        pane.wait_text("third line", 10)
        time.sleep(0.3)
        save(pane, "codex", "draft_multiline")
        pane.keys("C-c")
        pane.wait_idle(10)

        pane.keys("Enter")  # an empty box: nothing happens
        time.sleep(1)
        save(pane, "codex", "empty_enter")

        pane.type("say hello")
        pane.wait_text("say hello", 10)
        time.sleep(0.3)
        submit = time.monotonic()
        pane.keys("Enter")
        pane.wait_text(WORKING, 10)
        print(f"submit to {WORKING!r}: {time.monotonic() - submit:.3f} s")
        save(pane, "codex", "working")
        deadline = time.monotonic() + 10
        while not history(home) and time.monotonic() < deadline:
            time.sleep(0.005)
        print(f"submit to history.jsonl entry: {time.monotonic() - submit:.3f} s")

        pane.type("and keep it short")
        time.sleep(0.3)
        pane.keys("Enter")  # Enter while a turn runs: steers it (sent at once)
        pane.wait_screen(lambda s: len(history(home)) == 2 and PLACEHOLDER_DIM in s, 10, "the steer")
        time.sleep(0.3)
        save(pane, "codex", "steered")

        pane.type("then list the files")
        time.sleep(0.3)
        pane.keys("Tab")  # Tab while a turn runs: queues the message for after it
        pane.wait_text("Queued follow-up inputs", 10)
        time.sleep(0.3)
        save(pane, "codex", "queued")

        pane.wait_text("waiting for network", 90)
        print(f"submit to 'waiting for network': {time.monotonic() - submit:.1f} s")
        save(pane, "codex", "reconnecting")

        pane.keys("Escape")
        pane.wait_text("Conversation interrupted", 10)
        time.sleep(1)
        save(pane, "codex", "interrupted")
        print("history:", [entry["text"] for entry in history(home)])

        pane.keys("Escape")
        time.sleep(0.5)
        pane.keys("C-c")
        pane.wait_idle(10)
        pane.keys("C-c")  # an empty box: Codex exits
        pane.wait_screen(lambda s: pane.dead(), 15, "Codex to exit")
        time.sleep(1)
        save(pane, "codex", "exited")

        untrusted = git_init(ROOT / "untrusted")
        pane = CodexPane.start(socket, [codex], cwd=untrusted, env=codex_vars, name="trust")
        pane.wait_text("Trust this folder?", 30)
        time.sleep(0.5)
        save(pane, "codex", "trust_dialog")


def record_codex_startup() -> None:
    """A prompt submitted while Codex starts. Offline, Codex can start a turn only about 10 s after the
    launch, once it has given up fetching its model list: a prompt submitted before the main screen's
    footer is complete shows `Waiting for startup`; one submitted after it, `Queued follow-up inputs`.
    Either is sent (and appended to history.jsonl) when Codex can start the turn."""
    codex = str(require_codex())
    for early in (True, False):
        home = ROOT / ("home-early" if early else "home-queued")
        codex_vars = prepare_codex_home(home, [PROJECT])
        with tmux_server(codex_env(codex_vars)) as socket:
            start = time.monotonic()
            pane = CodexPane.start(socket, [codex], cwd=PROJECT, env=codex_vars)
            if early:
                pane.wait_screen(lambda s: PLACEHOLDER_DIM in s, 30, "the placeholder")
            else:
                pane.wait_idle(30)
            pane.type("say hello")
            time.sleep(0.3)
            pane.keys("Enter")
            if early:
                pane.wait_text("Waiting for startup", 10)
                time.sleep(0.3)
                save(pane, "codex", "waiting_for_startup")
            else:
                pane.wait_text("Queued follow-up inputs", 10)
                time.sleep(0.3)
                save(pane, "codex", "queued_at_startup")
            pane.wait_text(WORKING, 30)
            when = "before" if early else "after"
            print(
                f"prompt submitted {when} the footer was complete: start to {WORKING!r} {time.monotonic() - start:.2f} s"
            )
            print(f"history: {[entry['text'] for entry in history(home)]}")


def record_codex_error() -> None:
    """A turn that ends in an error: Codex's provider pointed at a loopback endpoint that answers
    every request with HTTP 401 (tests/agents/refusing_model.py), as the API does a bad key."""
    codex = str(require_codex())
    with refusing_model_server() as base_url:
        home = ROOT / "home-401"
        codex_vars = prepare_codex_home(home, [PROJECT], base_url=base_url)
        with tmux_server(codex_env(codex_vars)) as socket:
            pane = CodexPane.start(socket, [codex], cwd=PROJECT, env=codex_vars)
            pane.wait_idle(30)
            pane.type("say hello")
            time.sleep(0.3)
            submit = time.monotonic()
            pane.keys("Enter")
            pane.wait_screen(
                lambda s: "401 Unauthorized" in plain(s) and WORKING not in plain(s) and PLACEHOLDER_DIM in s,
                90,
                "the final error",
            )
            print(f"submit to the final error (401 endpoint): {time.monotonic() - submit:.1f} s")
            time.sleep(0.5)
            save(pane, "codex", "error")


def record_codex_daemon_exit() -> None:
    """Codex's default: a shared background server keeps the task after the TUI exits."""
    codex = str(require_codex())
    home = ROOT / "home-daemon"
    codex_vars = prepare_codex_home(home, [PROJECT], daemon=True)
    try:
        with tmux_server(codex_env(codex_vars)) as socket:
            pane = CodexPane.start(socket, [codex], cwd=PROJECT, env=codex_vars)
            pane.wait_idle(60)
            save(pane, "codex", "idle_daemon")
            pane.keys("C-c")
            pane.wait_screen(lambda s: pane.dead(), 15, "Codex to exit")
            time.sleep(1)
            save(pane, "codex", "exited_daemon")
    finally:
        stop_codex_daemons(home)


def record_python() -> None:
    folder = ROOT / "python"
    folder.mkdir(parents=True, exist_ok=True)
    with tmux_server(codex_env({})) as socket:
        pane = CodexPane.start(socket, ["python3", "-i"], cwd=folder, env={}, name="python")
        pane.wait_screen(lambda s: plain(s).rstrip().endswith(">>>"), 30, "the prompt")
        time.sleep(0.3)
        save(pane, "python", "idle")
        pane.type("x = 1")
        pane.wait_text(">>> x = 1", 10)
        time.sleep(0.3)
        save(pane, "python", "draft")
        pane.keys("Enter")
        pane.wait_screen(lambda s: plain(s).rstrip().endswith(">>> x = 1\n>>>"), 10, "the next prompt")
        time.sleep(0.3)
        save(pane, "python", "submitted")
        # Busy: the line runs, the cursor sits below it, no input line on screen.
        pane.send_text('import time; time.sleep(3); print("done")')  # one send-keys: ";" split alone
        pane.keys("Enter")
        time.sleep(0.8)
        save(pane, "python", "busy")
        pane.wait_screen(lambda s: plain(s).rstrip().endswith("done\n>>>"), 10, "the prompt after the sleep")
        # Busy printing: output without a newline yet, the cursor after it.
        pane.send_text('print("step 1", end=" ", flush=True); time.sleep(3)')
        pane.keys("Enter")
        time.sleep(0.8)
        save(pane, "python", "busy_output")
        pane.wait_screen(lambda s: plain(s).rstrip().endswith(">>>"), 10, "the prompt after the output")
        # A person's block in the making: a continuation line ("...") holds the cursor.
        pane.type("def f():")
        pane.keys("Enter")
        pane.type("    return 1")
        pane.wait_text("...     return 1", 10)
        time.sleep(0.3)
        save(pane, "python", "draft_multiline")


def main() -> None:
    shutil.rmtree(ROOT, ignore_errors=True)
    git_init(PROJECT)
    print(
        f"{CODEX_BIN.name} {subprocess.run([str(CODEX_BIN), '--version'], capture_output=True, text=True, check=True).stdout.strip()}"
    )
    try:
        which = set(sys.argv[1:]) or {"codex", "startup", "error", "daemon", "python"}
        if "codex" in which:
            record_codex()
        if "startup" in which:
            record_codex_startup()
        if "error" in which:
            record_codex_error()
        if "daemon" in which:
            record_codex_daemon_exit()
        if "python" in which:
            record_python()
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
