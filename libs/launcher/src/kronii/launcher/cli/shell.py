"""`kronii`: one command for the whole mesh (click), as kronii.launcher.cli.main runs it (all but the
plain `kronii control stop`, which does not wait for click). Subcommands load lazily: `kronii --help`
and `kronii redact` import no service's code, and a command of another package (`kronii agents` from the
supervisor, `kronii capture`, `kronii replay`) is imported only when it is the one that runs.

A `kronii.commands` entry point names either a click command (used as it is) or an argparse
`add_*_parser` (run by `bridged` under this group with the same exit codes, errors and closed-pipe
handling). Exit codes: `kronii.launcher.cli.exits`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click
from kronii.launcher.cli import exits
from kronii.launcher.cli.groups import SuggestingGroup

__all__ = ["SuggestingGroup", "cli", "main"]

# One line of help for the packages' commands, so that `kronii --help` needs none of their code.
_PACKAGE_HELP = {
    "activity": "your activity history: time per app and title, export, ActivityWatch import, delete",
    "agents": "spawn, wake and watch the AI coding agents in tmux panes (the supervisor)",
    "broker": "the input broker's agents' keys, automation audit and xdotool shadow",
    "capture": "request, watch and fetch redacted window captures; list the windows you can name",
    "control": "grant an agent the desktop; wait, interrupt or stop it; who holds it",
    "critic": "search your past commands, find failures like the last one, export, doctor, mute hints",
    "gnome-extension": "install kronii's GNOME Shell extension, which tells the sensor your focused window",
    "keys": "the capture service's encryption keys: rotate, rewrap, show",
    "record": "record the desktop's activity stream from a running kronii up, for replay",
    "redact": "mask secrets and personal data in text or a screenshot (standard input or files)",
    "replay": "feed a recorded activity stream through the pipeline here, with the rules or a model",
    "run": "run a command and tell the console critic how it went (its error output too)",
    "shell-init": 'the shell hooks of the console critic: eval "$(kronii shell-init bash|zsh|fish)"',
    "vision": "plan desktop actions from what is on the screen; approve, deny, watch them run",
}
_BRIDGED_BUILT_IN = {"redact": "kronii.redaction.cli:redact_command"}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    for distribution in ("kronii", "kronii-launcher"):
        with contextlib.suppress(PackageNotFoundError):
            return version(distribution)
    return "unknown"


def _package_commands() -> dict[str, str]:
    """name -> "module:attribute" of every installed package's command, without importing any."""
    from importlib.metadata import entry_points

    found = dict(_BRIDGED_BUILT_IN)
    for entry in entry_points(group="kronii.commands"):
        found.setdefault(entry.name, entry.value)
    return found


def _load(target: str) -> Any:
    import importlib

    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _run_argparse(name: str, target: str, argv: Sequence[str]) -> int:
    """Run one package's argparse command as `kronii <name> ...`."""
    parser = argparse.ArgumentParser(prog="kronii")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    own: argparse.ArgumentParser | None = _load(target)(commands)
    args, extra = parser.parse_known_args([name, *argv])
    if extra:  # the command's own usage, not the top level's
        (own or parser).error(f"unrecognized arguments: {' '.join(extra)}")
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        (own or parser).print_help()
        return exits.USAGE
    return int(handler(args))


def bridged(name: str, target: str) -> click.Command:
    @click.pass_context
    def run(ctx: click.Context) -> None:
        raise SystemExit(_run_argparse(name, target, ctx.args))

    return click.Command(
        name,
        callback=run,
        help=_PACKAGE_HELP.get(name, f"the {name} command ({target.partition(':')[0]})"),
        add_help_option=False,  # `kronii agents --help` is the command's own help
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
    )


def command_for(name: str, target: str) -> click.Command:
    """A package's command: a click command as it is, or an argparse `add_*_parser` under the bridge.
    An `add_*_parser` target is not imported here, so the bridge costs nothing until it runs."""
    if target.partition(":")[2].startswith("add_"):
        return bridged(name, target)
    command = _load(target)
    if not isinstance(command, click.Command):
        raise TypeError(f"{target} is not a click command")
    return command


