"""`kronii agents` on click, against a stand-in for the supervisor's HTTP client: what each command
sends, what it prints (lines, tables, --json), its exit codes, usage errors before any connection,
shell completion of its choices, and a module that imports nothing heavy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import click
import pytest
from click.shell_completion import BashComplete
from click.testing import CliRunner, Result
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError
from kronii.supervisor.cli import agents as agents_cli
from kronii.supervisor.cli.http import Connection

RUNTIME = {
    "runtime_id": "rt-0123456789ab", "workspace_id": "web", "agent_id": "reviewer", "role": "review",
    "kind": "codex", "status": "active", "agent_state": "idle", "pty_target": "%3", "pid": 4242,
    "paused": True, "operator_busy": False, "last_activity_at": "2020-01-02T03:04:05.678Z",
}  # fmt: skip


@dataclass
class FakeSupervisor:
    """Answers by (method, path); records each call and each connection's timeout."""

    answers: dict[tuple[str, str], Any]
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    timeouts: list[float] = field(default_factory=list)


@pytest.fixture
def supervisor(monkeypatch: pytest.MonkeyPatch) -> FakeSupervisor:
    fake = FakeSupervisor({})

    class FakeClient:
        def __init__(self, connection: Connection, timeout: float = 120.0) -> None:
            fake.timeouts.append(timeout)

        def call(self, method: str, path: str, **kwargs: Any) -> Any:
            fake.calls.append((method, path, kwargs))
            answer = fake.answers[(method, path)]
            if isinstance(answer, Exception):
                raise answer
            return answer

    monkeypatch.setattr(agents_cli, "Client", FakeClient)
    return fake


