"""`xdotool`, shadowed on PATH: automation that calls xdotool keeps working, but its input goes
through the input broker under the agent's lease instead of straight into the X server.

Input verbs (key, type, click, mousemove, mousemove_relative, sleep between them) become broker
input actions; read-only verbs (getactivewindow, search, getmouselocation, ...) run the real
xdotool found later on PATH; verbs that would move focus or change windows are refused, as are
keydown/keyup/mousedown/mouseup (the broker injects whole actions only). A chain is read in full
before anything is sent, so a usage error sends nothing. It then runs as steps (xdotool_steps): the
broker's safe point before every action, and a long `type` in pieces, so SAFE_INTERRUPT and STOP_NOW
end it at the next action with nothing more sent.

Exit codes: 0 done; 1 dropped, stopped or refused (the sentence on stderr); 2 usage; 3 paused at a
safe point (the desktop user's SAFE_INTERRUPT: run it again after a new grant); 5 broker unreachable.
Identity: KRONII_BROKER_CLIENT_ID, KRONII_BROKER_KEY_FILE (default
$XDG_CONFIG_HOME/kronii/broker/<client id>.key), KRONII_BROKER_URL, KRONII_BROKER_SESSION. The
session token is cached (0600) under $XDG_RUNTIME_DIR/kronii, else the config directory, until it
expires.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kronii.agents.broker_client import (
    BAD_KEY,
    DEFAULT_URL,
    UNREACHABLE,
    BrokerClient,
    BrokerError,
)
from kronii.broker.cli import xdotool_chain as chain
from kronii.broker.cli.xdotool_chain import UsageError
from kronii.broker.cli.xdotool_steps import DROP_SENTENCES, EXIT_PAUSED, EXIT_REFUSED, StepsRunner

__all__ = [
    "DROP_SENTENCES",
    "EXIT_OK",
    "EXIT_PAUSED",
    "EXIT_REFUSED",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "main",
    "real_xdotool",
    "signed_in_client",
    "token_cache_path",
    "write_shadow_script",
]

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_UNREACHABLE = 5
SHIM_MARKER = b"kronii.broker.cli.xdotool_shim"


def _say(sentence: str) -> None:
    print(f"kronii broker: {sentence}", file=sys.stderr)


def real_xdotool(path_value: str | None = None) -> str | None:
    """The first xdotool on PATH that is not this shim (the shadow directory is skipped, and so is
    any copy of the shim wherever it lies)."""
    shadow = os.environ.get("KRONII_SHADOW_DIR", "")
    shadow_real = os.path.realpath(shadow) if shadow else ""
    for directory in (path_value if path_value is not None else os.environ.get("PATH", "")).split(os.pathsep):
        if not directory or (shadow_real and os.path.realpath(directory) == shadow_real):
            continue
        candidate = os.path.join(directory, "xdotool")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK) and not _is_shim(candidate):
            return candidate
    return None


def _is_shim(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            return SHIM_MARKER in handle.read(4096)
    except OSError:
        return False


def _pass_through(argv: Sequence[str]) -> int:
    real = real_xdotool()
    if real is None:
        _say("the real xdotool is not installed (no other xdotool on PATH after the kronii shadow)")
        return EXIT_REFUSED
    os.execv(real, [real, *argv])  # noqa: S606 - the user's own xdotool, with the user's own arguments
    return EXIT_OK  # not reached


def _pointer() -> tuple[int, int]:
    """Where the pointer is now, asked of the real xdotool (reading it injects nothing)."""
    real = real_xdotool()
    if real is None:
        raise UsageError(
            "cannot tell where the pointer is without the real xdotool: use `mousemove X Y click N`"
        )
    output = subprocess.run([real, "getmouselocation", "--shell"], capture_output=True, text=True, timeout=5)
    values = dict(line.split("=", 1) for line in output.stdout.splitlines() if "=" in line)
    try:
        return int(values["X"]), int(values["Y"])
    except (KeyError, ValueError):
        raise UsageError("the real xdotool did not say where the pointer is") from None


def _config_dir() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "kronii" / "broker"


def _key_file(client_id: str) -> Path:
    return Path(os.environ.get("KRONII_BROKER_KEY_FILE") or _config_dir() / f"{client_id}.key")


def token_cache_path(client_id: str) -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    directory = Path(runtime) / "kronii" if runtime else _config_dir()
    safe_id = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in client_id)
    return directory / f"broker-token-{safe_id}.json"


def _cached_token(path: Path, url: str, client_id: str) -> str:
    """The cached token for this broker and client, or "" when there is none still good for a minute."""
    try:
        info = path.stat()
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            return ""  # not ours alone: a token anyone else could have written or read is not used
        cached = json.loads(path.read_text())
        expires = datetime.fromisoformat(str(cached["expires_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if expires.tzinfo is None:
        expires = expires.replace(tzinfo=UTC)
    if cached.get("url") != url or cached.get("client_id") != client_id:
        return ""
    if expires - datetime.now(UTC) < timedelta(minutes=1):
        return ""
    return str(cached.get("token") or "")


def _store_token(path: Path, url: str, client_id: str, token: str, expires_at: str) -> None:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        scratch = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as handle:
            json.dump({"url": url, "client_id": client_id, "token": token, "expires_at": expires_at}, handle)
        os.replace(scratch, path)
    except OSError:
        pass  # no cache: the next command signs in again, which is slower but correct


def signed_in_client(url: str, session: str, client_id: str, *, fresh: bool) -> BrokerClient:
    """A client carrying a session token: the cached one, or a new sign-in with the agent's key."""
    client = BrokerClient(url, session=session)
    cache = token_cache_path(client_id)
    token = "" if fresh else _cached_token(cache, url, client_id)
    if token:
        client.use_token(token, client_id)
        return client
    signed = client.sign_in(client_id, _key_file(client_id))
    if signed.expires_at:
        _store_token(cache, url, client_id, signed.token, signed.expires_at)
    return client


