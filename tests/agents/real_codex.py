"""The real Codex CLI for tests: the pinned npm package under tests/agents/node_modules (installed
by `make deps`, scripts/install_agent_clis.sh), a private CODEX_HOME that reaches the main screen
offline, and a private tmux server to run it in.

What experiments with Codex 0.169.0 in tmux showed (tests/data/agents/README.md has the screens):

- `codex login --with-api-key` (a dummy key on stdin) must run before the TUI: without it the TUI
  opens on its sign-in onboarding; with it the TUI goes straight to its main screen.
- The input box's first line starts with a bold U+203A (MARK); empty, it shows the placeholder
  `Ask Codex to do anything` drawn dim: `ESC[2mAsk Codex to do anything` (PLACEHOLDER_DIM). It is
  there about 0.5 s after the launch, before Codex has finished starting (offline about 3.5 s
  more): until then the footer shows only `? for shortcuts`, then the model line and
  `← for agents · ? for shortcuts` (READY_FOOTER). Text typed before the TUI is up is kept.
- Offline, Codex can start a turn only about 10 s after the launch (it first tries to fetch its
  model list, with retries). A prompt submitted earlier shows `Waiting for startup` (before the
  footer is complete) or `Queued follow-up inputs` (after), and is sent when the turn can start.
- When a turn starts, `esc to interrupt` (WORKING) marks it and the prompt is appended to
  $CODEX_HOME/history.jsonl; the first one also creates the session's rollout file. Offline, Codex
  retries (`Reconnecting... 1/5`..`5/5`) and then shows `Reconnecting... waiting for network` for as
  long as it runs: it never gives up by itself. Against an endpoint that answers 401 it ends the
  turn with `■ unexpected status 401 Unauthorized: ...` after its retries.
- Enter while a turn runs sends the new prompt into it at once (a steer, in history.jsonl too); Tab
  queues it (`Queued follow-up inputs`). Enter in an empty box does nothing. Ctrl-C clears a draft,
  and in an empty box exits Codex. Esc interrupts a turn and puts queued prompts back in the box.
- Characters arriving together (one `send-keys -l` of a whole prompt) are a paste burst: an Enter
  right after one inserts a newline instead of submitting. Wait until the text is on screen and a
  moment more (0.3 s is enough), then press Enter.
- By default Codex starts a shared background server (`codex app-server --managed-daemon` and an
  updater loop) in sessions of their own, which outlive the TUI, after copying the 400 MB binary
  into $CODEX_HOME/packages. The config written here turns that off (`[features]
  daemon_auto_start = false`) unless asked for; `stop_codex_daemons` ends any that were started.
- A CODEX_HOME under /tmp makes Codex print `WARNING: proceeding, even though we could not create
  PATH aliases` on stderr before the TUI starts; it is harmless. Without bubblewrap on PATH the
  footer shows `⚠ 1 warning · f2 to view`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "AGENTS_DIR",
    "CODEX_BIN",
    "CODEX_BIN_DIR",
    "DUMMY_API_KEY",
    "MARK",
    "PLACEHOLDER",
    "PLACEHOLDER_DIM",
    "READY_FOOTER",
    "WORKING",
    "CodexPane",
    "RealCodex",
    "Rollout",
    "codex_env",
    "codex_version",
    "git_repository",
    "history",
    "pinned_codex_version",
    "plain",
    "prepare_codex_home",
    "real_codex",
    "require_codex",
    "rollouts",
    "stop_codex_daemons",
    "tmux_server",
]

AGENTS_DIR = Path(__file__).resolve().parent
CODEX_BIN_DIR = AGENTS_DIR / "node_modules" / ".bin"
CODEX_BIN = CODEX_BIN_DIR / "codex"
DUMMY_API_KEY = "sk-kronii-test-not-a-real-key"

MARK = "\u203a"  # starts the input box's first line, and each prompt shown in the transcript
PLACEHOLDER = "Ask Codex to do anything"
PLACEHOLDER_DIM = "\x1b[2m" + PLACEHOLDER
READY_FOOTER = "for agents"  # `← for agents · ? for shortcuts`, once startup has finished
WORKING = "esc to interrupt"

# Variables of the person's own Codex or terminal that would leak into a test's Codex.
_DROPPED_ENV = ("NO_COLOR", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY", "TMUX", "TMUX_PANE")


def pinned_codex_version() -> str:
    """The version tests/agents/package.json pins."""
    package = json.loads((AGENTS_DIR / "package.json").read_text(encoding="utf-8"))
    return str(package["dependencies"]["@openai/codex"])


def codex_version() -> str | None:
    """The installed Codex's version (`codex --version` prints `codex-cli X.Y.Z`), or None."""
    if not CODEX_BIN.exists():
        return None
    try:
        out = subprocess.run(
            [str(CODEX_BIN), "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"codex-cli (\S+)", out)
    return match.group(1) if match else None


def require_codex() -> Path:
    """CODEX_BIN, after checking that it is the pinned version; fails the test otherwise."""
    want, got = pinned_codex_version(), codex_version()
    if got != want:
        raise RuntimeError(
            f"the real Codex CLI {want} is not installed under tests/agents/node_modules (found: {got}); "
            "run `make deps` (scripts/install_agent_clis.sh)"
        )
    return CODEX_BIN


def codex_env(codex_vars: Mapping[str, str], base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A whole environment to run Codex with: `base` (default os.environ) without the variables of
    the person's own Codex, terminal colour opt-outs (NO_COLOR) and tmux client, plus codex_vars."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _DROPPED_ENV}
    env.update(codex_vars)
    return env


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def prepare_codex_home(
    folder: Path,
    trusted: Sequence[Path],
    *,
    base_url: str | None = None,
    daemon: bool = False,
) -> dict[str, str]:
    """Make `folder` a private CODEX_HOME that opens on Codex's main screen with no network:
    logged in with a dummy API key, the screen-reader probe and update check off, the folders in
    `trusted` trusted (any other folder opens on the trust dialog). `base_url` points Codex's
    OpenAI provider elsewhere (e.g. a loopback endpoint of the test's); `daemon` leaves Codex's
    shared background server on. Returns the variables to run Codex with."""
    require_codex()
    home = folder.resolve()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    codex_vars = {"CODEX_HOME": str(home), "OPENAI_API_KEY": DUMMY_API_KEY}
    login = subprocess.run(
        [str(CODEX_BIN), "login", "--with-api-key"],
        input=DUMMY_API_KEY + "\n",
        capture_output=True,
        text=True,
        env=codex_env(codex_vars),
        timeout=60,
        check=False,
    )
    if login.returncode != 0 or not (home / "auth.json").exists():
        raise RuntimeError(f"codex login --with-api-key failed ({login.returncode}): {login.stderr}")
    lines = ["check_for_update_on_startup = false"]
    if base_url is not None:
        lines.append(f"openai_base_url = {_toml_string(base_url)}")
    lines += ["", "[features]", f"daemon_auto_start = {'true' if daemon else 'false'}"]
    lines += ["", "[tui]", "screen_reader_detection_done = true"]
    for path in trusted:
        lines += ["", f"[projects.{_toml_string(str(path.resolve()))}]", 'trust_level = "trusted"']
    (home / "config.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return codex_vars


def history(codex_home: Path) -> list[dict[str, Any]]:
    """$CODEX_HOME/history.jsonl: one {"session_id", "ts", "text"} per submitted prompt."""
    path = codex_home / "history.jsonl"
    if not path.exists():
        return []
    entries: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # a line still being written
            if line.strip():
                entries.append(json.loads(line))
    return entries


@dataclass(frozen=True)
class Rollout:
    """One session's transcript, $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl, written
    from the session's first submitted prompt on; `meta` is its first line's session_meta payload."""

    path: Path
    id: str
    cwd: str
    timestamp: str
    meta: dict[str, Any] = field(repr=False)


def rollouts(codex_home: Path) -> list[Rollout]:
    """The rollout files under $CODEX_HOME/sessions, oldest first."""
    found: list[Rollout] = []
    for path in sorted((codex_home / "sessions").glob("*/*/*/rollout-*.jsonl")):
        with path.open(encoding="utf-8") as f:
            first = f.readline()
        try:
            line = json.loads(first)
        except json.JSONDecodeError:
            continue
        if line.get("type") != "session_meta":
            continue
        meta: dict[str, Any] = line["payload"]
        found.append(Rollout(path, str(meta["id"]), str(meta["cwd"]), str(meta["timestamp"]), meta))
    return found


def stop_codex_daemons(codex_home: Path, timeout: float = 15.0) -> None:
    """End the shared background server a Codex with `daemon_auto_start` left running for this
    CODEX_HOME, and its updater loop (pid files in $CODEX_HOME/app-server-daemon/). The updater goes
    first, since it would start the server again; `codex app-server daemon stop` stops the server."""
    folder = codex_home / "app-server-daemon"
    if not folder.is_dir():
        return

    def live(name: str) -> int | None:
        try:
            pid = int(json.loads((folder / name).read_text(encoding="utf-8"))["pid"])
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError):
            return None
        return pid if b"app-server" in cmdline else None

    def kill(pid: int | None, sig: signal.Signals) -> None:
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    kill(live("daemon-updater.pid"), signal.SIGTERM)
    if live("daemon.pid") is not None:
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                [str(CODEX_BIN), "app-server", "daemon", "stop"],
                env=codex_env({"CODEX_HOME": str(codex_home)}),
                capture_output=True,
                timeout=timeout,
                check=False,
            )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = [pid for pid in (live("daemon-updater.pid"), live("daemon.pid")) if pid is not None]
        if not pids:
            return
        for pid in pids:
            kill(pid, signal.SIGTERM if time.monotonic() < deadline - timeout / 2 else signal.SIGKILL)
        time.sleep(0.1)


def _tmux(socket: str, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["tmux", "-S", socket, *args], capture_output=True, text=True, timeout=30, check=False
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


@contextlib.contextmanager
def tmux_server(env: Mapping[str, str] | None = None) -> Iterator[str]:
    """A private tmux server (no config file) on a short socket path in its own 0700 folder, its
    global environment `env`; yields the socket path, kills the server afterwards."""
    folder = tempfile.mkdtemp(prefix="kxc-", dir="/tmp")
    socket = os.path.join(folder, "tmux.sock")
    try:
        # The server's global environment, which its panes inherit, is the one it starts with.
        subprocess.run(
            ["tmux", "-S", socket, "-f", "/dev/null", "start-server", ";", "set", "-g", "exit-empty", "off"],
            env=dict(env) if env is not None else None,
            capture_output=True,
            timeout=30,
            check=True,
        )
        yield socket
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=30, check=False)
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class CodexPane:
    """A program (normally the real Codex) in a window of a private tmux server, driven as a person
    at the keyboard would drive it."""

    socket: str
    target: str

    @classmethod
    def start(
        cls,
        socket: str,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        width: int = 120,
        height: int = 40,
        name: str = "agent",
    ) -> CodexPane:
        """Run argv in a new tmux session `name`, width x height, with `env` set in the session;
        the pane stays after the program exits (remain-on-exit), so its last screen can be read."""
        env_args: list[str] = []
        for key, value in env.items():
            env_args += ["-e", f"{key}={value}"]
        _tmux(
            socket,
            "new-session",
            "-d",
            "-s",
            name,
            "-x",
            str(width),
            "-y",
            str(height),
            "-c",
            str(cwd),
            *env_args,
            # The session starts with an idle command so that remain-on-exit is set before argv runs.
            "sleep 86400",
        )
        _tmux(socket, "set-option", "-t", name, "remain-on-exit", "on")
        target = f"{name}:0.0"
        _tmux(socket, "respawn-pane", "-k", "-t", target, "-c", str(cwd), shlex.join(argv))
        return cls(socket, target)

    def capture(self, *, escapes: bool = True) -> str:
        """The visible screen, with SGR escape codes unless escapes=False."""
        args = ["capture-pane", "-p", "-t", self.target]
        if escapes:
            args.insert(2, "-e")
        return _tmux(self.socket, *args)

    def cursor(self) -> tuple[int, int]:
        x, y = _tmux(
            self.socket, "display-message", "-p", "-t", self.target, "#{cursor_x} #{cursor_y}"
        ).split()
        return int(x), int(y)

    def dead(self) -> bool:
        return _tmux(self.socket, "display-message", "-p", "-t", self.target, "#{pane_dead}").strip() == "1"

    def pid(self) -> int:
        return int(_tmux(self.socket, "display-message", "-p", "-t", self.target, "#{pane_pid}").strip())

    def type(self, text: str, *, gap: float = 0.05) -> None:
        """Key by key, `gap` seconds apart (slower than a paste burst), as a person types."""
        for char in text:
            _tmux(self.socket, "send-keys", "-t", self.target, "-l", char)
            time.sleep(gap)

    def send_text(self, text: str) -> None:
        """All of `text` at once (send-keys -l): Codex takes it as a paste burst."""
        _tmux(self.socket, "send-keys", "-t", self.target, "-l", text)

    def keys(self, *keys: str) -> None:
        """tmux key names: Enter, Escape, Tab, C-c, ..."""
        _tmux(self.socket, "send-keys", "-t", self.target, *keys)

    def paste(self, text: str) -> None:
        """A paste from the terminal: bracketed when the program asked for it (Codex does)."""
        _tmux(self.socket, "set-buffer", "-b", "kx-paste", text)
        _tmux(self.socket, "paste-buffer", "-p", "-d", "-b", "kx-paste", "-t", self.target)

    def wait_screen(self, check: Callable[[str], bool], timeout: float, what: str) -> str:
        """Poll the screen (with escapes) until check holds; returns that screen."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.capture()
            if check(screen):
                return screen
            time.sleep(0.02)
        raise AssertionError(f"timed out after {timeout} s waiting for {what}; the screen:\n{screen}")

    def wait_text(self, text: str, timeout: float) -> str:
        """Until `text` is on the screen (compared without the escape codes, which split words)."""
        return self.wait_screen(lambda screen: text in plain(screen), timeout, repr(text))

    def wait_idle(self, timeout: float = 30.0, *, started: bool = True) -> str:
        """The main screen with the dim placeholder in an empty box and no running turn; with
        started, also the footer that shows Codex has finished starting."""

        def idle(screen: str) -> bool:
            text = plain(screen)
            return PLACEHOLDER_DIM in screen and WORKING not in text and (not started or READY_FOOTER in text)

        return self.wait_screen(idle, timeout, "Codex's idle main screen")


_SGR = re.compile(r"\x1b\[[0-9;:]*m")


def plain(screen: str) -> str:
    """A captured screen without its SGR escape codes."""
    return _SGR.sub("", screen)


@dataclass
class RealCodex:
    """A private CODEX_HOME, a project folder (a git repository) and a private tmux server."""

    home: Path
    project: Path
    codex_vars: dict[str, str]
    socket: str
    panes: list[CodexPane] = field(default_factory=list)

    def start(self, *args: str, cwd: Path | None = None, name: str | None = None) -> CodexPane:
        """Launch the real Codex TUI (`codex ARGS`) in a new 120x40 tmux session, in the project
        folder unless cwd is given."""
        pane = CodexPane.start(
            self.socket,
            [str(CODEX_BIN), *args],
            cwd=cwd or self.project,
            env=self.codex_vars,
            name=name or f"codex{len(self.panes)}",
        )
        self.panes.append(pane)
        return pane

    def history(self) -> list[dict[str, Any]]:
        return history(self.home)

    def rollouts(self) -> list[Rollout]:
        return rollouts(self.home)


def git_repository(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], capture_output=True, timeout=30, check=True)
    return folder


@contextlib.contextmanager
def real_codex(
    folder: Path, *, trusted: bool = True, base_url: str | None = None, daemon: bool = False
) -> Iterator[RealCodex]:
    """Everything a test needs to run the real Codex offline in tmux, under `folder`: CODEX_HOME in
    folder/codex-home, the project (trusted unless told otherwise) in folder/project. Afterwards
    the tmux server is killed, which ends Codex, and any background server Codex started is ended."""
    home = folder / "codex-home"
    project = git_repository(folder / "project")
    codex_vars = prepare_codex_home(home, [project] if trusted else [], base_url=base_url, daemon=daemon)
    try:
        with tmux_server(codex_env(codex_vars)) as socket:
            yield RealCodex(home.resolve(), project.resolve(), codex_vars, socket)
    finally:
        stop_codex_daemons(home)
