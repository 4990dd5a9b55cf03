"""Recipes for the real line-editing TUI agents and REPLs the supervisor's tests type into: each one
offline, pinned (tests/agents/package.json for the npm agents, the dev group of pyproject.toml for the
Python REPLs, Debian for the rest), in a private folder, in a 120x40 window of a private tmux server.

A recipe (TuiAgent) says how to run the program (argv, an absolute path first), how to prepare its
private folder (HOME, XDG_*, TMPDIR and the agent's own config folder inside it, a dummy API key, the
loopback endpoint of tests/agents/refusing_model.py, which answers every request with HTTP 401), how to
see that it reached its idle input screen, which first-start dialogs it has and how to bring each up,
and how to read its own history of submitted prompts. tests/data/agents/README.md has their screens.

    with run_agent(GEMINI, tmp_path) as agent:
        agent.wait_idle()
        agent.pane.send_text("say hello"); agent.pane.keys("Enter")
        agent.wait_history("say hello")
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.agents import real_codex
from tests.agents.claude_code import (
    CLAUDE_DIALOG_MARKERS,
    CLAUDE_DROPPED_ENV,
    CLAUDE_OWN_CONFIG,
    OPENCODE_DROPPED_ENV,
    OPENCODE_OWN_CONFIG,
    claude_history,
    claude_idle,
    opencode_history,
    opencode_idle,
    prepare_claude_config,
    prepare_opencode_config,
)
from tests.agents.real_codex import CodexPane, git_repository, plain, tmux_server
from tests.agents.refusing_model import refusing_model_server

__all__ = [
    "AGENTS",
    "BASH",
    "CLAUDE",
    "CODEX",
    "DUMMY_API_KEY",
    "GEMINI",
    "IPYTHON",
    "NODE",
    "OPENCODE",
    "PTPYTHON",
    "PYTHON",
    "QWEN",
    "SQLITE3",
    "Dialog",
    "RunningAgent",
    "TuiAgent",
    "agent_env",
    "run_agent",
]

AGENTS_BIN = Path(__file__).resolve().parent / "node_modules" / ".bin"
VENV_BIN = Path(sys.executable).parent  # the project's .venv, where ipython and ptpython are pinned
DUMMY_API_KEY = real_codex.DUMMY_API_KEY

# The person's own agent, REPL and terminal settings, which would leak into a test's agent.
_DROPPED_ENV = (
    "NO_COLOR",
    "TMUX",
    "TMUX_PANE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "CODEX_API_KEY",
    "CODEX_HOME",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GEMINI_CLI_HOME",
    "QWEN_HOME",
    "QWEN_RUNTIME_DIR",
    "DASHSCOPE_API_KEY",
    "IPYTHONDIR",
    "PYTHONSTARTUP",
    "PTPYTHON_CONFIG_HOME",
    "NODE_OPTIONS",
    "NODE_REPL_HISTORY",
    "NODE_REPL_EXTERNAL_MODULE",
    "SQLITE_HISTORY",
    "HISTFILE",
    "PROMPT_COMMAND",
    "BASH_ENV",
    "ENV",
    *CLAUDE_DROPPED_ENV,
    *OPENCODE_DROPPED_ENV,
)

Prepare = Callable[[Path, Path, str, "str | None"], dict[str, str]]


def agent_env(agent_vars: dict[str, str], base: dict[str, str] | None = None) -> dict[str, str]:
    """A whole environment to run an agent with: `base` (default os.environ) without the person's own
    agent settings, plus agent_vars."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in _DROPPED_ENV}
    env.update(agent_vars)
    return env


