"""Finding a runtime's session id in the files Codex and Claude Code write: rollouts and
transcripts in their real layout under tmp_path, and real child processes for /proc."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import pytest
from kronii.supervisor.adapters.processes import ProcessInfo, agent_process, descendants, process_info
from kronii.supervisor.adapters.sessions import (
    CLAUDE_FOLDER_MAX,
    FIRST_LINE_LIMIT,
    RolloutMeta,
    claude_folder_name,
    claude_session_id,
    codex_session_id,
    find_session_id,
    parse_rollout_head,
)

T0 = datetime(2026, 11, 24, 6, 37, 21, tzinfo=UTC).timestamp()
CWD = "/home/u/proj"


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def write_rollout(
    codex_home: Path,
    *,
    cwd: str,
    at: float,
    session_id: str = "",
    instructions: str = "You are Codex, based on GPT-5.",
    first_line: bytes | None = None,
    folder_at: float | None = None,
) -> str:
    """A rollout as Codex writes it: a local-day folder and file name, the session_meta first line
    (its base instructions make it long), then the first prompt's lines. Returns the session id."""
    session_id = session_id or str(uuid.uuid4())
    local = datetime.fromtimestamp(at if folder_at is None else folder_at)
    folder = codex_home / "sessions" / f"{local:%Y}" / f"{local:%m}" / f"{local:%d}"
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "timestamp": iso(at + 0.07),
        "ordinal": 0,
        "type": "session_meta",
        "payload": {
            "session_id": session_id,
            "id": session_id,
            "timestamp": iso(at),
            "cwd": cwd,
            "originator": "codex-tui",
            "cli_version": "0.169.0",
            "source": "cli",
            "base_instructions": {"text": instructions},
            "git": {"branch": "main"},
        },
    }
    head = first_line if first_line is not None else json.dumps(meta, separators=(",", ":")).encode()
    prompt = {
        "timestamp": iso(at + 1),
        "type": "event_msg",
        "payload": {"type": "user_message", "message": "hi"},
    }
    path = folder / f"rollout-{local:%Y-%m-%dT%H-%M-%S}-{session_id}.jsonl"
    path.write_bytes(head + b"\n" + json.dumps(prompt).encode() + b"\n")
    os.utime(path, (at + 1, at + 1))
    return session_id


def write_transcript(folder: Path, *, at: float, cwd: str, name: str = "") -> str:
    """A Claude Code transcript `<session-uuid>.jsonl` last written at `at`. Returns its id."""
    session_id = str(uuid.uuid4())
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        {"type": "summary", "summary": "earlier work", "leafUuid": str(uuid.uuid4())},
        {"type": "user", "cwd": cwd, "sessionId": session_id, "message": {"role": "user", "content": "hi"}},
    ]
    path = folder / (name or f"{session_id}.jsonl")
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    os.utime(path, (at, at))
    return session_id


# ---- Codex rollouts ------------------------------------------------------------------------------


def test_codex_session_is_the_newest_rollout_in_the_runtimes_cwd_after_it_started(tmp_path: Path) -> None:
    write_rollout(tmp_path, cwd=CWD, at=T0 + 10)
    newest = write_rollout(tmp_path, cwd=CWD, at=T0 + 26 * 3600)  # a day later, its own folder
    write_rollout(tmp_path, cwd=CWD, at=T0 + 600)
    assert codex_session_id(tmp_path, [CWD], T0, T0 + 27 * 3600) == newest


def test_codex_rollouts_of_another_cwd_are_ignored_even_when_newer(tmp_path: Path) -> None:
    ours = write_rollout(tmp_path, cwd=CWD, at=T0 + 10)
    write_rollout(tmp_path, cwd="/home/u/other", at=T0 + 20)
    write_rollout(tmp_path, cwd=CWD + "/sub", at=T0 + 30)
    assert codex_session_id(tmp_path, [CWD], T0, T0 + 60) == ours


