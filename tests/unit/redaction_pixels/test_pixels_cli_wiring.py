"""`redact_command` as the main `kronii` command wires it: a subcommand of the click group, its exit codes
intact (0 clean, 10 masked, 2 usage)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from kronii.launcher.cli.main import cli
from kronii.redaction.cli import EXIT_AMBER, EXIT_GREEN, EXIT_USAGE


def _kronii(*args: str, stdin: str = "") -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin, prog_name="kronii")
    return result.exit_code, result.stdout, result.stderr


def test_redact_is_a_subcommand_of_kronii() -> None:
    assert _kronii("redact", stdin="ping alice@exemple.com\n") == (
        EXIT_AMBER,
        "ping [EMAIL_1]\n",
        "kronii redact: masked 1 finding (EMAIL 1): 74% of the text\n",
    )


def test_redact_json_through_the_main_command() -> None:
    code, out, _ = _kronii("redact", "--json", stdin="nothing to see\n")
    assert code == EXIT_GREEN
    assert json.loads(out) == {
        "level": "green",
        "reason": "nothing found",
        "masked_share": 0.0,
        "findings": [],
    }


def test_a_malformed_rectangle_is_refused_with_the_subcommands_usage() -> None:
    code, _, err = _kronii("redact", "--image", "a.png", "-o", "b.png", "--mask", "1,2,3")
    assert code == EXIT_USAGE
    assert "Usage: kronii redact" in err and "'1,2,3' is not X0,Y0,X1,Y1" in err


def test_text_and_image_together_are_a_usage_error() -> None:
    code, out, err = _kronii("redact", "notes.txt", "--image", "a.png", "-o", "b.png")
    assert (code, out) == (EXIT_USAGE, "")
    assert err == "kronii redact: give either FILE (text) or --image IN, not both\n"
