"""`kronii redact` as a click command: its own exit codes (0 clean, 10 masked, 20 withheld, 2 usage), one
sentence on standard error for what went wrong, the JSON it prints, completion of its options, and
`python -m kronii.redaction.cli`'s `main(argv)`."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from click.shell_completion import ShellComplete
from click.testing import CliRunner, Result
from kronii.redaction.cli import EXIT_AMBER, EXIT_GREEN, EXIT_RED, EXIT_USAGE, main, redact_command

PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)


def _redact(*args: str, stdin: str = "") -> Result:
    return CliRunner().invoke(redact_command, list(args), input=stdin, prog_name="kronii redact")


def test_clean_text_exits_0_and_is_written_unchanged() -> None:
    result = _redact(stdin="review the deployment\n")
    assert (result.exit_code, result.stdout) == (EXIT_GREEN, "review the deployment\n")


def test_masked_text_exits_10() -> None:
    result = _redact(stdin="mail maria.keller@fastmail.com today\n")
    assert (result.exit_code, result.stdout) == (EXIT_AMBER, "mail [EMAIL_1] today\n")


def test_escape_sequences_in_the_text_are_kept() -> None:
    # Redaction changes the findings and nothing else, even when stdout is not a terminal.
    result = _redact(stdin="\x1b[31mred\x1b[0m and bob@exemple.com\n")
    assert result.stdout == "\x1b[31mred\x1b[0m and [EMAIL_1]\n"


def test_a_withheld_text_exits_20_with_one_sentence_and_nothing_on_stdout() -> None:
    result = _redact("--strict", stdin=PRIVATE_KEY)
    assert (result.exit_code, result.stdout) == (EXIT_RED, "")
    assert result.stderr.startswith("kronii redact: withheld: ") and "Error:" not in result.stderr
    assert "b3Blbn" not in result.stderr


def test_json_gives_the_level_and_each_findings_fields_without_values() -> None:
    result = _redact("--json", stdin="write to bob@exemple.com\n")
    assert result.exit_code == EXIT_AMBER
    report = json.loads(result.stdout)
    assert set(report) == {"level", "reason", "masked_share", "findings"}
    assert report["level"] == "amber"
    assert [set(finding) for finding in report["findings"]] == [
        {"type", "start", "end", "detector", "confidence", "placeholder"}
    ]
    assert "bob@exemple.com" not in result.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--bogus",), "No such option '--bogus'"),
        (("--image", "in.png", "--region", "1,2,x,4", "--json"), "'1,2,x,4' is not X0,Y0,X1,Y1"),
        (("--image", "in.png", "--mask", "1,2,3", "--json"), "'1,2,3' is not X0,Y0,X1,Y1"),
    ],
)
def test_a_malformed_command_line_exits_2_with_the_commands_usage(args: tuple[str, ...], says: str) -> None:
    result = _redact(*args)
    assert result.exit_code == EXIT_USAGE
    assert "Usage: kronii redact [OPTIONS] [FILE]" in result.stderr and says in result.stderr


@pytest.mark.parametrize(
    ("args", "sentence"),
    [
        (("-o", "out.png"), "kronii redact: -o, --region and --mask go with --image"),
        (("--mask", "0,0,9,9"), "kronii redact: -o, --region and --mask go with --image"),
        (("--image", "in.png"), "kronii redact: --image needs -o OUT.png (or --json for the findings alone)"),
        (
            ("notes.txt", "--image", "in.png", "--json"),
            "kronii redact: give either FILE (text) or --image IN, not both",
        ),
    ],
)
def test_options_that_do_not_go_together_are_one_sentence_and_exit_2(
    args: tuple[str, ...], sentence: str
) -> None:
    result = _redact(*args, stdin="hi\n")
    assert (result.exit_code, result.stdout, result.stderr) == (EXIT_USAGE, "", sentence + "\n")


def test_a_missing_file_or_policy_is_a_usage_error(tmp_path: Path) -> None:
    missing = _redact(str(tmp_path / "nope.txt"))
    assert (missing.exit_code, missing.stderr) == (
        EXIT_USAGE,
        f"kronii redact: {tmp_path / 'nope.txt'} does not exist\n",
    )
    policy = _redact("--policy", str(tmp_path / "policy.toml"), stdin="hi\n")
    assert (
        policy.exit_code == EXIT_USAGE
        and "policy file" in policy.stderr
        and "does not exist" in policy.stderr
    )


def test_options_and_files_complete() -> None:
    def complete(args: list[str], incomplete: str) -> list[tuple[str, str]]:
        completer = ShellComplete(redact_command, {}, "kronii redact", "_KRONII_COMPLETE")
        return [(item.value, item.type) for item in completer.get_completions(args, incomplete)]

    assert complete([], "--im") == [("--image", "plain")]
    assert complete(["--image"], "sh") == [("sh", "file")]  # the shell lists the files
    assert complete(["--policy"], "") == [("", "file")]


def test_main_returns_the_exit_code_of_python_m(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--bogus"]) == EXIT_USAGE
    assert "Usage: kronii redact" in capsys.readouterr().err
    assert main(["-o", "x.png"]) == EXIT_USAGE
    assert capsys.readouterr().err == "kronii redact: -o, --region and --mask go with --image\n"
    assert main(["--help"]) == EXIT_GREEN
    assert "Exit codes: 0 nothing found, 10 findings masked" in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", ["cli.py"])  # no argv: the process's own arguments
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"call bob@exemple.com\n")))
    assert main() == EXIT_AMBER
    assert capsys.readouterr().out == "call [EMAIL_1]\n"


DENSE_NOTE = (
    "Call +1 415 555 0132 or maria.gonzalez@exemple.com, or dr.ruiz@clinic.exemple.org on 020 7946 0958.\n"
    "card 4111 1113 2437 0017, IBAN DE89 3704 0044 0532 0130 00, GB29 NWBK 6016 1331 9268 19\n"
    "IP 192.168.1.24, 10.20.30.40, fe80::1ff:fe23:4567:890a, mac 00:1A:2B:3C:4D:5E\n"
)


def test_a_note_mostly_of_personal_data_is_written_with_placeholders_not_withheld() -> None:
    result = _redact(stdin=DENSE_NOTE)
    assert result.exit_code == EXIT_AMBER, result.stderr
    assert "[EMAIL_1]" in result.stdout and "maria.gonzalez" not in result.stdout
    assert "4111" not in result.stdout and result.stdout.count("\n") == 3
    assert result.stderr.startswith("kronii redact: masked ") and "EMAIL 2" in result.stderr
    assert "% of the text" in result.stderr


def test_a_private_key_is_written_as_its_placeholder_by_default_and_withheld_with_strict() -> None:
    result = _redact(stdin=f"deploy key:\n{PRIVATE_KEY}\nend\n")
    assert result.exit_code == EXIT_AMBER, result.stderr
    assert "[PRIVATE_KEY_1]" in result.stdout and "b3Blbn" not in result.stdout + result.stderr
    assert result.stderr.startswith("kronii redact: masked 1 finding (PRIVATE_KEY 1)")
    strict = _redact("--strict", stdin=f"deploy key:\n{PRIVATE_KEY}\nend\n")
    assert (strict.exit_code, strict.stdout) == (EXIT_RED, "")
    assert strict.stderr == "kronii redact: withheld: must not leave: PRIVATE_KEY\n"


def test_strict_withholds_a_dense_note_the_default_writes() -> None:
    result = _redact("--strict", stdin=DENSE_NOTE)
    assert (result.exit_code, result.stdout) == (EXIT_RED, "")
    assert "masked share" in result.stderr


def test_a_policy_that_sets_a_share_limit_still_withholds_a_dense_note(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("red_share_threshold = 0.3\nred_share_min_chars = 50\n")
    result = _redact("--policy", str(policy), stdin=DENSE_NOTE)
    assert (result.exit_code, result.stdout) == (EXIT_RED, "")
    assert "masked share" in result.stderr
