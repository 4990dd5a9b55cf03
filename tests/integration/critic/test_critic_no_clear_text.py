"""Issue 26: the critic keeps no command in clear text anywhere once it has read it. A real critic
process (the run's NATS, Redis and PostgreSQL) and real bash, zsh and fish with `kronii shell-init`
on a pseudo-terminal: a secret typed in a command is found in no file under the data, runtime, state
and config directories a few commands later, nor in the critic's log, nor in PostgreSQL's files; the
per-shell files are 0600 and go when the shell exits, and the critic removes those of a shell that
was killed."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import string
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.desktop import wait_until
from tests.infra import InfraUrls
from tests.integration.critic.shell_pty import ShellPty, shell_setup
from tests.integration.critic.test_critic_service import Critic, start_critic

SHELLS = ["bash", "zsh", "fish"]
# The per-shell files each shell's hooks make in the critic's runtime directory.
PER_SHELL = {"bash": ("hist-", "hint-"), "zsh": ("hint-",), "fish": ("clock-",)}


def fake_aws_secret() -> str:
    """40 characters of the AWS secret key alphabet, new each run (so no other test has it)."""
    alphabet = string.ascii_letters + string.digits + "+/"
    return "".join(secrets.choice(alphabet) for _ in range(40))


def files_holding(text: str, *roots: Path) -> list[str]:
    """The files under ``roots`` that hold ``text``, or its first or last 16 characters (a shorter
    text written over a longer one in place leaves the longer one's tail)."""
    needles = {text.encode(), text[:16].encode(), text[-16:].encode()}
    found = []
    for root in roots:
        for path in root.rglob("*") if root.is_dir() else []:
            with contextlib.suppress(OSError):
                if path.is_file() and not path.is_symlink():
                    data = path.read_bytes()
                    if any(needle in data for needle in needles):
                        found.append(str(path))
    return found


@pytest.fixture(scope="module")
def critic(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Critic]:
    home = tmp_path_factory.mktemp("clear")
    with start_critic(infra, migrated_database, home, {"KRONII_CRITIC_GONE_SWEEP_SECS": "0.5"}) as running:
        yield running


def _critic_dirs(critic: Critic) -> list[Path]:
    home = critic.home
    return [home / "data", home / "run", home / ".config", home / ".local" / "state", home / "state"]


def _runtime(critic: Critic) -> Path:
    return critic.home / "run" / "kronii" / "critic"


def _shell(shell: str, critic: Critic) -> ShellPty:
    setup = shell_setup(shell, critic.home / shell, hooked=True)
    setup.env["XDG_RUNTIME_DIR"] = str(critic.home / "run")  # the critic's runtime directory
    setup.env["XDG_STATE_HOME"] = str(critic.home / "state")
    return ShellPty(setup)


def _kept(critic: Critic, text: str) -> bool:
    return bool(critic.get("/v1/critic/search", text=text)["hits"])


def _session_files(critic: Critic, shell: str, session: str) -> dict[str, int]:
    found = {}
    for prefix in PER_SHELL[shell]:
        path = _runtime(critic) / f"{prefix}{session}"
        if path.exists():
            found[prefix] = path.stat().st_mode & 0o777
    return found


def _session_of(pty: ShellPty) -> str:
    stat = Path(f"/proc/{pty.pid}/stat").read_text()
    return f"{pty.pid}-{stat.rpartition(')')[2].split()[19]}"


@pytest.mark.parametrize("shell", SHELLS)
def test_a_secret_typed_in_a_command_is_on_no_disk_in_clear_text_a_few_commands_later(
    critic: Critic, shell: str
) -> None:
    secret = fake_aws_secret()
    marker = f"kronii-after-secret-{shell}"
    with _shell(shell, critic) as pty:
        pty.run(f"export AWS_SECRET_ACCESS_KEY={secret} KRONII_MARK={marker}-0")
        # The shell waits at its prompt, the secret its last command: once the critic has it, no file does.
        wait_until(lambda: _kept(critic, f"{marker}-0"), timeout_s=20, what="the secret's command kept")
        wait_until(lambda: not files_holding(secret, *_critic_dirs(critic)), timeout_s=5,
                   what="no file holding the secret while it is the last command")  # fmt: skip
        pty.run("true")
        pty.run(f"echo {marker}")
        wait_until(lambda: _kept(critic, marker), timeout_s=20, what="the commands after the secret kept")
        session = _session_of(pty)
        # Nothing is left to wait for: the spool's renamed file goes once its lines were taken.
        wait_until(lambda: not files_holding(secret, *_critic_dirs(critic)), timeout_s=5,
                   what="no file holding the secret")  # fmt: skip
        modes = _session_files(critic, shell, session)
    assert not files_holding(secret, *_critic_dirs(critic))
    assert secret not in critic.proc.output, "nor in the critic's log"
    kept = critic.get("/v1/critic/search", text="AWS_SECRET_ACCESS_KEY")["hits"]
    assert kept and all(secret not in hit["record"]["command_line"] for hit in kept)
    assert "AWS_SECRET_ACCESS_KEY=" in critic.day_files(), "the command is kept, its secret masked"
    assert modes and all(mode == 0o600 for mode in modes.values()), modes
    _no_secret_in_postgresql(critic, secret)


def _no_secret_in_postgresql(critic: Critic, secret: str) -> None:
    """The rows hold the masked text; where the test may read the server's files (the embedded
    server of the run, as its superuser), its WAL and tables are searched after a checkpoint."""
    with psycopg.connect(critic.database, autocommit=True) as conn:
        rows = conn.execute("SELECT command_line FROM critic_records").fetchall()
        assert all(secret not in str(row[0]) for row in rows)
        try:
            conn.execute("CHECKPOINT")
            directory = Path(str(conn.execute("SHOW data_directory").fetchone()[0]))  # type: ignore[index]
        except psycopg.Error:
            return  # not a superuser of that server (containers): the rows were checked
    if directory.is_dir():
        assert not files_holding(secret, directory), "PostgreSQL's files"


@pytest.mark.parametrize("shell", SHELLS)
def test_the_per_shell_files_are_0600_and_removed_when_the_shell_exits(critic: Critic, shell: str) -> None:
    pty = _shell(shell, critic).start()
    try:
        pty.run("false")
        session = _session_of(pty)
        modes = _session_files(critic, shell, session)
        os.write(pty._fd, b"exit\r")
        wait_until(lambda: os.waitpid(pty.pid, os.WNOHANG)[0] != 0, timeout_s=10, what="the shell exited")
        pty.pid = 0
    finally:
        pty.close()
    assert set(modes) == set(PER_SHELL[shell]) and set(modes.values()) == {0o600}, modes
    left = sorted(entry.name for entry in _runtime(critic).iterdir() if session in entry.name)
    assert left == [], f"{shell} left {left}"


def test_the_critic_removes_the_files_of_a_shell_that_was_killed(critic: Critic) -> None:
    pty = _shell("bash", critic).start()
    try:
        pty.run("true")
        session = _session_of(pty)
        assert _session_files(critic, "bash", session)
        os.kill(pty.pid, signal.SIGKILL)  # no EXIT trap runs
        os.waitpid(pty.pid, 0)
        pty.pid = 0
    finally:
        pty.close()
    # The critic's sweep (every 0.5 s here, 30 s by default) finds the shell gone.
    wait_until(lambda: not _session_files(critic, "bash", session), timeout_s=10,
               what="the critic removed the killed shell's files")  # fmt: skip
    left = sorted(entry.name for entry in _runtime(critic).iterdir() if session in entry.name)
    assert left == []