def test_codex_rollouts_begun_before_the_process_started_are_ignored(tmp_path: Path) -> None:
    write_rollout(tmp_path, cwd=CWD, at=T0 - 30)
    write_rollout(tmp_path, cwd=CWD, at=T0 - 3 * 86400)
    assert codex_session_id(tmp_path, [CWD], T0, T0 + 60) == ""


def test_codex_rollout_a_second_before_the_recorded_start_still_counts(tmp_path: Path) -> None:
    # /proc's start time rests on a whole-second boot time.
    ours = write_rollout(tmp_path, cwd=CWD, at=T0 - 1)
    assert codex_session_id(tmp_path, [CWD], T0, T0 + 60) == ours


@pytest.mark.parametrize("size", [100 * 1024, FIRST_LINE_LIMIT - 1024, 3 * FIRST_LINE_LIMIT])
def test_codex_first_line_of_many_kilobytes_is_read(tmp_path: Path, size: int) -> None:
    ours = write_rollout(tmp_path, cwd=CWD, at=T0 + 10, instructions="x" * size)
    assert codex_session_id(tmp_path, [CWD], T0, T0 + 60) == ours


@pytest.mark.parametrize(
    "first_line",
    [
        b"not json {{{",
        b"\x00\xff\xfe garbage \x80",
        b"",
        b"[1, 2, 3]",
        b'{"timestamp":"2026-11-24T06:40:00.000Z","type":"turn_context","payload":{"cwd":"/home/u/proj"}}',
        b'{"type":"session_meta","payload":{"id":"9b0c8f4e-0000-4000-8000-000000000001","timestamp":"2026-11-24T06:40:00Z"}}',
        b'{"type":"session_meta","payload":{"id":"--help me","cwd":"/home/u/proj","timestamp":"2026-11-24T06:40:00Z"}}',
        b'{"type":"session_meta","payload":{"id":"9b0c8f4e-0000-4000-8000-000000000002","cwd":"/home/u/proj","timestamp":"yesterday"}}',
    ],
    ids=["text", "binary", "empty", "array", "other-type", "no-cwd", "option-like-id", "bad-time"],
)
def test_codex_corrupt_first_line_is_ignored(tmp_path: Path, first_line: bytes) -> None:
    ours = write_rollout(tmp_path, cwd=CWD, at=T0 + 10)
    write_rollout(tmp_path, cwd=CWD, at=T0 + 20, first_line=first_line)
    assert codex_session_id(tmp_path, [CWD], T0, T0 + 60) == ours


def test_codex_without_a_matching_rollout_finds_nothing(tmp_path: Path) -> None:
    assert codex_session_id(tmp_path / "missing", [CWD], T0, T0 + 60) == ""
    write_rollout(tmp_path, cwd="/elsewhere", at=T0 + 10)
    (tmp_path / "sessions" / "notes.txt").write_text("not a folder")
    (tmp_path / "sessions" / "2026" / "13").mkdir(parents=True)
    assert codex_session_id(tmp_path, [CWD], T0, T0 + 60) == ""


def test_codex_day_folders_before_the_process_started_are_not_read(tmp_path: Path) -> None:
    # Stamped after the start but filed years earlier: only the start day to today is listed.
    write_rollout(tmp_path, cwd=CWD, at=T0 + 10, folder_at=T0 - 3 * 365 * 86400)
    assert codex_session_id(tmp_path, [CWD], T0, T0 + 60) == ""


def test_codex_session_meta_is_read_from_the_first_line_as_codex_writes_it() -> None:
    line = (
        b'{"timestamp":"2026-11-24T06:37:21.826Z","ordinal":0,"type":"session_meta","payload":'
        b'{"session_id":"01a20c45-e0ad-7c92-8491-d71a74d0e621","id":"01a20c45-e0ad-7c92-8491-d71a74d0e621",'
        b'"timestamp":"2026-11-24T06:37:21.752Z","cwd":"/home/u/proj","originator":"codex-tui",'
        b'"cli_version":"0.169.0","base_instructions":{"text":"' + b"y" * 5000 + b'"}}}\n'
    )
    expected = RolloutMeta("01a20c45-e0ad-7c92-8491-d71a74d0e621", "/home/u/proj", T0 + 0.752)
    assert parse_rollout_head(line) == expected
    # Cut off inside the instructions (the read limit, or a line half written): its front suffices.
    assert parse_rollout_head(line[:600]) == expected