def _send(plan: Sequence[chain.Planned]) -> int:
    client_id = os.environ.get("KRONII_BROKER_CLIENT_ID", "")
    if not client_id:
        raise UsageError("set KRONII_BROKER_CLIENT_ID to the agent's registered client id")
    url = os.environ.get("KRONII_BROKER_URL") or DEFAULT_URL
    session = os.environ.get("KRONII_BROKER_SESSION") or "current"
    runner: StepsRunner | None = None
    for attempt in range(2):
        client = signed_in_client(url, session, client_id, fresh=attempt > 0)
        if runner is None:
            runner = StepsRunner(client, plan, _pointer)
        else:
            client.epoch = runner.client.epoch
            runner.client = client  # on from the action it had reached: none is sent twice
        try:
            halt = runner.run()
        except BrokerError as error:
            if error.status == 401 and attempt == 0:
                continue  # the cached token was revoked or the broker restarted: sign in again
            raise
        if halt is None:
            return EXIT_OK
        _say(halt.sentence)
        return halt.code
    return EXIT_REFUSED  # not reached: the second attempt returns or raises


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        route = chain.route(args)
        if route == "pass":
            return _pass_through(args)
        return _send(chain.parse(args))
    except chain.Refused as refused:
        _say(str(refused))
        return EXIT_REFUSED
    except UsageError as error:
        _say(str(error))
        return EXIT_USAGE
    except BrokerError as error:
        _say(error.message)
        if error.code == UNREACHABLE:
            return EXIT_UNREACHABLE
        if error.code == BAD_KEY:
            return EXIT_USAGE
        return EXIT_USAGE if error.code == "invalid_argument" and not error.status else EXIT_REFUSED


def write_shadow_script(directory: Path, python: str | None = None) -> Path:
    """An executable `xdotool` in ``directory`` that runs this module with ``python`` (default: the
    interpreter running now, the one kronii is installed in), for a shadow directory put first on PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "xdotool"
    interpreter = python or sys.executable
    script.write_text(
        "#!/bin/sh\n"
        f"# {SHIM_MARKER.decode()}: xdotool's input goes through the kronii input broker.\n"
        'KRONII_SHADOW_DIR=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)\n'
        "export KRONII_SHADOW_DIR\n"
        f'exec {_sh_quote(interpreter)} -m kronii.broker.cli.xdotool_shim "$@"\n'
    )
    script.chmod(0o755)
    return script


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


if __name__ == "__main__":
    sys.exit(main())
