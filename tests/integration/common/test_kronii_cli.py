"""The `kronii` command as a person runs it: subcommands wired, usage errors are sentences with exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

KRONII = str(Path(sys.executable).parent / "kronii")


def _run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([KRONII, *args], input=stdin, capture_output=True, text=True, timeout=60)


def test_kronii_redact_masks_text_through_the_main_command() -> None:
    result = _run("redact", stdin="write to bob@example.com with AKIAIOSFODNN7EXAMPLE\n")
    assert result.returncode == 10
    assert "bob@example.com" not in result.stdout
    assert "AKIAIOSFODNN7EXAMPLE" not in result.stdout
    assert "[EMAIL_1]" in result.stdout


def test_kronii_redact_missing_file_is_a_usage_error() -> None:
    result = _run("redact", "/nonexistent/notes.txt")
    assert result.returncode == 2
    assert "does not exist" in result.stderr


def test_kronii_without_a_command_prints_usage_and_exits_2() -> None:
    result = _run()
    assert result.returncode == 2
    assert "usage: kronii" in result.stderr


def test_kronii_audit_tail_refuses_a_non_positive_count() -> None:
    result = _run("audit", "tail", "-n", "0")
    assert result.returncode == 2
    assert "--lines must be a positive number" in result.stderr


def test_kronii_agents_is_wired_from_the_supervisor_package() -> None:
    result = _run("agents", "--help")
    assert result.returncode == 0
    for action in ("spawn", "list", "trigger", "pause", "resume", "logs", "ack"):
        assert action in result.stdout
