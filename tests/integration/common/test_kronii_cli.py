"""The `kronii` command as a person runs it (the installed script, as a process): help on a bare
`kronii`, `--version`, a subcommand's own usage on its errors, the exit-code vocabulary, completion
scripts for bash, zsh and fish that complete for real, a closed pipe, and a sentence when a service
is down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KRONII = str(Path(sys.executable).parent / "kronii")


def _run(*args: str, stdin: str = "", env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRONII, *args], input=stdin, capture_output=True, text=True, timeout=60, env=env)


def _nothing_running(tmp_path: Path) -> dict[str, str]:
    """A shell where kronii is not running: its own data dir, no configured servers, dead ports."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    env.update(
        KRONII_DATA_DIR=str(tmp_path / "data"), KRONII_CONFIG=str(tmp_path / "none.toml"),
        KRONII_EMBEDDED_NATS_PORT="1", KRONII_EMBEDDED_REDIS_PORT="1", KRONII_EMBEDDED_POSTGRES_PORT="1",
        KRONII_SUPERVISOR_HTTP_PORT="1",
    )  # fmt: skip
    return env


def test_kronii_redact_masks_text_through_the_main_command() -> None:
    result = _run("redact", stdin="write to bob@exemple.com with AKIAJ4XW7QZ2MB5RT6NP\n")
    assert result.returncode == 10
    assert "bob@exemple.com" not in result.stdout
    assert "AKIAJ4XW7QZ2MB5RT6NP" not in result.stdout
    assert "[EMAIL_1]" in result.stdout


def test_kronii_redact_missing_file_is_a_usage_error() -> None:
    result = _run("redact", "/nonexistent/notes.txt")
    assert result.returncode == 2
    assert "does not exist" in result.stderr


def test_bare_kronii_prints_its_help_with_every_command_and_the_exit_codes() -> None:
    result = _run()
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: kronii [OPTIONS] [COMMAND]")
    for command in (
        "up",
        "status",
        "config",
        "service",
        "redact",
        "agents",
        "capture",
        "replay",
        "completion",
    ):
        assert f"\n  {command} " in result.stdout, command
    assert "Exit codes: 0 ok, 1 failed, 2 usage, 3 not found, 4 refused, 5 unreachable" in " ".join(
        result.stdout.split()
    )


def test_version() -> None:
    for flag in ("--version", "-V"):
        result = _run(flag)
        assert result.returncode == 0
        assert result.stdout.startswith("kronii ") and result.stdout.split()[1][0].isdigit()


def test_an_unknown_option_shows_the_subcommands_usage_and_exits_2() -> None:
    native = _run("status", "--bogus")
    assert native.returncode == 2
    assert "Usage: kronii status [OPTIONS]" in native.stderr and "No such option '--bogus'" in native.stderr
    package = _run("capture", "list", "--nope")
    assert package.returncode == 2
    assert (
        "Usage: kronii capture list [OPTIONS]" in package.stderr
        and "No such option '--nope'" in package.stderr
    )
    unknown = _run("nosuch")
    assert unknown.returncode == 2 and "No such command 'nosuch'" in unknown.stderr


def test_kronii_audit_tail_refuses_a_non_positive_count() -> None:
    result = _run("audit", "tail", "-n", "0")
    assert result.returncode == 2
    assert "Usage: kronii audit tail" in result.stderr and "0 is not in the range x>=1" in result.stderr


def test_kronii_agents_is_wired_from_the_supervisor_package() -> None:
    result = _run("agents", "--help")
    assert result.returncode == 0
    assert result.stdout.startswith("Usage: kronii agents [OPTIONS] COMMAND [ARGS]...")
    for action in ("spawn", "list", "trigger", "pause", "resume", "logs", "ack"):
        assert action in result.stdout


def test_postgres_down_is_a_sentence_and_exit_5(tmp_path: Path) -> None:
    never_ran = _nothing_running(tmp_path)
    stopped = {**never_ran, "KRONII_DATABASE_URL": "postgresql://kronii@127.0.0.1:1/kronii"}
    for command in (("audit", "verify"), ("audit", "tail"), ("migrate",)):
        result = _run(*command, env=stopped)
        assert result.returncode == 5, (command, result.stderr)
        assert result.stderr.strip() == (
            "kronii: PostgreSQL is not reachable: start kronii with `kronii up`, or set KRONII_DATABASE_URL"
        )
        first = _run(*command, env=never_ran)
        assert first.returncode == 5, (command, first.stderr)
        assert "no embedded postgres exists yet: start kronii with `kronii up`" in first.stderr


def test_status_json_gives_each_address_its_own_field_and_exit_1_when_down(tmp_path: Path) -> None:
    result = _run("status", "--json", env=_nothing_running(tmp_path))
    assert result.returncode == 1
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["postgres"]["url"].startswith("postgresql://") and rows["postgres"]["ready"] is False
    sensor = rows["sensor"]
    assert sensor["http"].startswith("http://") and sensor["grpc"] and "grpc" not in sensor["http"]
    assert set(sensor) == {"name", "kind", "http", "grpc", "ready", "detail", "restarts"}


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    text = "".join(
        f"line {i}: the nightly build finished, the report went to u{i}@exemple.com\n" for i in range(20_000)
    )
    shell = subprocess.run(
        ["bash", "-c", f"set -o pipefail; '{KRONII}' redact | head -1"],
        input=text, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert shell.stdout == "line 0: the nightly build finished, the report went to [EMAIL_1]\n"
    assert "Traceback" not in shell.stderr and "BrokenPipe" not in shell.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_are_printed_for_each_shell(shell: str) -> None:
    result = _run("completion", shell)
    assert result.returncode == 0
    assert "_KRONII_COMPLETE" in result.stdout and "_kronii_completion" in result.stdout


def test_bash_completion_completes_commands_and_options_for_real() -> None:
    script = f"""
source <('{KRONII}' completion bash)
complete_at() {{ COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _kronii_completion kronii; echo "${{COMPREPLY[*]}}"; }}
PATH="{Path(KRONII).parent}:$PATH"
complete_at kronii sta
complete_at kronii audit ta
complete_at kronii status --j
"""
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout.split("\n")[:3] == ["status", "tail", "--json"], result.stdout + result.stderr


def test_agents_and_capture_say_how_to_start_kronii_when_it_never_ran(tmp_path: Path) -> None:
    env = _nothing_running(tmp_path)
    agents = _run("agents", "list", env=env)
    assert agents.returncode == 5 and "the supervisor has not run here yet" in agents.stderr
    assert "start it with `kronii up`" in agents.stderr
    capture = _run("capture", "list", env=env)
    assert capture.returncode == 5 and "capture is not running (no socket at" in capture.stderr