def _private_base(private: Path) -> dict[str, str]:
    """HOME, the XDG folders and TMPDIR inside the private folder: nothing the agent writes by default
    lands outside it."""
    private.mkdir(mode=0o700, parents=True, exist_ok=True)
    folders = {
        "HOME": "home",
        "XDG_CONFIG_HOME": "home/.config",
        "XDG_DATA_HOME": "home/.local/share",
        "XDG_STATE_HOME": "home/.local/state",
        "XDG_CACHE_HOME": "home/.cache",
        "TMPDIR": "tmp",
    }
    env: dict[str, str] = {}
    for var, sub in folders.items():
        (private / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str((private / sub).resolve())
    return env


@dataclass(frozen=True)
class Dialog:
    """A first-start (or other) dialog: `marker` is text it shows; it is brought up by preparing the
    private folder with dialog=name (a missing settings file), or, when `keys` is set, by these tmux
    keys on the idle screen."""

    name: str
    marker: str
    how: str
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class TuiAgent:
    """How to run one real line-editing agent or REPL offline, see it idle, and read its history."""

    name: str
    argv: tuple[str, ...]
    pinned: str  # the version, and where it is pinned
    prepare: Prepare  # (private folder, project folder, endpoint URL, dialog name or None) -> variables
    is_idle: Callable[[str], bool]  # on a `capture-pane -p -e` screen
    history: Callable[[Path], list[str]]  # the private folder -> submitted prompts, oldest first
    dialogs: tuple[Dialog, ...] = ()
    history_on_exit: tuple[str, ...] = ()  # tmux keys that make it exit, when it writes history only then
    own_config: tuple[str, ...] = ()  # the person's own files (under ~) it would use without the recipe
    cleanup: Callable[[Path], None] = field(default=lambda private: None, repr=False)

    def missing(self) -> str | None:
        """Why the program cannot run here (its binary is absent), or None."""
        binary = Path(self.argv[0])
        if not binary.exists():
            return f"{self.name}: {binary} is not installed ({self.pinned}; run `make deps`)"
        return None

    def dialog(self, name: str) -> Dialog:
        return next(d for d in self.dialogs if d.name == name)


# ---------------------------------------------------------------- screens


def _lines(screen: str) -> list[str]:
    return [line.rstrip() for line in plain(screen).splitlines() if line.strip()]


def _last_line_is(pattern: str) -> Callable[[str], bool]:
    regex = re.compile(pattern)

    def idle(screen: str) -> bool:
        lines = _lines(screen)
        return bool(lines) and regex.fullmatch(lines[-1]) is not None

    return idle


INK_PLACEHOLDER = "Type your message or @path/to/file"  # Gemini's and Qwen Code's empty input box
INK_WORKING = "esc to cancel"
INK_READY = "? for shortcuts"  # the footer hint; Qwen Code shows `Initializing...` there until it is ready


def _ink_idle(screen: str) -> bool:
    text = plain(screen)
    return INK_PLACEHOLDER in text and INK_READY in text and INK_WORKING not in text


def _ptpython_idle(screen: str) -> bool:
    lines = _lines(screen)
    return len(lines) >= 2 and "[F2] Menu" in lines[-1] and lines[-2] == ">>>"


# ---------------------------------------------------------------- histories


def _read_gemini_chats(folder: Path) -> list[str]:
    """Gemini's session records (<config>/tmp/<project>/chats/session-*.jsonl): each user message
    once (by id), oldest first, the session context it sends first left out. logs.json can miss a
    message under load; the session record is what went to the model."""
    entries: dict[str, tuple[str, str]] = {}
    for path in folder.glob("tmp/*/chats/session-*.jsonl"):
        with contextlib.suppress(OSError):
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                with contextlib.suppress(json.JSONDecodeError, TypeError, KeyError):
                    entry = json.loads(line)
                    if not isinstance(entry, dict) or entry.get("type") != "user":
                        continue
                    text = "".join(str(part.get("text", "")) for part in entry["content"])
                    if text.startswith("<session_context>"):
                        continue
                    entries[str(entry["id"])] = (str(entry.get("timestamp", "")), text)
    return [text for _, text in sorted(entries.values())]


def _read_gemini_history(folder: Path) -> list[str]:
    return _read_gemini_chats(folder) or _read_json_logs(folder)


def _read_json_logs(folder: Path) -> list[str]:
    """Gemini's and Qwen Code's logs.json (one per project under <config>/tmp/): the user messages."""
    entries: list[tuple[str, str]] = []
    for path in folder.glob("tmp/*/logs.json"):
        with contextlib.suppress(OSError, json.JSONDecodeError):
            for entry in json.loads(path.read_text(encoding="utf-8")):
                if entry.get("type") == "user":
                    entries.append((str(entry.get("timestamp", "")), str(entry["message"])))
    return [message for _, message in sorted(entries)]


def _read_lines(path: Path, *, newest_first: bool = False) -> list[str]:
    if not path.exists():
        return []
    lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line]
    return lines[::-1] if newest_first else lines


