"""The critic's shell hooks in real bash, zsh and fish on a pseudo-terminal, installed the way a
person does (`eval "$(kronii shell-init bash)"` in the rc file): each command becomes one spool line
with its exit status, cwd, duration and exact text; empty and private lines none; a hint from HintBox
shows at the prompt after a failing command; the prompt is not delayed when no critic runs; a second
eval installs nothing more and the person's own prompt hooks still run. Also the SpoolReader under
concurrent appenders, and HintBox forgetting shells that are gone."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
from kronii.critic.adapters.shell_init import HINT_PREFIX, HISTORY_PREFIX
from kronii.critic.adapters.spool import HintBox, SpoolReader
from kronii.critic.core.model import InvocationEvent

from tests.integration.critic.shell_pty import ShellPty, ShellSetup, shell_setup

SHELLS = ["bash", "zsh", "fish"]


@pytest.fixture(autouse=True, scope="module")
def _shells_installed() -> None:
    # `make sysdeps` installs them: a missing shell is a failure, not a skip.
    missing = [name for name in SHELLS if shutil.which(name) is None]
    assert not missing, f"missing {', '.join(missing)}: run `make sysdeps`"


# What the person's own prompt hook prints, to see it still runs once per prompt.
_OWN_HOOK = {
    "bash": "PROMPT_COMMAND='echo own-hook'",
    "zsh": "_own() { print own-hook }; precmd_functions+=(_own)",
    "fish": "function _own --on-event fish_prompt; echo own-hook; end",
}
_PRIVATE = {"bash": "HISTCONTROL=ignoreboth", "zsh": "setopt hist_ignore_space", "fish": ""}


def critic_dir(setup: ShellSetup) -> Path:
    return setup.runtime_dir / "kronii" / "critic"


def spooled(setup: ShellSetup) -> list[InvocationEvent]:
    reader = SpoolReader(critic_dir(setup))
    events = reader.read_available() + reader.close()
    assert reader.malformed == 0
    return events


@pytest.fixture
def home(tmp_path: Path) -> Path:
    # Short: a FIFO's path, and the prompts' output, stay readable.
    return tmp_path


@pytest.fixture(params=SHELLS)
def shell(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _open(shell: str, home: Path, **options: str) -> ShellPty:
    return ShellPty(shell_setup(shell, home, hooked=True, **options)).start()


def test_commands_are_spooled_with_status_cwd_duration_and_text(shell: str, home: Path) -> None:
    place = home / "dir with space" / "ünï"
    place.mkdir(parents=True)
    pty = _open(shell, home)
    try:
        pty.run(f"cd '{place}'")
        pty.run("false")
        pty.run("", counts=False)
        pty.run("sleep 0.3")
        quoted = "echo \"q'\\\"\" 'ü€😀' \\\\x"
        pty.run(quoted)
        pty.paste("echo 'multi\nline'")
        if shell != "fish":  # fish's line editor drops a tab from a paste; the unit tests cover tabs
            pty.paste("echo 'a\tb'")
        events = spooled(pty.setup)
    finally:
        pty.close()
    commands = [event.command_line for event in events]
    expected = [f"cd '{place}'", "false", "sleep 0.3", quoted, "echo 'multi\nline'"]
    expected += [] if shell == "fish" else ["echo 'a\tb'"]
    assert commands == expected, "an empty line records nothing; every other line exactly as typed"
    by_command = {event.command_line: event for event in events}
    assert by_command["false"].exit_status == 1
    assert by_command["false"].cwd == str(place)
    assert by_command[quoted].exit_status == 0
    assert 280 <= by_command["sleep 0.3"].duration_ms < 1500
    assert all(event.shell == shell and event.tty.startswith("/dev/pts/") for event in events)
    assert len({event.session for event in events}) == 1
    assert abs(by_command["false"].started_ms - time.time() * 1000) < 60_000


def test_repeated_and_private_commands(shell: str, home: Path) -> None:
    pty = _open(shell, home, before=_PRIVATE[shell])
    try:
        for _ in range(3):
            pty.run("false")
        pty.run(" echo private-thing")
        pty.run("true")
        listed = pty.run("history") if shell == "bash" else ""
        commands = [event.command_line for event in spooled(pty.setup)]
    finally:
        pty.close()
    assert commands[:4] == ["false", "false", "false", "true"], "each repeat counts; a private line none"
    assert not any("private-thing" in command for command in commands)
    if shell == "bash":
        assert "private-thing" not in listed, "the hook keeps HISTCONTROL=ignorespace's promise"


def test_eval_twice_installs_once_and_the_own_prompt_hook_still_runs(shell: str, home: Path) -> None:
    from tests.integration.critic.shell_pty import init_line

    pty = _open(shell, home, before=_OWN_HOOK[shell], after=init_line(shell))
    try:
        shown = pty.run("true")
        events = spooled(pty.setup)
    finally:
        pty.close()
    assert [event.command_line for event in events] == ["true"]
    assert shown.count("own-hook") == 1


def test_a_waiting_hint_shows_at_the_prompt_after_a_failing_command(shell: str, home: Path) -> None:
    pty = _open(shell, home)
    box = HintBox(critic_dir(pty.setup))
    box.start()
    try:
        pty.run("true")
        session = spooled(pty.setup)[0].session
        assert box.send(session, "try `make -C build`\x1b[31m")
        shown = pty.run("false")
        again = pty.run("true")
    finally:
        box.close()
        pty.close()
    assert "kronii: try `make -C build`" in shown
    assert "\x1b[31m" not in shown, "terminal escapes from a hint's text are not passed on"
    assert "kronii:" not in again, "a hint shows once"


class _MiniCritic:
    """A SpoolReader and a HintBox in a thread: every failing command gets a hint at once."""

    def __init__(self, directory: Path) -> None:
        self.box = HintBox(directory)
        self.reader = SpoolReader(directory)
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task[None] | None = None
        self._thread = threading.Thread(
            target=self._loop.run_until_complete, args=(self._run(),), daemon=True
        )

    async def _run(self) -> None:
        self._task = asyncio.current_task()
        with contextlib.suppress(asyncio.CancelledError):
            async for event in self.reader.events():
                if event.exit_status:
                    self.box.send(event.session, f"seen {event.command_line} fail")

    def __enter__(self) -> _MiniCritic:
        self.box.start()
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(5)
        self.box.close()


def test_a_live_critic_hint_reaches_the_prompt(shell: str, home: Path) -> None:
    pty = _open(shell, home)
    try:
        with _MiniCritic(critic_dir(pty.setup)):
            time.sleep(0.1)
            shown = pty.run("ls /nonexistent-kronii")
            if shell == "fish":  # no timed read in fish: the hint waits for the next prompt
                time.sleep(0.2)
                shown += pty.run("true")
    finally:
        pty.close()
    assert "kronii: seen ls /nonexistent-kronii fail" in shown


def _per_prompt_ms(pty: ShellPty, command: str, count: int) -> float:
    for _ in range(5):
        pty.run(command)
    started = time.perf_counter()
    for _ in range(count):
        pty.run(command)
    return (time.perf_counter() - started) / count * 1000


def test_without_a_critic_the_prompt_is_not_delayed(shell: str, home: Path) -> None:
    added: dict[str, float] = {}
    for command in ("true", "false"):
        times = {}
        for hooked in (False, True):
            setup = shell_setup(shell, home / f"{command}-{hooked}", hooked=hooked)
            with ShellPty(setup) as pty:
                times[hooked] = min(_per_prompt_ms(pty, command, 50) for _ in range(2))
        added[command] = times[True] - times[False]
    assert added["true"] < 5, f"{shell}: the hook adds {added['true']:.2f} ms per prompt"
    assert added["false"] < 5, (
        f"{shell}: after a failure with no critic the hook waits {added['false']:.2f} ms"
    )


def test_the_reader_loses_no_line_from_concurrent_appenders(tmp_path: Path) -> None:
    reader = SpoolReader(tmp_path)
    line = "k1\\tbash\\t$$-1\\t\\t/\\t0\\t1\\t1\\t\\tcommand $i of writer $w"
    script = f'for i in $(seq 500); do printf "{line}\\n" >> spool; done'
    writers = [subprocess.Popen(["bash", "-c", f"w={w}; {script}"], cwd=tmp_path) for w in range(4)]
    events: list[InvocationEvent] = []
    while any(writer.poll() is None for writer in writers):
        events += reader.read_available()
    events += reader.read_available() + reader.close()
    assert reader.malformed == 0
    assert len(events) == 2000
    assert not list(tmp_path.glob("spool.draining.*")), "the renamed files are removed once read"
    assert len({event.command_line for event in events}) == 2000
    assert (tmp_path / "spool").stat().st_mode & 0o777 == 0o600


def test_hint_box_forgets_shells_that_are_gone(tmp_path: Path) -> None:
    process = subprocess.Popen(["sleep", "30"])
    stat = Path(f"/proc/{process.pid}/stat").read_text()
    session = f"{process.pid}-{stat.rpartition(')')[2].split()[19]}"
    box = HintBox(tmp_path)
    fifo = tmp_path / f"{HINT_PREFIX}{session}"
    os.mkfifo(fifo, 0o600)
    (tmp_path / f"{HISTORY_PREFIX}{session}").write_text("x")
    try:
        assert box.send(session, "first")
        assert box.send(session, "second")
        with open(fifo, "rb", buffering=0) as pipe:  # HintBox holds it open for writing: no blocking
            assert pipe.read(100) == b"second\n", "an unread hint gives way to the newest"
        assert box.forget_gone() == []
    finally:
        process.kill()
        process.wait()
    assert box.forget_gone() == [session]
    assert not fifo.exists() and not (tmp_path / f"{HISTORY_PREFIX}{session}").exists()
    assert not box.send(session, "too late")
    reused = f"{os.getpid()}-1"  # a live pid that started at another tick: not that shell
    assert not box.send(reused, "hello")
    box.close()


def test_bash_records_no_command_that_history_kept_out(home: Path) -> None:
    (home / ".bash_history").write_text("make old-entry\n")
    before = f"HISTFILE='{home / '.bash_history'}'\nHISTIGNORE='ls*'"
    pty = _open("bash", home, before=before)
    try:
        pty.run("ls /")
        pty.run("true")
        commands = [event.command_line for event in spooled(pty.setup)]
    finally:
        pty.close()
    assert commands == ["true"], "neither the ignored line nor the HISTFILE entry it leaves on top"
