"""An interactive bash, zsh or fish on a fresh pseudo-terminal, driven line by line: the shell
reads its own rc file (a private HOME), its prompt carries a counter of the commands it ran, so
"the next prompt" is known exactly even when a shell repaints its line, and what the terminal
showed between two prompts is returned. Used by the shell hook tests and bench/critic_hook.py."""

from __future__ import annotations

import fcntl
import os
import re
import select
import shlex
import signal
import struct
import sys
import termios
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PROMPT", "ShellPty", "ShellSetup", "init_line", "shell_setup"]

# "@@<n>@@ ", n counting the commands run (bash \#, fish $status_generation) or the prompts (zsh).
PROMPT = re.compile(rb"@@(\d+)@@ ")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[=>()][0-9A-Za-z]?")


def init_line(shell: str) -> str:
    """The line that installs the critic's hooks in ``shell`` (the CLI run by this Python)."""
    command = f"{shlex.quote(sys.executable)} -m kronii.critic.cli.shell_init {shell}"
    if shell == "fish":
        return f"{command} | source"
    return f'eval "$({command})"'


@dataclass(frozen=True)
class ShellSetup:
    argv: list[str]
    env: dict[str, str]
    runtime_dir: Path  # XDG_RUNTIME_DIR; the critic's directory is runtime_dir/kronii/critic


def shell_setup(shell: str, home: Path, *, hooked: bool, before: str = "", after: str = "") -> ShellSetup:
    """A private HOME whose rc file sets the counting prompt, runs ``before``, installs the hooks
    when ``hooked``, then runs ``after``."""
    runtime = home / "run"
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    install = init_line(shell) if hooked else ""
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PYTHONPATH": os.pathsep.join(sys.path[1:]),
    }
    if shell == "bash":
        rc = home / ".bashrc"
        rc.write_text(f"PS1='@@\\#@@ '\n{before}\n{install}\n{after}\n")
        argv = ["bash", "--noprofile", "--rcfile", str(rc), "-i"]
    elif shell == "zsh":
        rc = home / ".zshrc"
        counter = "setopt prompt_subst\n_kx_count() { (( _kx_n++ )) }\nprecmd_functions+=(_kx_count)\n"
        rc.write_text(
            f"{counter}PROMPT='@@${{_kx_n}}@@ '\nunsetopt prompt_sp\n{before}\n{install}\n{after}\n"
        )
        env["ZDOTDIR"] = str(home)
        argv = ["zsh", "-i"]
    elif shell == "fish":
        config = home / ".config" / "fish"
        config.mkdir(parents=True, exist_ok=True)
        (config / "config.fish").write_text(
            "set -g fish_greeting ''\n"
            "function fish_prompt; printf '@@%s@@ ' $status_generation; end\n"
            "function fish_right_prompt; end\n"
            f"set -g fish_autosuggestion_enabled 0\n{before}\n{install}\n{after}\n"
        )
        argv = ["fish", "-i"]
    else:
        raise ValueError(shell)
    return ShellSetup(argv, env, runtime)


@dataclass
class ShellPty:
    """The shell of ``setup`` on a pseudo-terminal; ``start()`` waits for its first prompt."""

    setup: ShellSetup
    timeout: float = 20.0
    pid: int = 0
    count: int = 0  # the counter in the last prompt seen
    shown: str = ""  # what the terminal showed before that prompt
    _fd: int = -1
    _buffer: bytearray = field(default_factory=bytearray)

    def start(self) -> ShellPty:
        pid, fd = os.forkpty()
        if pid == 0:  # the child: become the shell
            try:
                os.execvpe(self.setup.argv[0], self.setup.argv, self.setup.env)  # noqa: S606 - the shell is the test subject
            finally:
                os._exit(127)
        self.pid, self._fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.count = self._next_prompt()
        return self

    def _read(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            tail = bytes(self._buffer[-600:])
            raise TimeoutError(f"{self.setup.argv[0]}: no prompt in {self.timeout} s; it showed {tail!r}")
        ready, _, _ = select.select([self._fd], [], [], left)
        if ready:
            self._buffer += os.read(self._fd, 65536)

    def _next_prompt(self, above: int = -1) -> int:
        """Reads until a prompt whose counter is above ``above`` is the last thing shown; returns the
        counter and keeps what came before it in self.shown."""
        deadline = time.monotonic() + self.timeout
        while True:
            matches = [m for m in PROMPT.finditer(self._buffer) if int(m.group(1)) > above]
            if matches:
                first = matches[0]
                count = int(first.group(1))
                self.shown = self._buffer[: first.start()].decode("utf-8", "replace")
                del self._buffer[: first.end()]
                return count
            self._read(deadline)

    def run(self, line: str, *, counts: bool = True) -> str:
        """Types ``line`` and Enter; returns what the terminal showed until the next prompt, escape
        sequences removed. ``counts``: False for a line that runs no command (an empty one)."""
        os.write(self._fd, line.encode() + b"\r")
        if counts:
            self.count = self._next_prompt(self.count)
        else:
            self._next_prompt_any()
        return _ANSI.sub("", self.shown).replace("\r", "")

    def _next_prompt_any(self) -> None:
        # An empty line: the same counter comes back, after the newline that ends the line typed.
        deadline = time.monotonic() + self.timeout
        while True:
            newline = self._buffer.find(b"\n")
            found = PROMPT.search(self._buffer, newline + 1) if newline >= 0 else None
            if found is not None:
                self.count = int(found.group(1))
                self.shown = self._buffer[: found.start()].decode("utf-8", "replace")
                del self._buffer[: found.end()]
                return
            self._read(deadline)

    def paste(self, text: str) -> str:
        """``text`` as a bracketed paste (tabs and newlines reach the line editor as they are), then
        Enter."""
        os.write(self._fd, b"\x1b[200~" + text.encode() + b"\x1b[201~")
        return self.run("")

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self.pid = 0

    def __enter__(self) -> ShellPty:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()
