"""The shell side of the critic: where the hooks and the critic meet (a private runtime directory)
and the init scripts `kronii shell-init bash|zsh|fish` prints, with that directory baked in.

The directory is ``$XDG_RUNTIME_DIR/kronii/critic`` (a tmpfs on a desktop), else
``<data dir>/run/critic``, mode 0700. In it:

- ``spool`` (0600): one line per command, appended by the hooks (kronii.critic.core.spool_line);
- ``hint-<session>``: the critic's hints for one shell, a FIFO for bash and zsh, a file for fish;
- ``hist-<session>`` (bash) and ``clock-<session>`` (fish): the hooks' scratch files, 0600; bash
  blanks the command it read from its file at once, fish's stays empty;
- ``critic.pid``: the running critic's pid, so a hook waits for a hint only when someone can send one.

Each shell removes its own per-shell files when it exits; the critic removes those of shells that
are gone (spool.HintBox.forget_gone).

Standard library only: this runs at every shell's start."""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from kronii.critic.core.spool_line import MAX_COMMAND_CHARS, MAX_CWD_CHARS

__all__ = [
    "CLOCK_PREFIX",
    "HINT_PREFIX",
    "HISTORY_PREFIX",
    "PID_NAME",
    "SHELLS",
    "SPOOL_NAME",
    "critic_runtime_dir",
    "prepare_runtime_dir",
    "render_init_script",
]

SHELLS = ("bash", "zsh", "fish")
SPOOL_NAME = "spool"
HINT_PREFIX = "hint-"
HISTORY_PREFIX = "hist-"
CLOCK_PREFIX = "clock-"
PID_NAME = "critic.pid"
_SCRIPTS = {"bash": "bash.sh", "zsh": "zsh.zsh", "fish": "fish.fish"}


def critic_runtime_dir(environ: Mapping[str, str] | None = None, data_dir: Path | None = None) -> Path:
    """``$XDG_RUNTIME_DIR/kronii/critic``, else ``<data dir>/run/critic``. Without ``data_dir`` the
    data directory is KRONII_DATA_DIR, else kronii.foundation.settings.default_data_dir's rule, spelled
    again here: importing the settings (pydantic) would cost every shell start a quarter second."""
    env = os.environ if environ is None else environ
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime:
        return Path(runtime) / "kronii" / "critic"
    if data_dir is None:
        data_home = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        data_dir = Path(env.get("KRONII_DATA_DIR") or Path(data_home) / "kronii")
    return Path(data_dir) / "run" / "critic"


def prepare_runtime_dir(directory: Path) -> None:
    """The directory (0700, made if missing, tightened if looser) and an empty 0600 spool in it."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if directory.stat().st_mode & 0o077:
        directory.chmod(0o700)
    spool = directory / SPOOL_NAME
    try:
        os.close(os.open(spool, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
    except FileExistsError:
        pass


def _quote_posix(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _quote_fish(text: str) -> str:
    # fish single quotes give backslash a meaning before \ and ' (POSIX quoting would not survive).
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def render_init_script(shell: str, directory: Path) -> str:
    """The init script for ``shell`` ("bash", "zsh" or "fish") talking through ``directory``."""
    if shell not in _SCRIPTS:
        raise ValueError(f"no init script for {shell!r}: there are {', '.join(SHELLS)}")
    template = resources.files("kronii.critic").joinpath("shell").joinpath(_SCRIPTS[shell]).read_text("utf-8")
    quote = _quote_fish if shell == "fish" else _quote_posix
    return (
        template.replace("@KRONII_DIR@", quote(str(directory)))
        .replace("@KRONII_MAX_COMMAND@", str(MAX_COMMAND_CHARS))
        .replace("@KRONII_MAX_CWD@", str(MAX_CWD_CHARS))
    )
