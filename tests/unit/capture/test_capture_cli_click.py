"""`kronii capture` and `kronii keys` on click, with a stand-in for the capture service's stub: usage
errors with the subcommand's usage, local times for people and UTC in --json, exit codes from
gRPC statuses, completion of the fixed choices, and a module that imports nothing heavy."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.shell_completion import BashComplete
from click.testing import CliRunner, Result
from google.protobuf.timestamp_pb2 import Timestamp
from kronii.capture.cli import capture as capture_cli
from kronii.capture.cli import keys
from kronii.capture.core.targets import WindowInfo
from kronii.capture.v1 import capture_pb2 as pb
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

AT = datetime(2021, 6, 7, 8, 9, 10, 250000, tzinfo=UTC)


def stamp(at: datetime = AT) -> Timestamp:
    out = Timestamp()
    out.FromDatetime(at)
    return out


class FakeStub:
    def __init__(self) -> None:
        self.statuses: list[pb.CaptureStatus] = []
        self.screenshots: list[pb.ScreenshotMeta] = []
        self.requests: list[Any] = []

    def WatchCapture(self, job: pb.CaptureJobId, **_: Any) -> Iterator[pb.CaptureStatus]:
        self.requests.append(job)
        return iter(self.statuses)

    def ListScreenshots(self, request: pb.ListScreenshotsRequest, **_: Any) -> pb.ListScreenshotsResponse:
        self.requests.append(request)
        return pb.ListScreenshotsResponse(screenshots=self.screenshots)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> FakeStub:
    fake = FakeStub()

    @contextlib.contextmanager
    def service(options: capture_cli.Options, action: str) -> Iterator[FakeStub]:
        yield fake

    monkeypatch.setattr(capture_cli, "_service", service)
    return fake


def capture(*args: str) -> Result:
    return CliRunner().invoke(capture_cli.capture_command, list(args), prog_name="kronii capture")


def completions(command: Any, prog: str, args: list[str], incomplete: str) -> list[str]:
    return [item.value for item in BashComplete(command, {}, prog, "_X").get_completions(args, incomplete)]


def status(name: str, **fields: Any) -> pb.CaptureStatus:
    return pb.CaptureStatus(job_id="job-1", status=pb.CaptureStatusCode.Value(name), at=stamp(), **fields)


def test_watch_prints_each_status_at_its_local_time_of_day_and_exits_0_once_persisted(stub: FakeStub) -> None:
    stub.statuses = [status("QUEUED"), status("PERSISTED", primary_screenshot_id="shot-1")]
    result = capture("watch", "job-1")
    assert result.exit_code == 0, result.output
    clock = AT.astimezone().strftime("%H:%M:%S.250")
    assert result.output.splitlines() == [f"{clock}  queued", f"{clock}  persisted  screenshot shot-1"]


def test_watch_of_a_job_that_ended_without_an_image_exits_1_and_json_is_utc(stub: FakeStub) -> None:
    stub.statuses = [status("EXPIRED", reason="the window never matched")]
    result = capture("watch", "job-1", "--json")
    assert result.exit_code == exits.FAILED
    assert json.loads(result.output) == {
        "job_id": "job-1", "at": "2021-06-07T08:09:10.250Z", "status": "expired",
        "reason": "the window never matched", "screenshot_id": None,
    }  # fmt: skip


def test_list_json_keeps_its_shape_and_the_lines_show_local_times(stub: FakeStub) -> None:
    stub.screenshots = [pb.ScreenshotMeta(screenshot_id="shot-1", job_id="job-1", app_name="XTerm", width=640,
                                          height=480, redaction_level="amber", created_at=stamp(), score=0.12345)]  # fmt: skip
    listed = capture("list", "-n", "5", "--json")
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output) == [{
        "screenshot_id": "shot-1", "created_at": "2021-06-07T08:09:10Z", "app": "XTerm", "width": 640,
        "height": 480, "redaction_level": "amber", "score": 0.123, "job_id": "job-1",
    }]  # fmt: skip
    assert stub.requests[0].limit == 5
    header, line = capture("list").output.strip().splitlines()
    assert header.split() == ["ID", "CREATED", "APP", "SIZE", "LEVEL", "SCORE", "JOB"]
    assert line.startswith(f"shot-1  {AT.astimezone():%Y-%m-%d %H:%M:%S}  XTerm") and line.endswith("job-1")


def test_list_with_nothing_stored_says_so_on_stderr(stub: FakeStub) -> None:
    listed = capture("list")
    assert (listed.exit_code, listed.stdout) == (0, "")
    assert "no screenshots stored" in listed.stderr


def test_list_refuses_a_limit_below_one_with_its_usage() -> None:
    result = capture("list", "-n", "0")
    assert result.exit_code == exits.USAGE
    assert (
        "Usage: kronii capture list [OPTIONS]" in result.output
        and "0 is not in the range x>=1" in result.output
    )


def test_get_takes_the_file_after_the_id_or_with_o_but_not_neither_nor_both() -> None:
    for args in (("get", "shot-1"), ("get", "shot-1", "a.png", "-o", "b.png")):
        result = capture(*args)
        assert result.exit_code == exits.USAGE, args
        assert "name the file to write once: `kronii capture get ID FILE`" in result.output


def test_request_refuses_an_unknown_policy_and_a_negative_pid_before_any_call() -> None:
    assert capture("request", "--bypass", "loose").exit_code == exits.USAGE
    assert "Usage: kronii capture request" in capture("request", "--pid", "-1").output


def test_the_policies_and_priorities_complete_in_the_shell() -> None:
    assert completions(capture_cli.capture_command, "kronii capture", ["request", "--bypass"], "w") == [
        "window_relaxed"
    ]
    assert completions(capture_cli.capture_command, "kronii capture", ["request", "--priority"], "") == ["high", "low",
                                                                                                 "normal"]  # fmt: skip
    assert completions(capture_cli.capture_command, "kronii capture", ["clients", "add", "x", "--capability"], "read") == [
        "READ_REDACTED", "READ_RAW_ENCRYPTED",
    ]  # fmt: skip


def test_no_socket_is_unreachable_with_a_sentence(tmp_path: Path) -> None:
    result = capture("--socket", str(tmp_path / "none.sock"), "list")
    assert isinstance(result.exception, CommandError)
    assert result.exception.code == exits.UNREACHABLE
    assert result.exception.message == (
        f"kronii: capture is not running (no socket at {tmp_path / 'none.sock'}): start it with `kronii up`"
    )


class FakeRpcError(Exception):
    def __init__(self, name: str, details: str) -> None:
        self.name, self.text = name, details

    def code(self) -> Any:
        import grpc

        return grpc.StatusCode[self.name]

    def details(self) -> str:
        return self.text


@pytest.mark.parametrize(
    ("name", "code", "sentence"),
    [("NOT_FOUND", exits.NOT_FOUND, "kronii: capture get refused: no such screenshot"),
     ("INVALID_ARGUMENT", exits.USAGE, "kronii: capture get refused: no such screenshot"),
     ("PERMISSION_DENIED", exits.REFUSED, "kronii: capture get refused: no such screenshot"),
     ("UNAVAILABLE", exits.UNREACHABLE, "kronii: capture is not running or does not answer (no such screenshot)"),
     ("INTERNAL", exits.FAILED, "kronii: capture get refused: no such screenshot")],
)  # fmt: skip
def test_grpc_statuses_become_the_shared_exit_codes(name: str, code: int, sentence: str) -> None:
    error = capture_cli.rpc_error(FakeRpcError(name, "no such screenshot"), "get")
    assert error.code == code and error.message.startswith(sentence)


def test_targets_through_a_pipe_is_plain_columns_and_json_names_each_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    windows = [WindowInfo(0x1A00007, 4242, "XTerm", "notes — vim"), WindowInfo(0x2C00001, 0, "", "untitled")]
    monkeypatch.setattr("kronii.capture.adapters.x_windows.list_windows", lambda: windows)
    table = capture("targets").output.splitlines()
    assert table[0].split() == ["WINDOW", "PID", "APP", "TITLE"]
    assert table[1].split() == ["0x1a00007", "4242", "XTerm", "notes", "—", "vim"]
    assert table[2].split() == ["0x2c00001", "?", "?", "untitled"]
    assert json.loads(capture("targets", "--json").output)[0] == {
        "window": "0x1a00007", "pid": 4242, "app": "XTerm", "title": "notes — vim",
    }  # fmt: skip


def test_clients_add_refuses_an_unknown_capability_and_a_missing_key_file_as_usage(tmp_path: Path) -> None:
    key = tmp_path / "agent.pub"
    key.write_text("11" * 32)
    unknown = capture("clients", "add", "x", "--public-key", str(key), "--capability", "root")
    assert isinstance(unknown.exception, CommandError) and unknown.exception.code == exits.USAGE
    assert "unknown capability 'root'" in unknown.exception.message
    missing = capture("clients", "add", "x", "--public-key", str(tmp_path / "none.pub"))
    assert isinstance(missing.exception, CommandError) and missing.exception.code == exits.USAGE
    assert "cannot read the key file" in missing.exception.message


def test_keys_commands_are_a_click_group_whose_usage_errors_exit_2() -> None:
    result = CliRunner().invoke(keys.keys_command, ["status", "--bogus"], prog_name="kronii keys")
    assert result.exit_code == exits.USAGE and "Usage: kronii keys status [OPTIONS]" in result.output


@pytest.mark.parametrize("module", ["kronii.capture.cli.capture", "kronii.capture.cli.keys"])
def test_the_modules_import_no_network_client_database_or_table_library(module: str) -> None:
    probe = f"import json, sys, {module}; print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    )
    assert not {"grpc", "httpx", "redis", "psycopg", "sqlalchemy", "rich", "cryptography"} & set(loaded)


def test_main_runs_the_command_as_kronii_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert capture_cli.main(["capture", "--socket", str(tmp_path / "none.sock"), "list"]) == exits.UNREACHABLE
    assert "capture is not running (no socket at" in capsys.readouterr().err
    assert keys.main(["keys", "rotate", "--batch-size", "0"]) == exits.USAGE
