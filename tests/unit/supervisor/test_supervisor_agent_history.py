"""An agent's own record of the prompts it took acknowledges a delivery (core/agent_history.py,
adapters/agent_histories.py): a kind declares where the agent writes it, as data; `generic` declares
nothing and is judged by its screen alone."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from kronii.supervisor.adapters.agent_histories import AgentHistories
from kronii.supervisor.adapters.agent_worlds import AgentWorlds
from kronii.supervisor.core.agent_history import HistoryMark, history_path, names_prompt, prompts_in
from kronii.supervisor.core.agent_kinds import DEFAULT_KINDS, KindBook
from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.agent_world import AgentWorld
from kronii.supervisor.core.model import RuntimeRecord
from kronii.supervisor.v1 import supervisor_pb2 as pb

from tests.unit.supervisor.trigger_fakes import CALLER, FakePanes, runtime, trigger_world

CODEX = DEFAULT_KINDS["codex"]


def request(trigger_id: str) -> pb.TriggerRuntimeRequest:
    return pb.TriggerRuntimeRequest(
        trigger_id=trigger_id, agent_id="agent", workspace_id="ws", prompt="run the tests"
    )


def test_the_history_file_is_the_first_whose_variables_the_agent_has() -> None:
    files = CODEX.history_files
    assert history_path(files, {"CODEX_HOME": "/a/codex", "HOME": "/h"}, "/w") == "/a/codex/history.jsonl"
    assert history_path(files, {"HOME": "/h"}, "/w") == "/h/.codex/history.jsonl"
    assert history_path(files, {}, "/w") == ""
    assert history_path(("$CODEX_HOME/history.jsonl",), {"CODEX_HOME": "rel"}, "/w") == "/w/rel/history.jsonl"


def test_prompts_are_read_from_json_lines_or_plain_lines_and_a_cut_off_line_is_left_out() -> None:
    data = b'{"text": "first"}\n{"text": "second"}\n{"text": "thi'
    assert prompts_in(data, "text") == ["first", "second"]
    assert prompts_in(b"one\ntwo\n", "") == ["one", "two"]
    assert names_prompt(["run  the\ntests"], "run the tests")
    assert not names_prompt(["run the tests please"], "run the tests")


def test_generic_keeps_no_history_and_codex_and_claude_declare_theirs() -> None:
    assert DEFAULT_KINDS["generic"].history_files == ()
    assert CODEX.history_field == "text" and DEFAULT_KINDS["claude"].history_field == "display"


async def test_a_new_entry_after_the_mark_in_the_agents_own_file_is_its_acknowledgement(
    tmp_path: Path,
) -> None:
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    (codex_home / "history.jsonl").write_text(json.dumps({"text": "run the tests"}) + "\n")
    worlds = AgentWorlds(tmp_path / "worlds", terminal=None)  # type: ignore[arg-type]
    (tmp_path / "worlds").mkdir()
    record = replace(runtime("rt-9", "%9"), kind="codex")
    await worlds.keep("rt-9", AgentWorld(env={"CODEX_HOME": str(codex_home)}, cwd=str(tmp_path)))
    histories = AgentHistories(worlds)

    mark = await histories.mark(record, CODEX)

    assert mark == HistoryMark(str(codex_home / "history.jsonl"), mark.size if mark else -1, "text")
    assert mark is not None and not await histories.took(mark, "run the tests"), (
        "an old entry is not this prompt's"
    )
    with (codex_home / "history.jsonl").open("a") as file:
        file.write(json.dumps({"session_id": "s", "ts": 1, "text": "run the tests"}) + "\n")
    assert await histories.took(mark, "run the tests")


class TookIt:
    """An agent whose own history already names the prompt."""

    async def mark(self, record: RuntimeRecord, kind: object) -> HistoryMark:
        return HistoryMark("/nowhere", 0, "text")

    async def took(self, mark: HistoryMark, prompt: str) -> bool:
        return prompt == "run the tests"


async def test_a_prompt_the_screen_cannot_confirm_is_delivered_when_the_agents_history_names_it() -> None:
    kinds = KindBook.from_overrides(
        {"generic": {"history_files": ["$HOME/h.jsonl"], "history_field": "text"}}
    )
    world = trigger_world(FakePanes(seen=Delivery.PENDING), histories=TookIt(), kinds=kinds)

    outcome = await world.desk.trigger(request("t-h"), CALLER)

    assert (outcome.result, outcome.acked_by) == ("delivered", "history")


async def test_without_a_declared_history_the_screen_alone_decides() -> None:
    world = trigger_world(FakePanes(), replace(runtime(), kind="generic"), histories=TookIt())

    outcome = await world.desk.trigger(request("t-s"), CALLER)

    assert (outcome.result, outcome.acked_by) == ("delivered", "output")