def agents(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(
        agents_cli.agents_command, list(args), prog_name="kronii agents", input=stdin, env=env
    )


def completions(args: list[str], incomplete: str) -> list[str]:
    complete = BashComplete(agents_cli.agents_command, {}, "kronii agents", "_KRONII_COMPLETE")
    return [item.value for item in complete.get_completions(args, incomplete)]


def test_spawn_sends_everything_after_the_double_dash_to_the_agent_unchanged(
    supervisor: FakeSupervisor,
) -> None:
    supervisor.answers[("POST", "/v1/runtimes/spawn")] = {
        "runtime": RUNTIME,
        "attach_command": "tmux attach -t x",
    }
    result = agents(
        "spawn", "--workspace", "web", "--agent", "reviewer", "--", "codex", "--role", "-x", "--help"
    )
    assert result.exit_code == 0, result.output
    body = supervisor.calls[0][2]["json"]
    assert body["command"] == ["codex", "--role", "-x", "--help"]
    assert body["kind"] == "codex" and body["role"] == "" and body["cwd"]
    assert result.output.splitlines() == [
        "started reviewer (codex) as rt-0123456789ab in pane %3, pid 4242",
        "watch it: tmux attach -t x",
    ]


def test_spawn_takes_the_command_without_a_double_dash_and_leaves_its_options_alone(
    supervisor: FakeSupervisor,
) -> None:
    supervisor.answers[("POST", "/v1/runtimes/spawn")] = {"runtime": RUNTIME, "attach_command": "tmux a"}
    result = agents(
        "spawn", "--workspace", "web", "--agent", "a", "/usr/bin/claude-code", "--agent", "b", "--json"
    )
    assert result.exit_code == 0, result.output
    body = supervisor.calls[0][2]["json"]
    assert body["agent_id"] == "a" and body["kind"] == "claude"
    assert body["command"] == ["/usr/bin/claude-code", "--agent", "b", "--json"]
    assert not result.output.startswith("{")  # --json after the command was the agent's, not ours


def test_spawn_without_a_command_is_a_usage_error_before_any_connection(supervisor: FakeSupervisor) -> None:
    result = agents("spawn", "--workspace", "web", "--agent", "a")
    assert result.exit_code == exits.USAGE
    assert "Usage: kronii agents spawn [OPTIONS] -- COMMAND [ARGS]..." in result.output
    assert "give the agent's command after --" in result.output
    assert supervisor.timeouts == []


def test_spawn_json_prints_the_supervisors_answer(supervisor: FakeSupervisor) -> None:
    answer = {"runtime": RUNTIME, "attach_command": "tmux attach -t agents_web"}
    supervisor.answers[("POST", "/v1/runtimes/spawn")] = answer
    result = agents("spawn", "--workspace", "web", "--agent", "a", "--json", "--", "python3", "bot.py")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == answer
    assert supervisor.calls[0][2]["json"]["kind"] == "python"


def test_list_json_is_the_array_of_runtimes_as_the_supervisor_gave_it(supervisor: FakeSupervisor) -> None:
    supervisor.answers[("GET", "/v1/runtimes")] = {"runtimes": [RUNTIME]}
    result = agents("list", "--workspace", "web", "--all", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [RUNTIME]
    assert supervisor.calls[0][2]["params"] == {
        "workspace_id": "web",
        "agent_id": "",
        "include_offline": "true",
    }


def test_list_through_a_pipe_is_plain_columns_with_whole_ids_and_a_local_time(
    supervisor: FakeSupervisor,
) -> None:
    supervisor.answers[("GET", "/v1/runtimes")] = {"runtimes": [RUNTIME, {**RUNTIME, "runtime_id": "rt-2",
                                                                          "last_activity_at": None}]}  # fmt: skip
    result = agents("list")
    assert result.exit_code == 0, result.output
    header, first, second = result.output.splitlines()
    assert header.split() == list(agents_cli.RUNTIME_COLUMNS)
    seen = datetime(2020, 1, 2, 3, 4, 5, 678000, tzinfo=UTC).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    assert first.split()[:10] == ["rt-0123456789ab", "web", "reviewer", "review", "codex", "active", "idle", "%3",
                                  "4242", "paused"]  # fmt: skip
    assert first.endswith(seen)
    assert second.split()[0] == "rt-2" and second.endswith("-")


def test_list_for_a_person_is_a_rich_table(
    supervisor: FakeSupervisor, monkeypatch: pytest.MonkeyPatch
) -> None:
    supervisor.answers[("GET", "/v1/runtimes")] = {"runtimes": [RUNTIME]}
    monkeypatch.setattr("kronii.launcher.cli.tables.to_a_person", lambda: True)
    monkeypatch.setattr("shutil.get_terminal_size", lambda: os.terminal_size((200, 50)))  # wide enough
    printed: list[Any] = []
    monkeypatch.setattr("rich.console.Console.print", lambda self, table: printed.append(table))
    assert agents("list").exit_code == 0
    (table,) = printed
    assert [column.header for column in table.columns] == list(agents_cli.RUNTIME_COLUMNS)
    assert table.row_count == 1


def test_list_says_so_when_nothing_is_registered(supervisor: FakeSupervisor) -> None:
    supervisor.answers[("GET", "/v1/runtimes")] = {"runtimes": []}
    assert agents("list").output == "no runtimes registered\n"


@pytest.mark.parametrize("result", ["failed", "timeout", "typed_not_submitted"])
def test_a_trigger_that_did_not_reach_the_agent_exits_1(supervisor: FakeSupervisor, result: str) -> None:
    supervisor.answers[("POST", "/v1/triggers")] = {"trigger_id": "t1", "result": result, "error_code": "X"}
    done = agents("trigger", "--workspace", "web", "--agent", "a", "go")
    assert done.exit_code == exits.FAILED
    assert done.output.startswith(f"t1: {result} (X)")


def test_a_deferred_trigger_says_until_when_in_local_time_and_exits_0(supervisor: FakeSupervisor) -> None:
    until = datetime.now(UTC) + timedelta(minutes=5)
    supervisor.answers[("POST", "/v1/triggers")] = {
        "trigger_id": "t2", "result": "deferred", "error_code": "RUNTIME_PAUSED",
        "deferred_until": until.isoformat().replace("+00:00", "Z"), "detail": "the runtime is paused",
    }  # fmt: skip
    done = agents("trigger", "--workspace", "web", "--agent", "a", "go")
    assert done.exit_code == 0
    assert done.output == (
        f"t2: deferred (RUNTIME_PAUSED) until {until.astimezone():%H:%M:%S}\n  the runtime is paused\n"
    )


def test_trigger_reads_the_prompt_from_standard_input_and_json_prints_the_outcome(
    supervisor: FakeSupervisor,
) -> None:
    outcome = {"trigger_id": "t3", "result": "delivered", "delivery_backend": "tmux"}
    supervisor.answers[("POST", "/v1/triggers")] = outcome
    done = agents(
        "trigger", "--workspace", "web", "--agent", "a", "--json", "-", stdin="line one\nline two\n"
    )
    assert done.exit_code == 0
    assert json.loads(done.output) == outcome
    sent = supervisor.calls[0][2]["json"]
    assert sent["prompt"] == "line one\nline two\n" and sent["trigger_id"].startswith("cli-")


def test_logs_refuses_a_count_out_of_range_with_its_usage(supervisor: FakeSupervisor) -> None:
    result = agents("logs", "rt-1", "-n", "0")
    assert result.exit_code == exits.USAGE
    assert (
        "Usage: kronii agents logs" in result.output and "0 is not in the range 1<=x<=2000" in result.output
    )
    assert supervisor.calls == []


def test_pause_and_resume_say_the_runtimes_state_or_print_it_as_json(supervisor: FakeSupervisor) -> None:
    supervisor.answers[("POST", "/v1/runtimes/rt-1/pause")] = {"runtime_id": "rt-1", "paused": True}
    supervisor.answers[("POST", "/v1/runtimes/rt-1/resume")] = {"runtime_id": "rt-1", "paused": False}
    assert agents("pause", "rt-1", "--reason", "review").output == "rt-1: paused\n"
    assert supervisor.calls[0][2]["json"] == {"reason": "review"}
    assert json.loads(agents("resume", "rt-1", "--json").output) == {"runtime_id": "rt-1", "paused": False}


def test_ack_takes_the_runtime_from_the_hooks_environment_and_ignores_codexs_payload(
    supervisor: FakeSupervisor,
) -> None:
    supervisor.answers[("POST", "/v1/acks")] = {"trigger_id": "t9"}
    done = agents(
        "ack", '{"type": "agent-turn-complete"}', "--unknown-flag", env={"KRONII_RUNTIME_ID": "rt-7"}
    )
    assert done.exit_code == 0, done.output
    assert done.output == "acknowledged t9\n"
    assert supervisor.calls[0][2]["json"] == {"runtime_id": "rt-7", "trigger_id": ""}
    assert supervisor.timeouts == [3.0]  # a hook never waits long on a stopped supervisor


def test_ack_and_heartbeat_without_a_runtime_are_usage_errors(supervisor: FakeSupervisor) -> None:
    for command in ("ack", "heartbeat"):
        done = agents(command, env={"KRONII_RUNTIME_ID": ""})
        assert done.exit_code == exits.USAGE
        assert f"Usage: kronii agents {command}" in done.output and "KRONII_RUNTIME_ID" in done.output
    assert supervisor.timeouts == []


def test_heartbeat_refuses_a_status_outside_its_choices(supervisor: FakeSupervisor) -> None:
    done = agents("heartbeat", "--runtime", "rt-1", "--status", "asleep")
    assert done.exit_code == exits.USAGE
    assert "'asleep' is not one of 'active', 'idle'" in done.output


def test_force_exits_1_when_the_trigger_still_failed(supervisor: FakeSupervisor) -> None:
    supervisor.answers[("POST", "/v1/triggers/t1/force")] = {"trigger_id": "t1", "result": "failed"}
    done = agents("force", "t1", "--reason", "human_override: now")
    assert done.exit_code == exits.FAILED and done.output == "t1: failed\n"
    assert agents("force", "t1").exit_code == exits.USAGE  # --reason is required


def test_unblock_says_whether_the_thread_was_blocked(supervisor: FakeSupervisor) -> None:
    supervisor.answers[("POST", "/v1/threads/unblock")] = {"was_blocked": False}
    assert agents("unblock", "--agent", "a", "--thread", "t").output == "the thread was not blocked\n"


def test_a_refusal_from_the_supervisor_is_its_sentence_and_exit_code(supervisor: FakeSupervisor) -> None:
    supervisor.answers[("GET", "/v1/runtimes/rt-9/logs")] = CommandError(
        "kronii: no runtime", exits.NOT_FOUND
    )
    done = agents("logs", "rt-9")
    assert isinstance(done.exception, CommandError) and done.exception.code == exits.NOT_FOUND


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, exits.USAGE), (422, exits.USAGE), (404, exits.NOT_FOUND), (403, exits.REFUSED),
     (429, exits.REFUSED), (503, exits.UNREACHABLE), (500, exits.FAILED)],
)  # fmt: skip
def test_http_refusals_map_to_the_shared_exit_codes(status: int, code: int) -> None:
    assert exits.exit_for_error(status) == code


