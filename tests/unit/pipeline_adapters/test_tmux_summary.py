"""The tmux plugin's summary of a pane: last command, errors and tracebacks, test results; and its
redaction before anything leaves the plugin (a fake pane; the real tmux is in the integration tests)."""

from __future__ import annotations

import pytest
from kronii.pipeline.adapters.tmux_plugin import PaneCapture, TmuxPlugin, summarize_pane
from kronii.pipeline.v1 import pipeline_pb2 as pb
from kronii.redaction import WITHHELD_TEXT

PYTEST_RUN = """\
alice@box:~/proj$ ls
README.md  src  tests
alice@box:~/proj$ pytest -q tests/test_parser.py
..F.
=================================== FAILURES ===================================
E       AssertionError: assert 2 == 3
Traceback (most recent call last):
  File "/home/alice/proj/src/parser.py", line 12, in parse
ValueError: bad token at column 7
=========================== 1 failed, 3 passed in 0.12s ===========================
alice@box:~/proj$ """.splitlines()


def test_the_last_command_is_the_last_prompt_line_with_a_command() -> None:
    assert summarize_pane(PYTEST_RUN).last_command == "pytest -q tests/test_parser.py"


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("$ make test", "make test"),
        ("(venv) bob@host:/srv/app$ python manage.py migrate", "python manage.py migrate"),
        ("root@box:/# systemctl restart nginx", "systemctl restart nginx"),
        ("~/proj \u276f cargo build", "cargo build"),
        ("bash-5.2$ go test ./...", "go test ./..."),
        ("# Heading of a README", ""),
        ("50% done, 3 left", ""),
        ("Total cost: 5$ for two", ""),
    ],
)
def test_prompts_of_common_shells_are_recognised_and_output_is_not(line: str, command: str) -> None:
    assert summarize_pane([line]).last_command == command


def test_errors_and_tracebacks_are_kept_last_ones_first_distinct() -> None:
    errors = summarize_pane(PYTEST_RUN).errors
    assert "Traceback (most recent call last):" in errors
    assert "ValueError: bad token at column 7" in errors
    assert "E       AssertionError: assert 2 == 3" in errors
    lines = [f"error: thing {n} failed" for n in range(6)] + ["error: thing 2 failed"]
    assert summarize_pane(lines).errors == (
        "error: thing 4 failed",
        "error: thing 5 failed",
        "error: thing 2 failed",
    )


@pytest.mark.parametrize(
    ("output", "tests"),
    [
        (PYTEST_RUN, "1 failed, 3 passed"),
        (["5 passed, 1 warning in 0.40s"], "5 passed, 1 warning"),
        (["Ran 4 tests in 0.002s", "", "FAILED (failures=1)"], "Ran 4 tests: FAILED (failures=1)"),
        (["Ran 4 tests in 0.002s", "", "OK"], "Ran 4 tests: OK"),
        (["OK"], ""),
        (
            ["test result: ok. 12 passed; 0 failed; 0 ignored"],
            "test result: ok. 12 passed; 0 failed; 0 ignored",
        ),
        (["Tests:       1 failed, 9 passed, 10 total"], "Tests:       1 failed, 9 passed, 10 total"),
        (["ok  \texample.com/pkg\t0.013s"], "ok  \texample.com/pkg\t0.013s"),
    ],
)
def test_the_last_test_result_line_is_found_for_common_runners(output: list[str], tests: str) -> None:
    assert summarize_pane(output).tests == tests


def test_a_quiet_pane_says_so() -> None:
    assert summarize_pane(["", "hello"]).text() == "no command or error in the pane's recent output"


class FakePane:
    def __init__(self, lines: list[str], command: str = "bash") -> None:
        self.capture_result = PaneCapture("%1", "$0", command, tuple(lines))

    async def capture(self) -> PaneCapture | None:
        return self.capture_result


async def test_the_snapshot_summary_is_redacted_before_it_leaves() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    lines = [
        f"alice@box:~/proj$ git push https://{token}@github.com/alice/proj",
        "fatal: Authentication failed",
    ]
    plugin = TmuxPlugin(FakePane(lines), clock=lambda: 1000.0)
    reply = await plugin.snapshot(pb.PluginSnapshotRequest(detail=pb.SNAPSHOT_DETAIL_FULL))
    assert token not in reply.summary and token not in reply.full_text
    assert token not in reply.attributes["last_command"]
    assert "git push" in reply.summary and "fatal: Authentication failed" in reply.summary
    assert reply.redaction_level == "amber"
    assert reply.full_text.endswith("fatal: Authentication failed")
    assert reply.taken_at.seconds == 1000


async def test_a_pane_graded_red_yields_only_its_level() -> None:
    lines = ["$ cat id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA", "-----END OPENSSH PRIVATE KEY-----", "error: permissions 0644 too open"]  # fmt: skip
    reply = await TmuxPlugin(FakePane(lines)).snapshot(
        pb.PluginSnapshotRequest(detail=pb.SNAPSHOT_DETAIL_FULL)
    )
    assert reply.redaction_level == "red"
    assert reply.summary == WITHHELD_TEXT
    assert reply.full_text == "" and not reply.attributes


async def test_a_summary_request_carries_no_full_text() -> None:
    reply = await TmuxPlugin(FakePane(PYTEST_RUN)).snapshot(pb.PluginSnapshotRequest())
    assert reply.detail == pb.SNAPSHOT_DETAIL_SUMMARY
    assert reply.full_text == ""
    assert reply.summary.startswith("last command: pytest -q tests/test_parser.py; tests: 1 failed, 3 passed")
    assert reply.attributes["pane_command"] == "bash"
