"""The plain `kronii control stop`, fast: one line to the broker's stop socket and one line back, with
the standard library only (os, socket, sys), so the whole command answers in well under 100 ms.

The socket is found where the broker puts it (kronii.runtime.rendezvous.broker_stop_socket_path):
``$XDG_RUNTIME_DIR/kronii/broker-stop.sock``, else ``<data dir>/run/broker-stop.sock``, the data
directory resolved as the settings resolve it (KRONII_DATA_DIR, else the config file's top-level
``data_dir``, else ``$XDG_DATA_HOME/kronii``). tests/unit/broker/test_broker_quick_stop.py keeps the
two in step.

``stop()`` answers None when it cannot settle the stop itself (no stop socket, nobody listening on it, a
config file it cannot read simply): the full command then runs, which finds the broker over HTTP or
says, in its own sentence and exit code, that none runs."""

from __future__ import annotations

import os
import socket
import sys

TYPE_CHECKING = False  # typing itself is not imported: it costs more than the whole stop
if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["STOP_SOCKET_NAME", "stop", "stop_socket_path"]

STOP_SOCKET_NAME = "broker-stop.sock"
TIMEOUT_S = 5.0
# kronii.launcher.cli.exits, not imported: it pulls in kronii.foundation.errors.
_OK, _FAILED, _REFUSED, _UNREACHABLE = 0, 1, 4, 5
_STOPPED = "STOP_NOW: the agent is stopped, its lease revoked and its queued input dropped; control is yours"


def _config_data_dir(environ: Mapping[str, str]) -> str | None:
    """The config file's top-level data_dir; "" when the file has none; None when it cannot be read
    here (the full command reads it and says what is wrong)."""
    path = environ.get("KRONII_CONFIG", "")
    if path:
        path = os.path.expanduser(path)
    else:
        base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        path = os.path.join(base, "kronii", "config.toml")
    if not os.path.exists(path):
        return ""
    try:
        import tomllib

        with open(path, "rb") as handle:
            value = tomllib.load(handle).get("data_dir", "")
    except (OSError, ValueError):
        return None
    if isinstance(value, dict):
        return ""  # a table of that name is not the shared setting
    return value if isinstance(value, str) else None


def _data_dir(environ: Mapping[str, str]) -> str | None:
    if "KRONII_DATA_DIR" in environ:
        value: str | None = environ["KRONII_DATA_DIR"]  # the environment wins, even when empty
    else:
        value = _config_data_dir(environ)
    if value is None:
        return None
    if value:
        return value
    xdg = environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(xdg, "kronii")


def stop_socket_path(environ: Mapping[str, str] | None = None) -> str | None:
    """Where the broker's stop socket is, or None when only the full settings can tell."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime:
        return os.path.join(runtime, "kronii", STOP_SOCKET_NAME)
    data_dir = _data_dir(env)
    return None if data_dir is None else os.path.join(data_dir, "run", STOP_SOCKET_NAME)


def _ask(path: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(TIMEOUT_S)
        client.connect(path)
        try:
            client.sendall(b"STOP\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # it answered (a refusal) and closed before reading: the answer is still there to read
        answer = b""
        while not answer.endswith(b"\n") and len(answer) < 4096:
            try:
                chunk = client.recv(512)
            except ConnectionResetError:
                break  # closed with our line unread, after its answer
            if not chunk:
                break
            answer += chunk
    return answer.decode("utf-8", "replace").strip()


def stop(environ: Mapping[str, str] | None = None) -> int | None:
    """STOP_NOW through the stop socket: the exit code, or None to run the full command instead."""
    path = stop_socket_path(environ)
    if path is None:
        return None
    try:
        answer = _ask(path)
    except (FileNotFoundError, ConnectionRefusedError):
        return None  # no broker here, or one that left its socket behind: the full command says
    except TimeoutError:
        return _say(
            f"kronii: the broker's stop socket {path} did not answer within {TIMEOUT_S:g} s", _UNREACHABLE
        )
    except OSError as error:
        reason = error.strerror or str(error) or type(error).__name__
        return _say(f"kronii: the broker's stop socket {path} is not reachable ({reason})", _UNREACHABLE)
    if answer.startswith("stopped epoch "):
        epoch = answer.removeprefix("stopped epoch ")
        print(f"{_STOPPED} (epoch {epoch})")
        return _OK
    if answer.startswith("error: refused"):
        return _say(f"kronii: control stop refused: {answer.removeprefix('error: refused: ')}", _REFUSED)
    shown = answer.removeprefix("error: ") or "nothing"
    return _say(f"kronii: control stop: the broker's stop socket answered: {shown}", _FAILED)


def _say(sentence: str, code: int) -> int:
    print(sentence, file=sys.stderr)
    return code