def test_token_refuses_an_unknown_scope() -> None:
    done = agents("token", "--scope", "admin")
    assert done.exit_code == exits.USAGE and "'admin' is not one of" in done.output


def test_token_is_signed_with_the_local_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    from kronii.supervisor.core.tokens import verify_token

    monkeypatch.setenv("KRONII_SUPERVISOR_TOKEN_SECRET", "s" * 32)
    done = agents("token", "--subject", "hook", "--workspace", "web", "--scope", "read", "--ttl", "60")
    assert done.exit_code == 0, done.output
    claims = verify_token(("s" * 32).encode(), done.output.strip(), now=datetime.now(UTC).timestamp())
    assert claims.subject == "hook" and set(claims.scopes) == {"read"} and set(claims.workspaces) == {"web"}


def test_a_registered_runtimes_own_token_is_scoped_to_that_runtime_and_its_workspace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kronii.supervisor.core.tokens import verify_token

    monkeypatch.setenv("KRONII_SUPERVISOR_TOKEN_SECRET", "s" * 32)
    done = agents("token", "--runtime", "rt-7", "--workspace", "web")
    assert done.exit_code == 0, done.output
    claims = verify_token(("s" * 32).encode(), done.output.strip(), now=datetime.now(UTC).timestamp())
    assert (claims.subject, set(claims.scopes), set(claims.workspaces)) == (
        "runtime:rt-7",
        {"runtime:rt-7"},
        {"web"},
    )
    refused = agents("token", "--runtime", "rt-7")
    assert refused.exit_code == exits.USAGE and "one --workspace" in refused.output


