"""`kronii critic` and `kronii run` on click, against a small fake of the critic's HTTP API on loopback
TCP: what each command sends, local times for a person and UTC in --json, the exit codes, the
sentence when the critic is down; `kronii run` passes the command's exit status and stderr through
and reports the event (error text only for a failure), quietly and at once when nobody listens."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from kronii.critic.cli import critic as critic_cli
from kronii.critic.cli import run as run_cli
from kronii.critic.cli.critic import parse_duration, since_value
from kronii.launcher.cli import exits

from tests.unit.critic.cli_fakes import NEW_AT, OLD_AT, FakeCritic, handler


@dataclass
class Running:
    fake: FakeCritic
    url: str


@pytest.fixture
def served() -> Iterator[Running]:
    fake = FakeCritic()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(fake))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield Running(fake, f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def nobody() -> str:
    """A loopback URL nothing listens on: connecting is refused at once."""
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    return url


def critic(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(critic_cli.critic_command, list(args), prog_name="kronii critic", env=env)


def local(stamp: str) -> str:
    at = datetime.fromisoformat(stamp).astimezone()
    today = at.date() == datetime.now().astimezone().date()
    return at.strftime("%H:%M:%S" if today else "%Y-%m-%d %H:%M:%S")


# ---- search and similar -------------------------------------------------------------------------


def test_search_sends_the_text_and_prints_the_hits_in_local_time(served: Running) -> None:
    result = critic("--url", served.url, "search", "linker error", "--take", "5", "--failed")

    assert result.exit_code == 0, result.output
    call = served.fake.seen[-1]
    assert (call.method, call.path, call.body) == (
        "POST", "/v1/critic/search", {"text": "linker error", "take": 5, "failed_only": True},
    )  # fmt: skip
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["WHEN", "EXIT", "SIM", "CWD", "COMMAND"]
    assert lines[1].startswith(local(NEW_AT)) and lines[1].endswith("make test TOKEN=<SECRET>")
    assert "0.91" in lines[1] and lines[2].startswith(local(OLD_AT))


def test_search_json_is_an_array_of_hits_with_utc_times(served: Running) -> None:
    result = critic("--url", served.url, "search", "make", "--json")

    hits = json.loads(result.stdout)
    assert [set(hit) for hit in hits] == [{"record", "similarity", "score", "tier"}] * 2
    assert hits[0]["record"]["timestamp"] == NEW_AT and hits[0]["similarity"] == 0.9123
    assert served.fake.seen[-1].body == {"text": "make", "take": 20, "failed_only": False}


def test_search_with_no_hits_says_so_and_succeeds(served: Running) -> None:
    result = critic("--url", served.url, "search", "nothing")
    assert result.exit_code == 0 and result.stdout == ""
    assert "no remembered command is like 'nothing'" in result.stderr
    as_json = critic("--url", served.url, "search", "nothing", "--json")
    assert json.loads(as_json.stdout) == []


def test_similar_defaults_to_the_last_failure_of_this_shells_session_and_directory(
    served: Running, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = critic("--url", served.url, "similar", env={"KRONII_CRITIC_SESSION": "4242-77"})

    assert result.exit_code == 0, result.output
    assert served.fake.seen[-1].body == {"record_id": "", "session": "4242-77", "cwd": str(tmp_path), "k": 5}
    lines = result.stdout.splitlines()
    assert lines[0] == f"like 'make test TOKEN=<SECRET>' (exit 2, {local(NEW_AT)}):"
    assert lines[2].endswith("make test")


def test_similar_to_a_record_as_json(served: Running) -> None:
    result = critic("--url", served.url, "similar", "r-new", "--k", "3", "--json")

    body = served.fake.seen[-1].body
    assert (body["record_id"], body["k"]) == ("r-new", 3)
    answer = json.loads(result.stdout)
    assert answer["anchor"]["record_id"] == "r-new" and [
        h["record"]["record_id"] for h in answer["hits"]
    ] == ["r-old"]


def test_similar_with_nothing_to_compare_is_exit_3_with_the_critics_sentence(
    served: Running, capsys: pytest.CaptureFixture[str]
) -> None:
    sentence = "no failing command in this session or directory yet"
    served.fake.refuse["/v1/critic/similar"] = (404, {"detail": sentence})

    assert critic_cli.main(["--url", served.url, "similar"]) == exits.NOT_FOUND
    assert capsys.readouterr().err.strip() == f"kronii: critic similar refused: {sentence}"


def test_a_bad_argument_the_critic_refuses_is_exit_2(
    served: Running, capsys: pytest.CaptureFixture[str]
) -> None:
    served.fake.refuse["/v1/critic/search"] = (400, {"detail": "text is longer than 65536 characters",
                                                     "field": "text"})  # fmt: skip
    assert critic_cli.main(["--url", served.url, "search", "x"]) == exits.USAGE
    assert "text is longer than 65536 characters" in capsys.readouterr().err


# ---- export ---------------------------------------------------------------------------------------


def test_export_writes_json_lines_redacted_by_default(served: Running) -> None:
    result = critic("--url", served.url, "export")

    assert result.exit_code == 0, result.output
    assert [json.loads(line)["record_id"] for line in result.stdout.splitlines()] == ["r-old", "r-new"]
    assert served.fake.seen[-1].query == {"redact": "true"}


def test_export_since_seven_days_ago_without_redaction_into_a_private_file(
    served: Running, tmp_path: Path
) -> None:
    target = tmp_path / "history.jsonl"
    before = datetime.now(UTC) - timedelta(days=7, seconds=5)
    result = critic("--url", served.url, "export", "--since", "7d", "--no-redact", "--output",
                                 str(target))  # fmt: skip

    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == f"wrote 2 records to {target}"
    assert [json.loads(line)["record_id"] for line in target.read_text().splitlines()] == ["r-old", "r-new"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    query = served.fake.seen[-1].query
    assert query["redact"] == "false"
    since = datetime.fromisoformat(query["since"])
    assert query["since"].endswith("Z") and before < since < before + timedelta(seconds=30)
    assert list(tmp_path.iterdir()) == [target]  # no scratch file left


def test_export_into_a_file_when_the_critic_is_down_leaves_no_file(nobody: str, tmp_path: Path) -> None:
    target = tmp_path / "history.jsonl"
    assert critic_cli.main(["--url", nobody, "export", "-o", str(target)]) == exits.UNREACHABLE
    assert list(tmp_path.iterdir()) == []


# ---- doctor and mute -------------------------------------------------------------------------------


def test_doctor_prints_each_part_and_succeeds_when_all_is_well(served: Running) -> None:
    result = critic("--url", served.url, "doctor")

    assert result.exit_code == 0, result.output
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines())
    assert lines["hooks"] == f"bash: 42 commands, last {local(NEW_AT)}; zsh: 0 commands, last -"
    assert lines["model"] == f"all-MiniLM-L6-v2 int8 (sha256 {'ab' * 6})"
    assert lines["records"] == "200 in RAM, 1500 in files, 98765 in the database"
    assert lines["hints"] == "/run/user/1000/kronii/critic: ok, 1 waiting"
    assert lines["embeddings"] == "queue 1/256, 3 dropped, latency p50 4.5 ms, p95 9.2 ms"
    assert lines["muted"] == "no" and lines["redactions"] == "7"


def test_doctor_with_problems_lists_them_and_exits_1(served: Running) -> None:
    served.fake.doctor.update(problems=["the database is not reachable"],
                              model={"available": False, "problem": "the model file is missing"})  # fmt: skip
    result = critic("--url", served.url, "doctor")

    assert result.exit_code == exits.FAILED
    assert "problem     the database is not reachable" in result.stdout.splitlines()
    assert "model       none: the model file is missing; search is by keywords" in result.stdout


def test_doctor_json_has_every_field_with_numbers_and_utc_times(served: Running) -> None:
    report = json.loads(critic("--url", served.url, "doctor", "--json").stdout)

    assert set(report) == {"hooks", "spool", "hints", "model", "records", "embeddings", "mute", "problems"}
    assert report["hooks"] == [{"shell": "bash", "events": 42, "last_seen": NEW_AT},
                               {"shell": "zsh", "events": 0, "last_seen": None}]  # fmt: skip
    assert report["records"] == {"ram": 200, "files": 1500, "database": 98765, "redactions": 7}
    assert report["embeddings"]["dropped"] == 3 and report["hints"]["pending"] == 1
    assert report["mute"] == {"muted": False, "until": None}


def test_mute_for_an_hour_says_until_when_in_local_time(served: Running) -> None:
    result = critic("--url", served.url, "mute", "1h")

    assert result.exit_code == 0, result.output
    assert served.fake.seen[-1].body == {"seconds": 3600}
    assert result.stdout.startswith("hints muted until ")
    unmuted = critic("--url", served.url, "mute", "0", "--json")
    assert served.fake.seen[-1].body == {"seconds": 0}
    assert json.loads(unmuted.stdout) == {"muted": False, "until": None}


def test_a_duration_that_is_not_one_is_a_usage_error_before_any_call(served: Running) -> None:
    result = critic("--url", served.url, "mute", "soon")
    assert result.exit_code == exits.USAGE and "'soon' is not a duration" in result.output
    assert served.fake.seen == []


@pytest.mark.parametrize(("text", "seconds"), [("0", 0), ("90s", 90), ("30m", 1800), ("1h30m", 5400),
                                                ("7d", 604800), ("2W", 1209600)])  # fmt: skip
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


def test_since_takes_a_duration_or_a_date_and_gives_utc() -> None:
    now = datetime(2025, 10, 9, 12, 0, tzinfo=UTC)
    assert since_value("12h", now) == "2025-10-09T00:00:00.000Z"
    assert since_value("2025-10-01T09:00:00+02:00", now) == "2025-10-01T07:00:00.000Z"
    with pytest.raises(ValueError, match="neither a duration"):
        since_value("last tuesday", now)


def test_the_critic_down_is_exit_5_with_a_sentence_saying_how_to_start_it(
    nobody: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert critic_cli.main(["--url", nobody, "doctor"]) == exits.UNREACHABLE
    assert capsys.readouterr().err.strip() == (
        f"kronii: the critic is not reachable at {nobody} (Connection refused): start it with `kronii up`"
    )


def test_the_critic_is_found_through_its_url_variable(served: Running) -> None:
    result = critic("mute", "30m", env={"KRONII_CRITIC_URL": served.url})
    assert result.exit_code == 0, result.output
    assert served.fake.seen[-1].body == {"seconds": 1800}


# ---- kronii run -----------------------------------------------------------------------------------

FAILING = ["sh", "-c", "echo oops >&2; exit 3"]


def run(*argv: str, url: str, env: dict[str, str] | None = None) -> tuple[Result, float]:
    began = time.monotonic()
    result = CliRunner().invoke(
        run_cli.run_command,
        ["--", *argv],
        prog_name="kronii run",
        env={"KRONII_CRITIC_URL": url, **(env or {})},
    )
    return result, time.monotonic() - began


def test_run_passes_the_status_and_stderr_through_and_reports_the_error_text(
    served: Running, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    before_ms = time.time_ns() // 1_000_000
    result, _ = run(*FAILING, url=served.url, env={"KRONII_CRITIC_SESSION": "4242-77"})

    assert result.exit_code == 3
    assert result.stderr == "oops\n"
    call = served.fake.seen[-1]
    assert (call.method, call.path) == ("POST", "/v1/critic/events")
    event = call.body
    assert event["command_line"] == "sh -c 'echo oops >&2; exit 3'"
    assert (event["shell"], event["session"], event["cwd"]) == ("run", "4242-77", str(tmp_path))
    assert (event["exit_status"], event["error_text"]) == (3, "oops\n")
    started_ms = datetime.fromisoformat(event["started"]).timestamp() * 1000
    assert event["started"].endswith("Z") and before_ms - 1 <= started_ms <= before_ms + 5000
    assert 0 <= event["duration_ms"] < 5000


def test_run_of_a_command_that_succeeds_reports_no_error_text(served: Running) -> None:
    result, _ = run("sh", "-c", "echo progress >&2", url=served.url)

    assert result.exit_code == 0 and result.stderr == "progress\n"
    assert served.fake.seen[-1].body["exit_status"] == 0 and served.fake.seen[-1].body["error_text"] == ""


def test_run_keeps_only_the_last_8_kb_of_stderr(served: Running) -> None:
    script = "i=0; while [ $i -lt 2000 ]; do echo line-$i >&2; i=$((i+1)); done; echo last-line >&2; exit 1"
    result, _ = run("sh", "-c", script, url=served.url)

    assert result.exit_code == 1 and "line-0\n" in result.stderr  # the terminal saw everything
    text = served.fake.seen[-1].body["error_text"]
    assert len(text.encode()) == run_cli.TAIL_BYTES and text.endswith("line-1999\nlast-line\n")


def test_run_of_a_command_that_does_not_exist_is_127_and_reported(served: Running) -> None:
    result, _ = run("kronii-no-such-command", "--flag", url=served.url)

    assert result.exit_code == 127
    assert "kronii: run: kronii-no-such-command: command not found" in result.stderr
    event = served.fake.seen[-1].body
    assert event["exit_status"] == 127 and "command not found" in event["error_text"]


def test_run_of_a_command_killed_by_a_signal_exits_128_plus_the_signal(served: Running) -> None:
    result, _ = run("sh", "-c", "kill -TERM $$", url=served.url)
    assert result.exit_code == 128 + 15
    assert served.fake.seen[-1].body["exit_status"] == 143


def test_run_with_the_critic_down_says_nothing_and_exits_with_the_status_at_once(nobody: str) -> None:
    result, took = run(*FAILING, url=nobody)

    assert result.exit_code == 3 and result.stderr == "oops\n"
    assert took < 1.0


def test_run_with_a_critic_that_never_answers_waits_only_its_short_deadline(served: Running) -> None:
    served.fake.silent = True
    result, took = run(*FAILING, url=served.url)

    assert result.exit_code == 3 and result.stderr == "oops\n"
    assert served.fake.seen and took < 2 * run_cli.REPORT_TIMEOUT_SECS + 1.0


def test_run_under_kronii_exits_with_the_commands_status(served: Running) -> None:
    """Through `kronii`'s own entry: its SystemExit handling must keep the status."""
    env = {**os.environ, "KRONII_CRITIC_URL": served.url}
    done = subprocess.run(
        [sys.executable, "-m", "kronii.critic.cli", "run", "--", *FAILING],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (3, "oops\n")
    assert served.fake.seen[-1].body["error_text"] == "oops\n"


def _wrapper(script: str, url: str) -> subprocess.Popen[str]:
    """`kronii run -- sh -c SCRIPT` in its own process; returns once the command has said "ready" on
    stderr, which the wrapper echoes only after its signal handlers are in place."""
    wrapper = subprocess.Popen(
        [sys.executable, "-m", "kronii.critic.cli", "run", "--", "sh", "-c", script],
        env={**os.environ, "KRONII_CRITIC_URL": url}, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert wrapper.stderr is not None and wrapper.stderr.readline() == "ready\n"
    return wrapper


def test_run_outlives_a_ctrl_c_meant_for_the_command_and_exits_with_its_status(nobody: str) -> None:
    wrapper = _wrapper("echo ready >&2; sleep 0.5; exit 4", nobody)
    wrapper.send_signal(signal.SIGINT)  # the terminal sends it to the whole group; the command chose to go on
    assert wrapper.wait(timeout=30) == 4


def test_run_passes_a_sigterm_on_to_the_command(nobody: str) -> None:
    wrapper = _wrapper(
        'trap "echo got-term >&2; exit 7" TERM; echo ready >&2; while :; do sleep 0.05; done', nobody
    )
    wrapper.send_signal(signal.SIGTERM)
    assert wrapper.wait(timeout=30) == 7
    assert wrapper.stderr is not None and wrapper.stderr.read() == "got-term\n"


def test_the_commands_modules_import_nothing_heavy() -> None:
    code = (
        "import sys, kronii.critic.cli.critic, kronii.critic.cli.run; "
        "heavy = {'pydantic', 'fastapi', 'grpc', 'google.protobuf', 'rich', 'kronii.foundation.settings'}; "
        "print(sorted(heavy & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_reading_every_services_settings_as_the_launcher_does_imports_no_numpy() -> None:
    """`kronii up`'s launcher and every command that reads settings load each service's settings
    module; the critic's once pulled in its in-process index and numpy (8 MB more in the launcher)."""
    services = (
        "critic",
        "scheduler",
        "capture",
        "pipeline",
        "sensor",
        "supervisor",
        "vision",
        "console",
        "broker",
    )
    imports = "; ".join(f"import kronii.{name}.settings" for name in services)
    code = f"import sys; {imports}; print(sorted({{'numpy', 'hyperscan', 'onnxruntime'}} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