class Kronii(SuggestingGroup):
    """Built-in commands (cli/builtin.py) and the packages' commands, each loaded when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from kronii.launcher.cli.builtin import BUILT_IN

        return sorted({*BUILT_IN, *_package_commands()})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from kronii.launcher.cli.builtin import BUILT_IN

        if name in BUILT_IN:
            return BUILT_IN[name]
        # `redact` is ours: no need to read every installed distribution's entry points for it.
        target = _BRIDGED_BUILT_IN.get(name) or _package_commands().get(name)
        return command_for(name, target) if target else None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help lines for the packages' commands come from _PACKAGE_HELP: listing loads no module.
        from kronii.launcher.cli.builtin import BUILT_IN

        rows = []
        for name in self.list_commands(ctx):
            command = BUILT_IN.get(name)
            text = command.get_short_help_str(80) if command else _PACKAGE_HELP.get(name, "")
            rows.append((name, text))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=Kronii,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Exit codes: 0 ok, 1 failed, 2 usage, 3 not found, 4 refused, 5 unreachable "
    '(redact: 0 clean, 10 masked, 20 withheld). Completion: eval "$(kronii completion bash)".',
)
@click.version_option(_version(), "-V", "--version", prog_name="kronii", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """kronii: privacy-first context engine and agent supervisor for your desktop."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


def _settings_error_message(error: SystemExit) -> str | None:
    """The sentence of a `SettingsError` (a SystemExit), else None. Its module is looked up, not imported:
    a command that never loaded the settings (pydantic) cannot have raised one."""
    settings = sys.modules.get("kronii.foundation.settings")
    error_type = getattr(settings, "SettingsError", None)
    if error_type is None or not isinstance(error, error_type):
        return None
    return str(getattr(error, "message", error))


_START_IT = "start it with `kronii up`"


def _with_up_running(message: str) -> str:
    """A command's "start it with `kronii up`" is wrong while one runs (its service is stopped, hung or
    still starting): say that the service does not answer though `kronii up` runs, and where to look."""
    if _START_IT not in message:
        return message
    from kronii.foundation.settings import load_settings
    from kronii.runtime.up_settings import LauncherSettings, up_running

    try:
        pid = up_running(load_settings(LauncherSettings).data_dir)
    except SystemExit:  # settings that do not load: the message as it is
        return message
    if pid is None:
        return message
    which = f" (pid {pid})" if pid else ""
    return message.replace(
        _START_IT,
        f"it does not answer, though `kronii up` is running{which}: "
        "its output says why, and `kronii status` shows each service",
    )


def _quiet_stdout() -> None:
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _exit_code(error: SystemExit) -> int:
    """A command that exited: a settings error as one sentence (usage), else its own code."""
    message = _settings_error_message(error)
    if message is not None:
        click.echo(message, err=True)
        return exits.USAGE
    if isinstance(error.code, int):
        return error.code
    return exits.OK if error.code is None else exits.FAILED


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        cli.main(arguments, prog_name="kronii", complete_var="_KRONII_COMPLETE", standalone_mode=False)
    except SystemExit as error:
        return _exit_code(error)
    except click.exceptions.NoArgsIsHelpError as error:  # pragma: no cover - bare `kronii` prints help itself
        click.echo(error.ctx.get_help() if error.ctx else "")
        return exits.OK
    except exits.CommandError as error:
        click.echo(_with_up_running(error.message), err=True)
        return error.code
    except click.UsageError as error:
        error.show()
        return exits.USAGE
    except click.exceptions.Abort:
        return exits.INTERRUPTED
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except KeyboardInterrupt:
        return exits.INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()  # the reader left (`kronii status | head -3`): stop quietly, like any Unix tool
        return exits.PIPE_CLOSED
    except Exception as error:  # a sentence, not a traceback, for the person at the terminal
        command = arguments[0] if arguments else "kronii"
        click.echo(f"kronii: {command} failed: {type(error).__name__}: {error}", err=True)
        return exits.FAILED
    return exits.OK