def test_choices_and_kinds_complete_in_the_shell() -> None:
    assert completions(["heartbeat", "--status"], "i") == ["idle"]
    assert completions(["token", "--scope"], "") == ["trigger", "operate", "read"]
    assert completions(["spawn", "--kind"], "c") == ["codex", "claude"]
    assert "trigger" in completions([], "tr")


def test_local_time_is_the_clock_today_and_the_date_otherwise() -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    assert agents_cli.local_time(now.isoformat()) == now.astimezone().strftime("%H:%M:%S")
    assert agents_cli.local_time("2020-01-02T03:04:05Z") == datetime(
        2020, 1, 2, 3, 4, 5, tzinfo=UTC
    ).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    assert agents_cli.local_time("soon") == "soon"


def test_the_module_imports_no_network_client_or_table_library() -> None:
    probe = "import json, sys, kronii.supervisor.cli.agents; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    )
    assert not {"httpx", "grpc", "redis", "psycopg", "rich", "pydantic"} & set(loaded)


def test_main_runs_the_command_as_kronii_does(
    supervisor: FakeSupervisor, capsys: pytest.CaptureFixture[str]
) -> None:
    supervisor.answers[("GET", "/v1/runtimes")] = CommandError("kronii: the supervisor is not reachable", 5)
    assert agents_cli.main(["agents", "list"]) == exits.UNREACHABLE
    assert capsys.readouterr().err == "kronii: the supervisor is not reachable\n"
    assert agents_cli.main(["list", "--bogus"]) == exits.USAGE
    assert "No such option '--bogus'" in capsys.readouterr().err


def test_the_group_is_a_click_group_named_agents() -> None:
    assert isinstance(agents_cli.agents_command, click.Group) and agents_cli.agents_command.name == "agents"
