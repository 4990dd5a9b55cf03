"""`kronii control` and `kronii broker` on click, against a small fake of the broker's HTTP API served on
a Unix socket and on loopback TCP: the person's calls (grant, renew, wait) go only through the socket
with the TTY binding; stop and interrupt fall back to TCP; refusals and a silent broker become the
shared exit codes with the broker's sentence; local times for a person and UTC in --json; the agents'
keys (add, list, revoke, keygen) on a stand-in registry; the audit and the xdotool shadow; completion;
and modules that import nothing heavy."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import socket
import socketserver
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.shell_completion import BashComplete
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from kronii.broker.cli import broker as broker_cli
from kronii.broker.cli import control as control_cli
from kronii.edge.client_sessions import ClientRecord
from kronii.launcher.cli import exits
from kronii.launcher.cli.agent_clients import AgentClients
from kronii.launcher.cli.exits import CommandError

AGENT = "codex-main"
STATE_KEYS = {
    "session_id", "interactive", "interactive_reason", "control_mode", "holder", "lease_expiry", "window",
    "user_intent", "agent_status", "epoch", "user_holds_until",
}  # fmt: skip


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeBroker:
    """One session's state as the broker's HTTP API shows it (proto JSON: 64-bit numbers as strings,
    unset timestamps absent); ``refuse`` answers a path with a status and body instead."""

    state: dict[str, Any] = field(
        default_factory=lambda: {
            "session_id": "desk-1",
            "interactive": True,
            "interactive_reason": "viewer",
            "control_mode": "USER",
            "holder": "",
            "window": "0",
            "user_intent": "WAIT",
            "agent_status": "IDLE",
            "epoch": "3",
        }
    )
    seen: list[Seen] = field(default_factory=list)
    refuse: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        if path in self.refuse:
            return self.refuse[path]
        if method == "GET" and path == "/sessions/current":
            return 200, self.state
        if path == "/sessions/current/control/grant":
            expiry = datetime.now(UTC) + timedelta(seconds=body.get("lease_seconds") or 30)
            self.state.update(control_mode="AGENT", holder=body["agent"], window=str(body["window"]),
                              lease_expiry=expiry.isoformat().replace("+00:00", "Z"), agent_status="RUNNING",
                              epoch=str(int(self.state["epoch"]) + 1))  # fmt: skip
            return 200, self.state
        if path == "/sessions/current/control/extend":
            if self.state["control_mode"] != "AGENT":
                return 409, {"detail": "this agent does not hold a live lease on this desktop", "field": None}
            expiry = datetime.now(UTC) + timedelta(seconds=body.get("lease_seconds") or 30)
            self.state["lease_expiry"] = expiry.isoformat().replace("+00:00", "Z")
            return 200, self.state
        if path == "/sessions/current/user_intent":
            self.state["user_intent"] = body["intent"]
            if body["intent"] == "STOP_NOW":
                self.state.update(control_mode="USER", holder="", agent_status="STOPPED")
                self.state.pop("lease_expiry", None)
            return 200, self.state
        return 404, {"detail": "no such route"}


def _handler(fake: FakeBroker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            fake.seen.append(
                Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            status, answer = fake.answer(self.command, self.path, body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _serve

        def log_message(self, *args: Any) -> None:  # a Unix peer has no address to log
            pass

    return Handler


class _UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


@dataclass
class Doors:
    """The fake broker behind both doors: ``unix`` its socket path, ``url`` its TCP address."""

    unix: FakeBroker
    tcp: FakeBroker
    socket: Path
    url: str

    def args(self, *rest: str) -> list[str]:
        return ["--socket", str(self.socket), "--url", self.url, *rest]


@pytest.fixture
def short_dir() -> Iterator[Path]:
    # A Unix socket's path must stay short (108 bytes): pytest's tmp_path can be longer.
    folder = Path(tempfile.mkdtemp(prefix="kb"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def doors(short_dir: Path) -> Iterator[Doors]:
    unix, tcp = FakeBroker(), FakeBroker()
    path = short_dir / "broker.sock"
    over_tcp = ThreadingHTTPServer(("127.0.0.1", 0), _handler(tcp))
    servers: list[socketserver.BaseServer] = [_UnixHTTPServer(str(path), _handler(unix)), over_tcp]
    for server in servers:
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    port = over_tcp.server_address[1]
    try:
        yield Doors(unix, tcp, path, f"http://127.0.0.1:{port}")
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


@pytest.fixture
def at_a_terminal(monkeypatch: pytest.MonkeyPatch) -> str:
    """Standard input is the terminal /dev/pts/7 (the name is only compared, never opened)."""
    monkeypatch.setattr("kronii.broker.cli.http.os.isatty", lambda fd: fd == 0)
    monkeypatch.setattr("kronii.broker.cli.http.os.ttyname", lambda fd: "/dev/pts/7")
    return "/dev/pts/7"


def stale_socket(folder: Path) -> Path:
    """A socket file nothing listens on any more: connecting is refused."""
    path = folder / "gone.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.close()
    return path


def control(*args: str) -> Result:
    return CliRunner().invoke(control_cli.control_command, list(args), prog_name="kronii control")


def broker(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(broker_cli.broker_command, list(args), prog_name="kronii broker", env=env)


def completions(command: Any, prog: str, args: list[str], incomplete: str) -> list[str]:
    return [item.value for item in BashComplete(command, {}, prog, "_X").get_completions(args, incomplete)]


def local(stamp: str) -> str:
    at = datetime.fromisoformat(stamp).astimezone()
    today = at.date() == datetime.now().astimezone().date()
    return at.strftime("%H:%M:%S" if today else "%Y-%m-%d %H:%M:%S")


# ---- kronii control ------------------------------------------------------------------------------


def test_grant_goes_through_the_socket_with_the_terminal_and_the_session(
    doors: Doors, at_a_terminal: str
) -> None:
    result = control(*doors.args("grant", AGENT, "--seconds", "45", "--window", "0x1a00007"))

    assert result.exit_code == 0, result.output
    assert doors.tcp.seen == []
    call = doors.unix.seen[-1]
    assert (call.method, call.path) == ("POST", "/sessions/current/control/grant")
    assert call.body == {"agent": AGENT, "lease_seconds": 45, "window": 0x1A00007}
    assert call.headers["kronii-tty"] == at_a_terminal
    assert call.headers["kronii-session"] == str(os.getsid(0))
    until = local(doors.unix.state["lease_expiry"])
    assert result.output.strip() == f"granted {AGENT} the desktop until {until} (window 0x1a00007)"


def test_grant_without_a_terminal_sends_an_empty_tty_and_the_brokers_default_lease(
    doors: Doors, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kronii.broker.cli.http.os.isatty", lambda fd: False)
    result = control(*doors.args("grant", AGENT, "--json"))

    assert result.exit_code == 0, result.output
    call = doors.unix.seen[-1]
    assert call.headers["kronii-tty"] == "" and call.headers["kronii-session"] == str(os.getsid(0))
    assert call.body == {"agent": AGENT, "lease_seconds": 0, "window": 0}
    answer = json.loads(result.output)
    assert set(answer) == STATE_KEYS
    assert answer["control_mode"] == "AGENT" and answer["holder"] == AGENT and answer["epoch"] == 4


def test_grant_finds_the_default_socket_in_the_runtime_directory(
    doors: Doors, short_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (short_dir / "kronii").mkdir()
    doors.socket.rename(short_dir / "kronii" / "broker.sock")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(short_dir))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(short_dir / "no-config"))

    result = control("grant", AGENT)

    assert result.exit_code == 0, result.output
    assert doors.unix.seen[-1].path == "/sessions/current/control/grant"


def test_grant_for_the_focused_window_names_the_window_focused_now(
    doors: Doors, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(control_cli, "focused_window", lambda display: 0x2C00001)
    monkeypatch.setattr(
        "kronii.broker.cli.http.Broker.settings", lambda self: type("S", (), {"display": ":9"})()
    )
    result = control(*doors.args("grant", AGENT, "--window", "focused"))

    assert result.exit_code == 0, result.output
    assert doors.unix.seen[-1].body["window"] == 0x2C00001


def test_a_window_that_is_neither_an_id_nor_focused_is_a_usage_error_before_any_call(doors: Doors) -> None:
    result = control(*doors.args("grant", AGENT, "--window", "the editor"))

    assert result.exit_code == exits.USAGE
    assert "is not a window id (0x1a00007 or decimal) or `focused`" in result.output
    assert doors.unix.seen == [] and doors.tcp.seen == []


def test_grant_never_goes_over_tcp_when_there_is_no_socket(
    doors: Doors, short_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = short_dir / "none.sock"
    code = control_cli.main(["control", "--socket", str(missing), "--url", doors.url, "grant", AGENT])

    assert code == exits.UNREACHABLE
    assert doors.tcp.seen == []
    assert capsys.readouterr().err.strip() == (
        f"kronii: the broker is not reachable (no socket at {missing}): start it with `kronii up`; "
        "the desktop "
        "user's grant goes only through that socket"
    )


def test_a_refusal_is_exit_4_with_the_brokers_sentence(
    doors: Doors, capsys: pytest.CaptureFixture[str]
) -> None:
    sentence = "only the desktop user can do this, at the desktop"
    doors.unix.refuse["/sessions/current/control/grant"] = (403, {"detail": sentence, "field": None})

    assert control_cli.main(doors.args("grant", AGENT)) == exits.REFUSED
    assert capsys.readouterr().err.strip() == f"kronii: control grant refused: {sentence}"


def test_a_state_that_does_not_allow_it_is_a_refusal_exit_4_with_the_brokers_sentence(
    doors: Doors, capsys: pytest.CaptureFixture[str]
) -> None:
    sentence = "no person is attached to this desktop session, so there is nothing to grant"
    doors.unix.refuse["/sessions/current/control/grant"] = (
        409,
        {"code": "failed_precondition", "detail": sentence, "field": None},
    )

    assert control_cli.main(doors.args("grant", AGENT)) == exits.REFUSED
    assert capsys.readouterr().err.strip() == f"kronii: control grant refused: {sentence}"


def test_a_socket_nothing_answers_on_is_exit_5_for_the_persons_calls(
    short_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = stale_socket(short_dir)

    assert control_cli.main(["--socket", str(gone), "wait"]) == exits.UNREACHABLE
    assert capsys.readouterr().err.strip() == (
        f"kronii: the broker is not reachable at its socket {gone} (Connection refused): "
        "start it with `kronii up`"
    )


def test_stop_falls_back_to_tcp_without_the_persons_headers(doors: Doors, short_dir: Path) -> None:
    doors.unix.state.update(control_mode="AGENT", holder=AGENT, agent_status="RUNNING")
    result = control("--socket", str(short_dir / "none.sock"), "--url", doors.url, "stop")

    assert result.exit_code == 0, result.output
    call = doors.tcp.seen[-1]
    assert (call.method, call.path, call.body) == (
        "POST",
        "/sessions/current/user_intent",
        {"intent": "STOP_NOW"},
    )
    assert "kronii-tty" not in call.headers
    assert result.output.splitlines() == [
        control_cli._SAID["STOP_NOW"],
        "control      you (the desktop user)",
    ]


def test_stop_falls_back_to_tcp_from_a_socket_a_stopped_broker_left_behind(
    doors: Doors, short_dir: Path
) -> None:
    result = control("--socket", str(stale_socket(short_dir)), "--url", doors.url, "stop", "--json")

    assert result.exit_code == 0, result.output
    assert doors.tcp.seen[-1].body == {"intent": "STOP_NOW"}
    assert json.loads(result.output)["agent_status"] == "STOPPED"


def test_interrupt_uses_the_socket_when_it_is_there(doors: Doors) -> None:
    result = control(*doors.args("interrupt"))

    assert result.exit_code == 0, result.output
    assert doors.tcp.seen == []
    assert doors.unix.seen[-1].body == {"intent": "SAFE_INTERRUPT"}


def test_stop_with_nothing_answering_anywhere_is_exit_5(
    short_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    closed.close()

    assert (
        control_cli.main(["--socket", str(short_dir / "none.sock"), "--url", url, "stop"])
        == exits.UNREACHABLE
    )
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"kronii: the broker is not reachable at {url} (") and error.endswith(
        "start it with `kronii up`"
    )


def test_wait_is_the_persons_call_through_the_socket(doors: Doors, at_a_terminal: str) -> None:
    result = control(*doors.args("wait", "--json"))

    assert result.exit_code == 0, result.output
    call = doors.unix.seen[-1]
    assert call.body == {"intent": "WAIT"} and call.headers["kronii-tty"] == at_a_terminal
    assert json.loads(result.output)["user_intent"] == "WAIT"


def test_renew_extends_the_holders_lease_through_the_socket_without_a_new_grant(doors: Doors) -> None:
    doors.unix.state.update(control_mode="AGENT", holder=AGENT, window="26214407", agent_status="RUNNING",
                            lease_expiry="2030-01-02T03:04:05Z")  # fmt: skip
    result = control(*doors.args("renew", "--seconds", "60"))

    assert result.exit_code == 0, result.output
    assert [(c.method, c.path) for c in doors.unix.seen] == [("POST", "/sessions/current/control/extend")]
    assert doors.unix.seen[-1].body == {"lease_seconds": 60}
    assert doors.unix.seen[-1].headers["kronii-session"]
    assert doors.unix.state["epoch"] == "3"  # the same grant
    assert result.output.startswith(f"renewed {AGENT} the desktop until ")


def test_renew_with_no_agent_holding_the_desktop_is_a_refusal_exit_4_with_the_brokers_sentence(
    doors: Doors, capsys: pytest.CaptureFixture[str]
) -> None:
    assert control_cli.main(doors.args("renew")) == exits.REFUSED
    assert "does not hold a live lease" in capsys.readouterr().err


def test_status_for_a_person_says_who_holds_control_until_when_in_local_time(doors: Doors) -> None:
    soon = (datetime.now(UTC) + timedelta(minutes=2)).replace(microsecond=0)
    doors.tcp.state.update(control_mode="AGENT", holder=AGENT, window="26214407", agent_status="RUNNING",
                           lease_expiry=soon.isoformat().replace("+00:00", "Z"), epoch="7")  # fmt: skip
    result = control("--socket", "none.sock", "--url", doors.url, "status")

    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"control      {AGENT} (an agent), until {soon.astimezone():%H:%M:%S}, window 0x1900007",
        f"intent       {control_cli._SAID['WAIT']}",
        "agent        RUNNING",
        "interactive  yes: a viewer is attached",
        "session      desk-1 (epoch 7)",
    ]


def test_status_json_is_the_seeds_state_model_in_utc_with_every_field(doors: Doors) -> None:
    doors.unix.state.update(control_mode="AGENT", holder=AGENT, lease_expiry="2030-01-02T03:04:05.250Z",
                            user_holds_until="2030-01-02T04:04:05+01:00", window="26214407")  # fmt: skip
    result = control(*doors.args("status", "--json"))

    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "session_id": "desk-1", "interactive": True, "interactive_reason": "viewer", "control_mode": "AGENT",
        "holder": AGENT, "lease_expiry": "2030-01-02T03:04:05.250Z", "window": 26214407,
        "user_intent": "WAIT",
        "agent_status": "IDLE", "epoch": 3, "user_holds_until": "2030-01-02T03:04:05.000Z",
    }  # fmt: skip
    person = control(*doors.args("status")).output.splitlines()[0]
    assert (
        person
        == f"control      {AGENT} (an agent), until {local('2030-01-02T03:04:05.250Z')}, window 0x1900007"
    )


def test_status_of_a_session_nobody_watches_says_so(doors: Doors) -> None:
    doors.unix.state.update(interactive=False, interactive_reason="")
    lines = control(*doors.args("status")).output.splitlines()

    assert lines[0] == "control      you (the desktop user)"
    assert lines[3] == "interactive  no: nobody is attached"


def test_watch_prints_each_change_once(doors: Doors, monkeypatch: pytest.MonkeyPatch) -> None:
    naps: list[float] = []

    def nap(seconds: float) -> None:
        naps.append(seconds)
        if len(naps) == 1:
            doors.unix.state.update(control_mode="AGENT", holder=AGENT, lease_expiry="2030-01-02T03:04:05Z")
        if len(naps) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr("kronii.broker.cli.control.time.sleep", nap)
    result = control(*doors.args("status", "--watch", "--json"))

    changes = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(c["control_mode"], c["holder"]) for c in changes] == [("USER", ""), ("AGENT", AGENT)]
    assert all(c["at"].endswith("Z") for c in changes)
    assert len(doors.unix.seen) == 3 and naps == [control_cli.POLL_SECS] * 3


def test_usage_errors_carry_the_subcommands_usage() -> None:
    result = control("grant", AGENT, "--seconds", "0")

    assert result.exit_code == exits.USAGE
    assert "Usage: kronii control grant [OPTIONS] AGENT" in result.output


def test_the_verbs_and_the_focused_window_complete_in_the_shell() -> None:
    from kronii.launcher.cli.main import cli

    assert completions(control_cli.control_command, "kronii control", [], "") == [
        "grant", "interrupt", "renew", "status", "stop", "wait",
    ]  # fmt: skip
    assert completions(control_cli.control_command, "kronii control", ["grant", AGENT, "--window"], "f") == [
        "focused"
    ]
    # Only the commands starting with what was typed load: another package's command cannot get in the way.
    assert completions(cli, "kronii", [], "con") == ["config", "console", "control"]
    assert completions(cli, "kronii", [], "bro") == ["broker"]
    assert completions(broker_cli.broker_command, "kronii broker", ["clients"], "") == [
        "add", "keygen", "list", "revoke",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "module", ["kronii.broker.cli.control", "kronii.broker.cli.broker", "kronii.launcher.cli.agent_clients"]
)
def test_the_modules_import_no_network_client_database_display_or_settings(module: str) -> None:
    probe = f"import json, sys, {module}; print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    )
    heavy = {"grpc", "httpx", "redis", "psycopg", "sqlalchemy", "rich", "cryptography", "Xlib", "pydantic"}
    assert not heavy & set(loaded)


def test_python_m_runs_either_command(short_dir: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(short_dir)}
    ran = subprocess.run(
        [sys.executable, "-m", "kronii.broker.cli", "control", "--socket", str(short_dir / "x.sock"),
         "grant", "a"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert ran.returncode == exits.UNREACHABLE and "no socket at" in ran.stderr
    helped = subprocess.run(
        [sys.executable, "-m", "kronii.broker.cli", "broker", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert helped.returncode == 0 and "shadow-dir" in helped.stdout


# ---- kronii broker -------------------------------------------------------------------------------


@dataclass
class FakeRegistry:
    """The part of ClientSessions the commands use, in memory."""

    records: dict[str, ClientRecord] = field(default_factory=dict)

    async def register_client(self, client_id: str, key: bytes, capabilities: Any = None) -> ClientRecord:
        if "/" in client_id:
            raise ValueError("a client id is 1-64 characters of letters, digits and . _ : @ -")
        record = ClientRecord(client_id, key, ("AGENT",), datetime(2021, 6, 7, 8, 9, 10, tzinfo=UTC), None)
        self.records[client_id] = record
        return record

    async def clients(self) -> list[ClientRecord]:
        return sorted(self.records.values(), key=lambda record: record.client_id)

    async def revoke_client(self, client_id: str) -> bool:
        record = self.records.get(client_id)
        if record is None or record.revoked_at is not None:
            return False
        self.records[client_id] = ClientRecord(
            client_id,
            record.public_key,
            record.capabilities,
            record.created_at,
            datetime(2022, 1, 1, tzinfo=UTC),
        )
        return True


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> FakeRegistry:
    fake = FakeRegistry()

    def run(self: AgentClients, action: Callable[[Any], Coroutine[Any, Any, Any]]) -> Any:
        assert self is broker_cli.BROKER_CLIENTS  # the broker's registry, not capture's
        return asyncio.run(action(fake))

    monkeypatch.setattr(AgentClients, "run", run)
    return fake


def openssh_public_key(tmp_path: Path) -> tuple[Path, bytes]:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    public = Ed25519PrivateKey.generate().public_key()
    path = tmp_path / "agent.pub"
    path.write_bytes(public.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH))
    return path, public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def test_clients_add_list_and_revoke_reach_the_brokers_registry(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    key_file, raw = openssh_public_key(tmp_path)

    added = broker("clients", "add", AGENT, "--key", str(key_file))
    assert added.exit_code == 0, added.output
    assert added.output.strip() == f"registered {AGENT}: AGENT"
    assert registry.records[AGENT].public_key == raw
    listed = json.loads(broker("clients", "list", "--json").output)
    assert listed == [{
        "client_id": AGENT, "public_key": base64.b64encode(raw).decode(), "capabilities": ["AGENT"],
        "created_at": "2021-06-07T08:09:10+00:00", "revoked_at": None,
    }]  # fmt: skip
    assert broker("clients", "list").output.startswith(f"{AGENT:<24} active")
    assert broker("clients", "revoke", AGENT).output.strip() == f"revoked {AGENT}; its sessions have ended"
    again = broker("clients", "revoke", AGENT)
    assert isinstance(again.exception, CommandError) and again.exception.code == exits.NOT_FOUND


def test_clients_add_refuses_an_unreadable_key_and_a_bad_client_id_as_usage(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    missing = broker("clients", "add", AGENT, "--key", str(tmp_path / "none.pub"))
    assert isinstance(missing.exception, CommandError) and missing.exception.code == exits.USAGE
    assert (
        missing.exception.message
        == "kronii: broker clients add: cannot read the key file: No such file or directory"
    )
    garbage = tmp_path / "garbage.pub"
    garbage.write_text("not a key")
    refused = broker("clients", "add", AGENT, "--key", str(garbage))
    assert (
        isinstance(refused.exception, CommandError)
        and "not an Ed25519 public key" in refused.exception.message
    )
    key_file, _ = openssh_public_key(tmp_path)
    bad_id = broker("clients", "add", "a/b", "--public-key", str(key_file))
    assert isinstance(bad_id.exception, CommandError) and bad_id.exception.code == exits.USAGE
    assert registry.records == {}


def test_the_brokers_registry_is_its_own_table_with_the_one_agent_capability() -> None:
    clients = broker_cli._broker_registry(object(), object())  # type: ignore[arg-type]
    assert clients._table.name == "broker_clients"
    assert clients._default == ("AGENT",)


def test_keygen_writes_a_private_key_only_its_owner_reads_where_the_shim_looks_and_registers_it(
    registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kronii.broker.cli import xdotool_shim

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("KRONII_BROKER_KEY_FILE", raising=False)
    result = broker("clients", "keygen", AGENT, "--json")

    assert result.exit_code == 0, result.output
    path = tmp_path / "kronii" / "broker" / f"{AGENT}.key"
    assert json.loads(result.output)["key_file"] == str(path) == str(xdotool_shim._key_file(AGENT))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert registry.records[AGENT].public_key == public
    assert sorted(p.name for p in path.parent.iterdir()) == [f"{AGENT}.key"]


def test_keygen_keeps_an_existing_key_unless_forced(
    registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_file = tmp_path / "mine.key"
    key_file.write_text("the old key")

    kept = broker("clients", "keygen", AGENT, "--key-file", str(key_file))
    assert isinstance(kept.exception, CommandError) and kept.exception.code == exits.FAILED
    assert key_file.read_text() == "the old key" and registry.records == {}
    replaced = broker("clients", "keygen", AGENT, "--key-file", str(key_file), "--force")
    assert replaced.exit_code == 0, replaced.output
    assert key_file.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")


def test_keygen_leaves_no_key_file_when_the_registration_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(self: AgentClients, action: Any) -> Any:
        raise CommandError("kronii: broker clients: the database or Redis did not answer", exits.UNREACHABLE)

    monkeypatch.setattr(AgentClients, "run", unreachable)
    result = broker("clients", "keygen", AGENT, "--key-file", str(tmp_path / "keys" / "a.key"))

    assert isinstance(result.exception, CommandError) and result.exception.code == exits.UNREACHABLE
    assert list((tmp_path / "keys").iterdir()) == []


def test_audit_prints_the_document_or_writes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("kronii.broker.cli.compat.audit_markdown", lambda: "# Automation\n\n| Tool |\n")

    assert broker("audit").stdout == "# Automation\n\n| Tool |\n"
    target = tmp_path / "AUTOMATION_COMPAT.md"
    written = broker("audit", "--write", str(target))
    assert written.exit_code == 0 and written.stdout == ""
    assert target.read_text() == "# Automation\n\n| Tool |\n"


def test_shadow_dir_writes_the_xdotool_shadow_for_this_python_and_prints_only_its_directory(
    tmp_path: Path,
) -> None:
    env = {"KRONII_DATA_DIR": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    result = broker("shadow-dir", env=env)

    assert result.exit_code == 0, result.output
    directory = Path(result.stdout.strip())
    assert directory == tmp_path / "data" / "broker" / "shadow"
    script = directory / "xdotool"
    assert os.access(script, os.X_OK)
    assert "kronii.broker.cli.xdotool_shim" in script.read_text() and sys.executable in script.read_text()
