"""`add_redact_parser` and `run_redact` as the main `kronii` command wires them."""

from __future__ import annotations

import argparse
import io
import json
import sys

import pytest
from kronii.redaction.cli import EXIT_AMBER, EXIT_GREEN, EXIT_USAGE, add_redact_parser, run_redact


def _kronii() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kronii")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("status").add_argument("--json", action="store_true")
    add_redact_parser(commands)
    return parser


def _stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


def test_redact_is_a_subcommand_of_kronii(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, "ping alice@example.com\n")
    args = _kronii().parse_args(["redact"])
    assert args.command == "redact"
    assert run_redact(args) == EXIT_AMBER
    assert capsys.readouterr().out == "ping [EMAIL_1]\n"


def test_redact_json_through_the_main_parser(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stdin(monkeypatch, "nothing to see\n")
    assert run_redact(_kronii().parse_args(["redact", "--json"])) == EXIT_GREEN
    assert json.loads(capsys.readouterr().out) == {
        "level": "green",
        "reason": "nothing found",
        "masked_share": 0.0,
        "findings": [],
    }


def test_a_malformed_rectangle_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        _kronii().parse_args(["redact", "--image", "a.png", "-o", "b.png", "--mask", "1,2,3"])
    assert stopped.value.code == EXIT_USAGE
    assert "X0,Y0,X1,Y1" in capsys.readouterr().err


def test_text_and_image_together_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    args = _kronii().parse_args(["redact", "notes.txt", "--image", "a.png", "-o", "b.png"])
    assert run_redact(args) == EXIT_USAGE
    assert "either FILE" in capsys.readouterr().err