# ---- Claude Code transcripts ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        ("/home/u/proj", "-home-u-proj"),
        ("/home/u/my_proj/v1.2", "-home-u-my-proj-v1-2"),
        ("/home/u/a b/Ünï", "-home-u-a-b--n-"),
        ("/srv/x@y+z~/.hidden", "-srv-x-y-z---hidden"),
        ("C:\\Users\\dev\\proj", "C--Users-dev-proj"),
    ],
)
def test_claude_folder_replaces_each_character_but_ascii_letters_and_digits_with_a_dash(
    cwd: str, folder: str
) -> None:
    assert claude_folder_name(cwd) == folder


def test_claude_session_is_the_newest_transcript_in_the_encoded_cwd_folder_after_start(
    tmp_path: Path,
) -> None:
    cwd = "/home/u/my_proj/v1.2"
    projects = tmp_path / "projects"
    ours = projects / "-home-u-my-proj-v1-2"
    write_transcript(ours, at=T0 + 10, cwd=cwd)
    newest = write_transcript(ours, at=T0 + 20, cwd=cwd)
    write_transcript(ours, at=T0 - 300, cwd=cwd)
    write_transcript(ours, at=T0 + 30, cwd=cwd, name=f"agent-{uuid.uuid4()}.jsonl")
    write_transcript(ours, at=T0 + 30, cwd=cwd, name="notes.jsonl")
    (ours / f"{uuid.uuid4()}.jsonl.tmp").write_text("{}")
    (ours / f"{uuid.uuid4()}.jsonl").mkdir()
    write_transcript(projects / "-home-u-other", at=T0 + 40, cwd="/home/u/other")
    assert claude_session_id(tmp_path, [cwd], T0) == newest


def test_claude_transcripts_not_written_since_the_start_find_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / claude_folder_name(CWD)
    write_transcript(folder, at=T0 - 30, cwd=CWD)
    write_transcript(tmp_path / "projects" / "-home-u-other", at=T0 + 30, cwd="/home/u/other")
    assert claude_session_id(tmp_path, [CWD], T0) == ""
    assert claude_session_id(tmp_path / "missing", [CWD], T0) == ""


def test_claude_long_cwd_is_found_by_its_folder_prefix_and_the_cwd_inside(tmp_path: Path) -> None:
    cwd = "/home/u/" + "deep/" * 45 + "ours"
    twin = "/home/u/" + "deep/" * 45 + "theirs"  # same first 200 folder characters
    assert len(claude_folder_name(cwd)) > CLAUDE_FOLDER_MAX
    prefix = claude_folder_name(cwd)[:CLAUDE_FOLDER_MAX]
    ours = write_transcript(tmp_path / "projects" / f"{prefix}-1k2j3h4", at=T0 + 10, cwd=cwd)
    write_transcript(tmp_path / "projects" / f"{prefix}-9z8y7x6", at=T0 + 20, cwd=twin)
    assert claude_session_id(tmp_path, [cwd], T0) == ours


# ---- the agent among the runtime's processes -----------------------------------------------------


def proc(pid: int, name: str, *argv: str, started_at: float = T0) -> ProcessInfo:
    return ProcessInfo(pid=pid, cwd=CWD, started_at=started_at, env={}, argv=argv, name=name)


def test_agent_is_the_outermost_process_named_after_its_kind() -> None:
    shell = proc(10, "bash", "-bash")
    wrapper = proc(11, "node", "node", "/usr/lib/node_modules/@openai/codex/bin/codex.js")
    native = proc(
        12, "codex", "/usr/lib/node_modules/@openai/codex/vendor/x86_64-unknown-linux-musl/codex/codex"
    )
    nested = proc(13, "codex", "codex", "exec", "review")
    assert agent_process("codex", [shell, wrapper, native, nested]) == wrapper
    claude = proc(20, "claude", "claude", "--continue")
    assert agent_process("claude", [shell, claude]) == claude