def _read_prompt_toolkit_history(path: Path) -> list[str]:
    """prompt_toolkit's FileHistory: `# <time>` then `+<line>` for each line of an entry."""
    entries: list[list[str]] = []
    for line in _read_lines(path):
        if line.startswith("#"):
            entries.append([])
        elif line.startswith("+") and entries:
            entries[-1].append(line[1:])
    return ["\n".join(entry) for entry in entries if entry]


def _read_ipython_history(db: Path) -> list[str]:
    if not db.exists():
        return []
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as con:
        try:
            rows = con.execute("SELECT source_raw FROM history ORDER BY session, line").fetchall()
        except sqlite3.Error:
            return []
    return [str(source) for (source,) in rows]


# ---------------------------------------------------------------- recipes


def _prepare_codex(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    env = _private_base(private)
    trusted = [] if dialog == "trust" else [project]
    env.update(real_codex.prepare_codex_home(private / "codex-home", trusted, base_url=base_url))
    return env


CODEX = TuiAgent(
    name="codex",
    argv=(str(real_codex.CODEX_BIN),),
    pinned=f"@openai/codex {real_codex.pinned_codex_version()} in tests/agents/package.json",
    prepare=_prepare_codex,
    is_idle=lambda s: (
        real_codex.PLACEHOLDER_DIM in s
        and real_codex.READY_FOOTER in plain(s)
        and real_codex.WORKING not in plain(s)
    ),
    history=lambda private: [str(e["text"]) for e in real_codex.history(private / "codex-home")],
    dialogs=(Dialog("trust", "Trust this folder?", "the project is not trusted in config.toml"),),
    own_config=(".codex",),
    cleanup=lambda private: real_codex.stop_codex_daemons(private / "codex-home"),
)


def _prepare_gemini(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    env = _private_base(private)
    config = private / "home" / ".gemini"
    config.mkdir(parents=True, exist_ok=True)
    settings: dict[str, object] = {
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
    }
    if dialog != "auth":
        settings["security"] = {"auth": {"selectedType": "gemini-api-key"}}
    (config / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    if dialog != "trust":
        trusted = {str(project.resolve()): "TRUST_FOLDER"}
        (config / "trustedFolders.json").write_text(json.dumps(trusted, indent=2), encoding="utf-8")
    env.update(
        {
            "GEMINI_CLI_HOME": env["HOME"],
            "GEMINI_API_KEY": DUMMY_API_KEY,
            "GOOGLE_GEMINI_BASE_URL": base_url.removesuffix("/v1"),
        }
    )
    return env


GEMINI = TuiAgent(
    name="gemini",
    argv=(str(AGENTS_BIN / "gemini"),),
    pinned="@google/gemini-cli 0.61.0 in tests/agents/package.json",
    prepare=_prepare_gemini,
    is_idle=_ink_idle,
    history=lambda private: _read_gemini_history(private / "home" / ".gemini"),
    dialogs=(
        Dialog("trust", "Do you trust the files in this folder?", "no trustedFolders.json"),
        Dialog(
            "auth", "How would you like to authenticate", "no security.auth.selectedType in settings.json"
        ),
    ),
    own_config=(".gemini",),
)


def _prepare_qwen(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    env = _private_base(private)
    config = private / "home" / ".qwen"
    config.mkdir(parents=True, exist_ok=True)
    settings: dict[str, object] = {
        "general": {"enableAutoUpdate": False},
        "privacy": {"usageStatisticsEnabled": False},
    }
    if dialog == "trust":
        settings["security"] = {"folderTrust": {"enabled": True}, "auth": {"selectedType": "openai"}}
    elif dialog != "auth":
        settings["security"] = {"auth": {"selectedType": "openai"}}
    (config / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    env.update({"QWEN_HOME": str(config.resolve()), "NO_UPDATE_NOTIFIER": "1"})
    if dialog != "auth":
        env.update(
            {"OPENAI_API_KEY": DUMMY_API_KEY, "OPENAI_BASE_URL": base_url, "OPENAI_MODEL": "qwen3-coder-plus"}
        )
    return env


QWEN = TuiAgent(
    name="qwen",
    argv=(str(AGENTS_BIN / "qwen"),),
    pinned="@qwen-code/qwen-code 0.15.10 in tests/agents/package.json",
    prepare=_prepare_qwen,
    is_idle=_ink_idle,
    history=lambda private: _read_json_logs(private / "home" / ".qwen"),
    dialogs=(
        Dialog(
            "auth", "Select Authentication Method", "no API key in the environment, no auth in settings.json"
        ),
        Dialog("trust", "Do you trust this folder?", "security.folderTrust.enabled in settings.json"),
    ),
    own_config=(".qwen", ".config/configstore"),
)


def _prepare_ipython(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    env = _private_base(private)
    env["IPYTHONDIR"] = str((private / "ipython").resolve())
    return env


IPYTHON = TuiAgent(
    name="ipython",
    argv=(str(VENV_BIN / "ipython"),),
    pinned="ipython 9.18.1 in pyproject.toml (dev group)",
    prepare=_prepare_ipython,
    is_idle=_last_line_is(r"In \[\d+\]:"),
    history=lambda private: _read_ipython_history(private / "ipython" / "profile_default" / "history.sqlite"),
    dialogs=(Dialog("confirm_exit", "Do you really want to exit", "Ctrl-D on the empty prompt", ("C-d",)),),
    own_config=(".ipython",),
)


def _prepare_ptpython(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    return _private_base(private)


PTPYTHON = TuiAgent(
    name="ptpython",
    argv=(str(VENV_BIN / "ptpython"),),
    pinned="ptpython 3.0.32 in pyproject.toml (dev group)",
    prepare=_prepare_ptpython,
    is_idle=_ptpython_idle,
    history=lambda private: _read_prompt_toolkit_history(private / "home/.local/share/ptpython/history"),
    dialogs=(Dialog("confirm_exit", "Do you really want to exit?", "Ctrl-D on the empty prompt", ("C-d",)),),
    own_config=(".config/ptpython", ".local/share/ptpython"),
)


def _prepare_node(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    env = _private_base(private)
    env["NODE_REPL_HISTORY"] = str((private / "node_repl_history").resolve())
    return env


NODE = TuiAgent(
    name="node",
    argv=(shutil.which("node") or "/usr/bin/node",),
    pinned="Debian's nodejs (node 20)",
    prepare=_prepare_node,
    is_idle=_last_line_is(r">"),
    history=lambda private: _read_lines(private / "node_repl_history", newest_first=True),
    own_config=(".node_repl_history",),
)


def _prepare_sqlite3(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    env = _private_base(private)
    env["SQLITE_HISTORY"] = str((private / "sqlite_history").resolve())
    return env


SQLITE3 = TuiAgent(
    name="sqlite3",
    argv=(shutil.which("sqlite3") or "/usr/bin/sqlite3",),
    pinned="Debian's sqlite3",
    prepare=_prepare_sqlite3,
    is_idle=_last_line_is(r"sqlite>"),
    history=lambda private: _read_lines(private / "sqlite_history"),
    history_on_exit=("C-d",),
    own_config=(".sqlite_history",),
)


def _prepare_python(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    return _private_base(private)


PYTHON = TuiAgent(
    name="python3",
    argv=("/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable, "-i"),
    pinned="Debian's python3 (the basic readline REPL)",
    prepare=_prepare_python,
    is_idle=_last_line_is(r">>>"),
    history=lambda private: _read_lines(private / "home" / ".python_history"),
    history_on_exit=("C-d",),
    own_config=(".python_history",),
)


def _prepare_claude(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    env = _private_base(private)
    env.update(prepare_claude_config(Path(env["HOME"]), project, base_url, dialog))
    return env


CLAUDE = TuiAgent(
    name="claude",
    argv=(str(AGENTS_BIN / "claude"),),
    pinned="@anthropic-ai/claude-code 2.1.197 in tests/agents/package.json",
    prepare=_prepare_claude,
    is_idle=claude_idle,
    history=lambda private: claude_history(private / "home" / ".claude"),
    dialogs=(
        Dialog("theme", CLAUDE_DIALOG_MARKERS["theme"], "no hasCompletedOnboarding in .claude.json"),
        Dialog("api_key", CLAUDE_DIALOG_MARKERS["api_key"], "the key not in customApiKeyResponses.approved"),
        Dialog("trust", CLAUDE_DIALOG_MARKERS["trust"], "the project not in .claude.json's projects"),
    ),
    own_config=CLAUDE_OWN_CONFIG,
)


def _prepare_opencode(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    env = _private_base(private)
    env.update(prepare_opencode_config(Path(env["XDG_CONFIG_HOME"]), base_url))
    return env


OPENCODE = TuiAgent(
    name="opencode",
    argv=(str(AGENTS_BIN / "opencode"),),
    pinned="opencode-ai 1.18.33 in tests/agents/package.json",
    prepare=_prepare_opencode,
    is_idle=opencode_idle,
    history=lambda private: opencode_history(private / "home" / ".local" / "state"),
    own_config=OPENCODE_OWN_CONFIG,
)

BASH_PS1 = r"\u@\h:\w\$ "


def _prepare_bash(private: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    env = _private_base(private)
    rc = private / "bashrc"
    rc.write_text(
        f"HISTFILE={json.dumps(str((private / 'bash_history').resolve()))}\n"
        "PROMPT_COMMAND='history -a'\n"
        f"PS1='{BASH_PS1}'\n",
        encoding="utf-8",
    )
    return env


BASH = TuiAgent(
    name="bash",
    argv=(shutil.which("bash") or "/bin/bash", "--noprofile", "--rcfile", "{private}/bashrc", "-i"),
    pinned="Debian's bash",
    prepare=_prepare_bash,
    is_idle=_last_line_is(r".*[$#]"),  # \$ is # for root
    history=lambda private: _read_lines(private / "bash_history"),
    own_config=(".bash_history",),
)

AGENTS: tuple[TuiAgent, ...] = (
    CODEX,
    GEMINI,
    QWEN,
    CLAUDE,
    OPENCODE,
    IPYTHON,
    PTPYTHON,
    NODE,
    SQLITE3,
    PYTHON,
    BASH,
)


# ---------------------------------------------------------------- running one


@dataclass
class RunningAgent:
    """A recipe's program running in its private folder, in a window of a private tmux server."""

    agent: TuiAgent
    pane: CodexPane
    socket: str
    private: Path
    project: Path
    env: dict[str, str]
    base_url: str

    def wait_idle(self, timeout: float = 60.0) -> str:
        return self.pane.wait_screen(self.agent.is_idle, timeout, f"{self.agent.name}'s idle input screen")

    def wait_dialog(self, name: str, timeout: float = 60.0) -> str:
        dialog = self.agent.dialog(name)
        if dialog.keys:
            self.wait_idle(timeout)
            self.pane.keys(*dialog.keys)
        return self.pane.wait_text(dialog.marker, timeout)

    def history(self) -> list[str]:
        return self.agent.history(self.private)

    def wait_history(self, prompt: str, timeout: float = 30.0) -> list[str]:
        """Until `prompt` is in the agent's own history (after making it exit, for an agent that
        writes its history only then)."""
        if self.agent.history_on_exit:
            self.pane.keys(*self.agent.history_on_exit)
        deadline = time.monotonic() + timeout
        while True:
            found = self.history()
            if prompt in found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)


@contextlib.contextmanager
def run_agent(
    agent: TuiAgent,
    folder: Path,
    *,
    dialog: str | None = None,
    base_url: str | None = None,
    name: str | None = None,
) -> Iterator[RunningAgent]:
    """Prepare folder/private (the agent's HOME and config) and folder/project (a git repository, its
    cwd), and start the agent there in a new 120x40 tmux session of a private server; with `dialog`,
    prepared so that this first-start dialog shows. Without base_url, a refusing loopback endpoint
    (HTTP 401) runs for as long as the agent does. Afterwards the server is killed."""
    private = (folder / "private").resolve()
    project = git_repository(folder / "project").resolve()
    endpoint = contextlib.nullcontext(base_url) if base_url is not None else refusing_model_server()
    with endpoint as url:
        agent_vars = agent.prepare(private, project, url, dialog)
        argv = [arg.replace("{private}", str(private)) for arg in agent.argv]
        try:
            with tmux_server(agent_env(agent_vars)) as socket:
                pane = CodexPane.start(socket, argv, cwd=project, env=agent_vars, name=name or agent.name)
                yield RunningAgent(agent, pane, socket, private, project, agent_env(agent_vars), url)
        finally:
            agent.cleanup(private)
