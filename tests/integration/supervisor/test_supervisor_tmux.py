"""The tmux adapter against a real tmux server on a private socket, with the fake Codex TUI, a plain
`python3 -i` and a shell as the programs in the panes."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio
from kronii.supervisor.adapters.panes import PaneDriver
from kronii.supervisor.adapters.processes import pid_alive
from kronii.supervisor.adapters.tmux import TmuxControl
from kronii.supervisor.adapters.tmux_connection import TmuxError
from kronii.supervisor.core.agent_kinds import DEFAULT_KINDS
from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.payload import Payload, clean_prompt

from tests.agents.harness import FAKE_CODEX, AttachedClient, CodexBin, codex_bin, private_socket, wait_for

CODEX = DEFAULT_KINDS["codex"]
PYTHON = DEFAULT_KINDS["python"]
PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"


@pytest_asyncio.fixture
async def tmux() -> AsyncIterator[TmuxControl]:
    with private_socket() as socket:
        control = TmuxControl(socket)
        await control.start()
        try:
            yield control
        finally:
            await control.kill_server()


@pytest.fixture
def codex(tmp_path: Path) -> CodexBin:
    return codex_bin(tmp_path)


async def start_codex(tmux: TmuxControl, codex: CodexBin, window: str = "exec") -> tuple[str, int]:
    pane, pid = await tmux.start_agent(
        "agents_ws", window, [sys.executable, str(FAKE_CODEX)], env=codex.env()
    )

    async def ready() -> bool:
        _, screen = await tmux.screen(pane)
        return any(line.startswith("\u203a") for line in screen)

    await wait_for(ready, 10, "the fake Codex input line")
    return pane, pid


def payload(text: str) -> Payload:
    return clean_prompt(text, max_bytes=16384, literal_max_chars=200)


async def test_quoting_carries_any_text_through_the_control_connection_unchanged(
    tmux: TmuxControl, tmp_path: Path
) -> None:
    text = 'it\'s "quoted" ; \\back $HOME ~/x #{pane_id} {braces} %1\nsecond line \u00e9\u4e2d'
    await tmux.command("set-buffer", "-b", "kq", "--", text)
    await tmux.command("save-buffer", "-b", "kq", str(tmp_path / "buffer"))
    assert (tmp_path / "buffer").read_text(encoding="utf-8") == text


async def test_a_failed_command_raises_with_tmuxs_reason(tmux: TmuxControl) -> None:
    with pytest.raises(TmuxError, match="can't find"):
        await tmux.command("kill-window", "-t", "=no-such-session:7")
    assert await tmux.command("display-message", "-p", "ok") == ["ok"]


async def test_start_agent_runs_the_argv_without_a_shell_in_the_workspace_session(
    tmux: TmuxControl, codex: CodexBin
) -> None:
    pane, pid = await start_codex(tmux, codex)
    assert pid_alive(pid)
    probe = await tmux.probe(pane)
    assert probe.session == "agents_ws" and probe.pane_pid == pid
    assert probe.current_command.startswith("python")
    second, _ = await start_codex(tmux, codex, window="review")
    assert second != pane and (await tmux.probe(second)).session == "agents_ws"


async def test_short_line_arrives_as_exactly_its_bytes_then_the_named_enter(
    tmux: TmuxControl, codex: CodexBin
) -> None:
    pane, pid = await start_codex(tmux, codex)
    driver = PaneDriver(tmux)
    look = await driver.look(pane, pid, CODEX)
    assert look.facts.agent_in_foreground and look.facts.draft == ""
    prompt = payload("review PR 12, then report")
    before = await driver.baseline(pane, prompt, CODEX)
    await driver.write(pane, prompt, CODEX, attempt=1)
    await wait_for(lambda: len(codex.submits()) == 1, 5, "the submit")
    (entry,) = codex.submits()
    assert entry["prompt"] == "review PR 12, then report"
    assert CodexBin.raw(entry) == b"review PR 12, then report\r"
    assert entry["submit_at"] - entry["first_byte_at"] >= CODEX.submit_pause_secs - 0.01

    async def taken() -> bool:
        return await driver.check(pane, prompt, CODEX, before) is Delivery.SUBMITTED

    await wait_for(taken, 5, "the prompt's echo in the transcript")


async def test_multiline_prompt_with_control_characters_arrives_clean_by_bracketed_paste_and_submitted(
    tmux: TmuxControl, codex: CodexBin
) -> None:
    pane, _ = await start_codex(tmux, codex)
    raw = "Fix the \x1b[31mfailing\x1b[0m test:\r\n  tests/unit/x.py\x07\nthen run `make lint`\x00\n\n"
    prompt = clean_prompt(raw, max_bytes=16384, literal_max_chars=200)
    assert not prompt.literal
    await PaneDriver(tmux).write(pane, prompt, CODEX, attempt=1)
    await wait_for(lambda: len(codex.submits()) == 1, 5, "the submit")
    (entry,) = codex.submits()
    expected = "Fix the failing test:\n  tests/unit/x.py\nthen run `make lint`"
    assert entry["prompt"] == expected
    assert CodexBin.raw(entry) == PASTE_START + expected.encode() + PASTE_END + b"\r"


async def test_typed_not_submitted_is_detected_and_the_submit_key_sent_once_more_never_a_second_paste(
    tmux: TmuxControl, codex: CodexBin
) -> None:
    pane, _ = await start_codex(tmux, codex)
    hasty = replace(CODEX, submit_pause_secs=0.0)  # Enter lands inside Codex's 120 ms paste window
    driver = PaneDriver(tmux)
    prompt = clean_prompt("summarise the open review threads", max_bytes=16384, literal_max_chars=200)
    before = await driver.baseline(pane, prompt, hasty)
    await driver.write(pane, prompt, hasty, attempt=1)
    # Past the fake's 120 ms paste window (its clock, not ours).
    await asyncio.sleep(hasty.verify_delay_secs)
    assert await driver.check(pane, prompt, hasty, before) is Delivery.TYPED
    assert codex.submits() == []
    assert await driver.resubmit(pane, prompt, hasty)
    await wait_for(lambda: len(codex.submits()) == 1, 5, "the submit after the second Enter")
    (entry,) = codex.submits()
    assert entry["prompt"] == "summarise the open review threads"
    assert CodexBin.raw(entry) == b"summarise the open review threads\r\r", "typed once, Enter twice"


async def test_a_retry_with_the_text_still_in_the_box_only_presses_enter(
    tmux: TmuxControl, codex: CodexBin
) -> None:
    pane, _ = await start_codex(tmux, codex)
    hasty = replace(CODEX, submit_pause_secs=0.0)
    driver = PaneDriver(tmux)
    prompt = clean_prompt("check the build", max_bytes=16384, literal_max_chars=200)
    await driver.write(pane, prompt, hasty, attempt=1)
    await asyncio.sleep(0.15)
    retry = await driver.write(pane, prompt, CODEX, attempt=2)
    assert retry.submit_only
    await wait_for(lambda: len(codex.submits()) == 1, 5, "the submit")
    assert codex.submits()[0]["prompt"] == "check the build"


async def test_plain_python_repl_runs_the_line(tmux: TmuxControl) -> None:
    pane, pid = await tmux.start_agent("agents_ws", "py", [sys.executable, "-i", "-q"])

    async def prompt_shown() -> bool:
        _, screen = await tmux.screen(pane)
        return any(line.startswith(">>>") for line in screen)

    await wait_for(prompt_shown, 10, "the >>> prompt")
    driver = PaneDriver(tmux)
    assert (await driver.look(pane, pid, PYTHON)).facts.agent_in_foreground
    prompt = clean_prompt("print(6 * 7, 'kronii')", max_bytes=1000, literal_max_chars=200)
    before = await driver.baseline(pane, prompt, PYTHON)
    await driver.write(pane, prompt, PYTHON, attempt=1)

    async def answered() -> bool:
        _, screen = await tmux.screen(pane)
        return "42 kronii" in screen

    await wait_for(answered, 5, "python's answer")
    assert await driver.check(pane, prompt, PYTHON, before) is Delivery.SUBMITTED


async def test_a_shell_in_the_foreground_is_never_the_agent(tmux: TmuxControl) -> None:
    pane, pid = await tmux.start_agent("agents_ws", "sh", ["bash", "--norc", "--noprofile", "-i"])
    await wait_for(lambda: pid_alive(pid), 5, "the shell")
    look = await PaneDriver(tmux).look(pane, pid, DEFAULT_KINDS["generic"])
    assert look.facts.exists and not look.facts.agent_in_foreground
    assert look.facts.foreground_command == "bash"


async def test_an_agent_that_exited_to_its_shell_is_not_in_the_foreground(
    tmux: TmuxControl, codex: CodexBin
) -> None:
    shell_then_codex = ["bash", "--norc", "--noprofile", "-i"]
    pane, shell_pid = await tmux.start_agent("agents_ws", "mixed", shell_then_codex, env=codex.env())
    await tmux.send_literal(pane, f"exec 3>&1; {sys.executable} {FAKE_CODEX}")
    await tmux.send_keys(pane, ["Enter"])

    async def codex_up() -> bool:
        _, screen = await tmux.screen(pane)
        return any(line.startswith("\u203a") for line in screen)

    await wait_for(codex_up, 10, "the fake Codex")
    driver = PaneDriver(tmux)
    # Registered as the shell: the foreground group is the fake's, not the shell's.
    assert not (await driver.look(pane, shell_pid, CODEX)).facts.agent_in_foreground
    await tmux.send_keys(pane, ["C-d"])

    async def back_to_shell() -> bool:
        return (await driver.look(pane, shell_pid, CODEX)).facts.foreground_command == "bash"

    await wait_for(back_to_shell, 5, "the shell to be back in front")
    assert not (await driver.look(pane, shell_pid, CODEX)).facts.agent_in_foreground


async def test_a_person_typing_in_an_attached_client_shows_as_activity_and_a_draft(
    tmux: TmuxControl, codex: CodexBin
) -> None:
    pane, pid = await start_codex(tmux, codex)
    assert tmux.socket is not None
    person = AttachedClient(tmux.socket, "agents_ws")
    try:
        driver = PaneDriver(tmux)
        await wait_for(lambda: tmux_has_human_client(driver, pane, pid), 5, "the attached client")
        person.type("wip: also ")
        before = time.time()

        async def drafted() -> bool:
            return (await driver.look(pane, pid, CODEX)).facts.draft == "wip: also"

        await wait_for(drafted, 5, "the person's draft in the input line")
        facts = (await driver.look(pane, pid, CODEX)).facts
        assert facts.human_activity_at is not None and facts.human_activity_at >= int(before) - 1
        assert codex.submits() == []
    finally:
        person.close()


async def tmux_has_human_client(driver: PaneDriver, pane: str, pid: int) -> bool:
    look = await driver.look(pane, pid, CODEX)
    return look.facts.human_activity_at is not None