def test_agent_without_its_name_is_what_the_shell_runs_else_the_registered_process() -> None:
    shell = proc(10, "bash", "bash")
    fake = proc(11, "python3", "python3", "tests/agents/fake_codex.py")
    assert agent_process("codex", [shell, fake]) == fake
    assert agent_process("codex", [shell]) == shell
    assert agent_process("codex", []) is None


# ---- real processes ------------------------------------------------------------------------------

Spawn = Callable[..., "subprocess.Popen[bytes]"]


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    started: list[subprocess.Popen[bytes]] = []

    def start(
        argv: list[str], *, cwd: Path, env: dict[str, str], stdin: IO[Any] | None = None
    ) -> subprocess.Popen[bytes]:
        child = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=stdin or subprocess.DEVNULL, start_new_session=True
        )
        started.append(child)
        # Popen returns once exec began; the kernel sets the new environment a moment later.
        wait_for(lambda: bool(getattr(process_info(child.pid), "env", None)))
        return child

    yield start
    for child in started:
        try:
            os.killpg(child.pid, signal.SIGKILL)  # the session each test started, wrapper and child
        except ProcessLookupError:
            pass
        child.wait()


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), **extra}


def project(tmp_path: Path, name: str = "proj") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    return Path(os.path.realpath(folder))


