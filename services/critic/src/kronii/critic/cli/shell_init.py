"""`kronii shell-init bash|zsh|fish`: prints the critic's shell hooks; `eval "$(kronii shell-init
bash)"` in ~/.bashrc (zsh: ~/.zshrc; fish: `kronii shell-init fish | source` in config.fish)
installs them. It also makes the private runtime directory the hooks write into. Light imports: it
runs at every shell's start."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click
from kronii.launcher.cli import exits
from kronii.launcher.cli.exits import CommandError

__all__ = ["main", "shell_init_command"]


@click.command("shell-init")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]), metavar="SHELL")
def shell_init_command(shell: str) -> None:
    """Print the critic's hooks for SHELL (bash, zsh or fish), to be eval'ed by that shell.

    Each command you run is then appended as one line to a private spool (no process is started
    per command, and the prompt never waits for the critic); a hint after a failing command is
    shown at the next prompt."""
    from kronii.critic.adapters.shell_init import critic_runtime_dir, prepare_runtime_dir, render_init_script

    directory = critic_runtime_dir()
    try:
        prepare_runtime_dir(directory)
    except OSError as error:
        raise CommandError(
            f"kronii: shell-init: cannot prepare {directory}: {error.strerror or error}", exits.FAILED
        ) from None
    click.echo(render_init_script(shell, directory), nl=False)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m kronii.critic.cli.shell_init SHELL`, with kronii's errors and exit codes."""
    from kronii.launcher.cli.main import main as kronii_main

    return kronii_main(["shell-init", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
