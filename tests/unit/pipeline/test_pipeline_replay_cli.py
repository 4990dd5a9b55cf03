"""`kronii replay` and `kronii record` as click commands: the report in lines a person reads and in real
JSON, usage errors with the command's own usage (exit 2), the exit codes of `kronii.launcher.cli.exits` for
a file that is not there (3) or a bus that does not answer (5), and completion that loads no runner."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.shell_completion import ShellComplete
from click.testing import CliRunner, Result
from kronii.activity.v1 import activity_pb2 as apb
from kronii.launcher.cli import exits
from kronii.launcher.infra import free_port
from kronii.pipeline.adapters.recording import encode_line
from kronii.pipeline.cli import record as record_cli
from kronii.pipeline.cli.record import record_command
from kronii.pipeline.cli.replay import replay_command


def _recording(path: Path) -> Path:
    """Churn in a terminal's title, then an editor: one suggestion, one deferral (as the integration sample)."""
    ide = apb.Focus(
        app_name="code", wm_class="Code", window_id=7, title="machine.py - kronii - Visual Studio Code"
    )
    lines = [
        encode_line(
            i * 20,
            "kronii.activity.title_changed",
            apb.TitleChanged(
                focus=apb.Focus(app_name="term", wm_class="XTerm", window_id=9, title=f"build {i}%")
            ),
        )
        for i in range(50)
    ]
    lines.append(
        encode_line(120_000, "kronii.activity.focus_changed", apb.FocusChanged(current=ide, change="app"))
    )
    path.write_text("\n".join(lines) + "\n")
    return path


def _replay(*args: str) -> Result:
    return CliRunner().invoke(replay_command, list(args), prog_name="kronii replay")


def _command_error(result: Result) -> exits.CommandError:
    """The sentence and code `kronii` would print and exit with (the runner does not run `kronii`'s main)."""
    assert isinstance(result.exception, exits.CommandError), result.exception
    return result.exception


def test_the_report_is_readable_lines_with_no_python_dict(tmp_path: Path) -> None:
    result = _replay(str(_recording(tmp_path / "sample.jsonl")), "--tick-secs", "3600")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("replayed 51 events (51 triggers, 2.0 min recorded) in ")
    assert lines[1].startswith("runs: 3  decisions: ") and "{" not in result.stdout
    assert "notified: 1" in lines
    assert "     +2:00  Related tasks for machine.py in kronii" in lines  # the offset into the recording
    assert "deferred: 1 (title_churn 1)" in lines
    assert any(line.startswith("cost (rules): 7 model calls, ") for line in lines)


def test_json_is_the_whole_report_as_json(tmp_path: Path) -> None:
    result = _replay(str(_recording(tmp_path / "sample.jsonl")), "--json", "--tick-secs", "3600")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["backend"] == "rules"
    assert set(report) >= {"events", "triggers", "runs", "decisions", "notified", "deferred", "by_role"}
    assert report["runs"] == 3 and sum(report["decisions"].values()) == 3
    assert report["notified"][0]["at_ms"] == 120_000
    assert set(report["notified"][0]) == {"at_ms", "title", "body", "suggests"}


def test_an_estimated_model_says_so_in_the_report(tmp_path: Path) -> None:
    result = _replay(
        str(_recording(tmp_path / "s.jsonl")), "--backend", "openai", "--json", "--tick-secs", "3600"
    )
    report = json.loads(result.stdout)
    assert report["backend"] == "openai, estimated without calling"
    assert report["input_tokens"] > 100


def test_a_missing_recording_is_not_found_and_a_bad_one_a_usage_error(tmp_path: Path) -> None:
    missing = _command_error(_replay(str(tmp_path / "absent.jsonl")))
    assert missing.code == exits.NOT_FOUND and "there is no file" in missing.message
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"offset_ms": 1, "subject": "x"}\n')
    refused = _command_error(_replay(str(bad)))
    assert refused.code == exits.USAGE
    assert refused.message.startswith("kronii replay: bad.jsonl is not a kronii recording: line 1")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("x.jsonl", "--backend", "gpt"), "'gpt' is not one of 'rules', 'openai', 'llamacpp'"),
        (("x.jsonl", "--tick-secs", "0"), "0.0 is not in the range x>0"),
        ((), "Missing argument 'FILE'"),
        (("x.jsonl", "--bogus"), "No such option '--bogus'"),
    ],
)
def test_a_malformed_command_line_exits_2_with_the_commands_usage(args: tuple[str, ...], says: str) -> None:
    result = _replay(*args)
    assert result.exit_code == exits.USAGE
    assert "Usage: kronii replay [OPTIONS] FILE" in result.stderr and says in result.stderr


def _completions(command: object, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    completer = ShellComplete(command, {}, "kronii", "_KRONII_COMPLETE")  # type: ignore[arg-type]
    return [(item.value, item.type) for item in completer.get_completions(args, incomplete)]


def test_the_backend_choice_and_the_file_complete() -> None:
    assert [value for value, _ in _completions(replay_command, ["x.jsonl", "--backend"], "")] == [
        "rules",
        "openai",
        "llamacpp",
    ]
    assert _completions(replay_command, ["x.jsonl", "--backend"], "ll") == [("llamacpp", "plain")]
    assert _completions(replay_command, [], "rec") == [("rec", "file")]
    assert _completions(record_command, ["--out"], "") == [("", "file")]


def test_completing_and_help_load_no_runner() -> None:
    # The runner and its stores take about 2 s to import: a shell's TAB must not wait for them.
    code = (
        "import sys\n"
        "from click.shell_completion import ShellComplete\n"
        "from kronii.pipeline.cli.replay import replay_command\n"
        "items = ShellComplete(replay_command, {}, 'kronii', 'X').get_completions(['f', '--backend'], 'o')\n"
        "print([i.value for i in items], 'kronii.pipeline.usecases.runner' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout == "['openai'] False\n", done.stderr


def test_record_refuses_a_non_positive_duration_with_its_usage() -> None:
    result = CliRunner().invoke(record_command, ["--minutes", "0"], prog_name="kronii record")
    assert result.exit_code == exits.USAGE
    assert (
        "Usage: kronii record [OPTIONS]" in result.stderr and "0.0 is not in the range x>0" in result.stderr
    )


def test_record_without_a_bus_is_unreachable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRONII_NATS_URL", f"nats://127.0.0.1:{free_port()}")
    result = CliRunner().invoke(record_command, ["--minutes", "1", "--out", str(tmp_path / "x.jsonl")])
    error = _command_error(result)
    assert error.code == exits.UNREACHABLE and "cannot reach the bus of `kronii up`" in error.message


def test_record_json_keeps_stdout_for_the_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def two_events(out: str, minutes: float, ready: Callable[[], None]) -> int:
        ready()
        return 2

    monkeypatch.setattr(record_cli, "_record", two_events)
    out = str(tmp_path / "x.jsonl")
    result = CliRunner().invoke(record_command, ["--minutes", "1", "--out", out, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"events": 2, "out": out}
    assert result.stderr.startswith(f"recording activity to {out} for 1 min (until ")
    plain = CliRunner().invoke(record_command, ["--minutes", "1", "--out", out])
    assert plain.stdout.startswith("recording activity to ") and plain.stdout.endswith(
        f"recorded 2 events to {out}\n"
    )