def wait_for(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def runs_sleep(pid: int) -> bool:
    """The wrapper's child has exec'd sleep (just after the fork it is still a copy of sh)."""
    kids = [process_info(kid) for kid in descendants(pid)]
    return any(kid is not None and kid.name == "sleep" and kid.argv for kid in kids)


def test_process_info_reads_a_real_childs_cwd_environment_and_start(tmp_path: Path, spawn: Spawn) -> None:
    cwd = project(tmp_path)
    before = time.time()
    child = spawn(["sleep", "30"], cwd=cwd, env=base_env(tmp_path, CODEX_HOME=str(tmp_path / "codex")))
    info = process_info(child.pid)
    assert info is not None
    assert info.pid == child.pid
    assert info.cwd == str(cwd)
    assert info.env["CODEX_HOME"] == str(tmp_path / "codex")
    assert info.env["HOME"] == str(tmp_path / "home")
    assert (info.name, info.argv) == ("sleep", ("sleep", "30"))
    assert before - 3 <= info.started_at <= time.time() + 3


def test_process_info_of_a_finished_process_is_none() -> None:
    child = subprocess.Popen(["true"])
    child.wait()
    assert process_info(child.pid) is None
    assert process_info(0) is None
    assert process_info(-1) is None


def test_descendants_finds_the_child_of_a_wrapper_shell(tmp_path: Path, spawn: Spawn) -> None:
    wrapper = spawn(["sh", "-c", "sleep 30; true"], cwd=project(tmp_path), env=base_env(tmp_path))
    wait_for(lambda: runs_sleep(wrapper.pid))
    [kid] = descendants(wrapper.pid)
    info = process_info(kid)
    assert info is not None and info.name == "sleep"
    assert descendants(kid) == []


def test_find_session_id_reads_codex_home_from_the_runtimes_environment(tmp_path: Path, spawn: Spawn) -> None:
    cwd, codex_root, home = project(tmp_path), tmp_path / "codex", tmp_path / "home"
    child = spawn(["sleep", "30"], cwd=cwd, env=base_env(tmp_path, CODEX_HOME=str(codex_root)))
    info = process_info(child.pid)
    assert info is not None
    ours = write_rollout(codex_root, cwd=str(cwd), at=info.started_at + 5)
    write_rollout(codex_root, cwd=str(tmp_path), at=info.started_at + 9)
    write_rollout(home / ".codex", cwd=str(cwd), at=info.started_at + 9)  # not the runtime's home
    assert find_session_id("codex", child.pid, str(cwd), home=home) == ours


def test_find_session_id_looks_through_a_wrapper_shell_to_the_agents_environment(
    tmp_path: Path, spawn: Spawn
) -> None:
    cwd, codex_root = project(tmp_path), tmp_path / "codex"
    # Only the child is given CODEX_HOME: the shell's own environment does not name it.
    wrapper = spawn(
        ["sh", "-c", 'CODEX_HOME="$0" sleep 30; true', str(codex_root)], cwd=cwd, env=base_env(tmp_path)
    )
    wait_for(lambda: runs_sleep(wrapper.pid))
    shell = process_info(wrapper.pid)
    assert shell is not None and "CODEX_HOME" not in shell.env
    ours = write_rollout(codex_root, cwd=str(cwd), at=time.time() + 2)
    assert find_session_id("codex", wrapper.pid, str(cwd), home=tmp_path / "home") == ours


def test_codex_rollout_the_runtime_holds_open_wins_also_for_a_resumed_session(
    tmp_path: Path, spawn: Spawn
) -> None:
    cwd, codex_root = project(tmp_path), tmp_path / "codex"
    resumed = write_rollout(codex_root, cwd=str(cwd), at=time.time() - 3 * 86400)
    [held] = (codex_root / "sessions").rglob(f"*{resumed}.jsonl")
    with held.open("ab") as appending:
        child = spawn(
            ["sleep", "30"], cwd=cwd, env=base_env(tmp_path, CODEX_HOME=str(codex_root)), stdin=appending
        )
    info = process_info(child.pid)
    assert info is not None
    write_rollout(codex_root, cwd=str(cwd), at=info.started_at + 5)  # newer, but not the one in use
    assert find_session_id("codex", child.pid, str(cwd), home=tmp_path / "home") == resumed


def test_codex_rollout_held_open_for_another_cwd_is_not_taken(tmp_path: Path, spawn: Spawn) -> None:
    cwd, codex_root = project(tmp_path), tmp_path / "codex"
    theirs = write_rollout(codex_root, cwd="/home/u/other", at=time.time() - 60)
    [held] = (codex_root / "sessions").rglob(f"*{theirs}.jsonl")
    with held.open("rb") as reading:
        child = spawn(
            ["sleep", "30"], cwd=cwd, env=base_env(tmp_path, CODEX_HOME=str(codex_root)), stdin=reading
        )
    assert find_session_id("codex", child.pid, str(cwd), home=tmp_path / "home") == ""


def test_find_session_id_reads_claude_config_dir_from_the_runtimes_environment(
    tmp_path: Path, spawn: Spawn
) -> None:
    cwd, config = project(tmp_path, "my_proj.v2"), tmp_path / "claude-config"
    child = spawn(["sleep", "30"], cwd=cwd, env=base_env(tmp_path, CLAUDE_CONFIG_DIR=str(config)))
    info = process_info(child.pid)
    assert info is not None
    ours = write_transcript(
        config / "projects" / claude_folder_name(str(cwd)), at=info.started_at + 3, cwd=str(cwd)
    )
    home_default = tmp_path / "home" / ".claude" / "projects" / claude_folder_name(str(cwd))
    write_transcript(home_default, at=info.started_at + 6, cwd=str(cwd))
    assert find_session_id("claude", child.pid, str(cwd), home=tmp_path / "home") == ours


def test_find_session_id_without_a_live_process_or_for_another_kind_is_empty(
    tmp_path: Path, spawn: Spawn
) -> None:
    cwd, codex_root = project(tmp_path), tmp_path / "codex"
    child = spawn(["sleep", "30"], cwd=cwd, env=base_env(tmp_path, CODEX_HOME=str(codex_root)))
    info = process_info(child.pid)
    assert info is not None
    write_rollout(codex_root, cwd=str(cwd), at=info.started_at + 5)
    assert find_session_id("python", child.pid, str(cwd)) == ""
    assert find_session_id("generic", child.pid, str(cwd)) == ""
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert find_session_id("codex", gone.pid, str(cwd), home=tmp_path / "home") == ""
