"""The Agents page's use cases against an in-process supervisor (the SupervisorAgents port): the
live states in the person's five words, triggers placed on their agent's card with their true
outcomes, the deferred queue, and every steer audited with the person as actor, refused or not."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from kronii.console.core.agents import Runtime, Trigger, TriggerAsk, live_state
from kronii.console.usecases.show_agents import ShowAgents
from kronii.console.usecases.steer_agent import SteerAgent
from kronii.foundation.errors import FailedPrecondition, InvalidArgument

PERSON = "person:uid:1000"


def _runtime(agent: str, state: str = "idle", status: str = "idle", rid: str = "") -> Runtime:
    return Runtime(rid or f"rt-{agent}", agent, "ws1", "python", agent, status, state)


def _trigger(tid: str, agent: str, result: str = "delivered", runtime: str = "", **more: Any) -> Trigger:
    return Trigger(tid, agent, "ws1", result, runtime_id=runtime, **more)


class FakeSupervisor:
    def __init__(self, runtimes: list[Runtime], triggers: list[Trigger]) -> None:
        self.runtimes_held = runtimes
        self.triggers_held = triggers
        self.asked: list[TriggerAsk] = []
        self.forced: list[tuple[str, str]] = []
        self.refuse: Exception | None = None

    async def runtimes(self) -> list[Runtime]:
        return list(self.runtimes_held)

    async def triggers(self, *, result: str = "", limit: int = 50) -> list[Trigger]:
        return [t for t in self.triggers_held if not result or t.result == result][:limit]

    async def pane(self, runtime_id: str, lines: int) -> list[str]:
        return [f"{runtime_id} line {n}" for n in range(lines)]

    async def trigger(self, ask: TriggerAsk) -> Trigger:
        if self.refuse:
            raise self.refuse
        self.asked.append(ask)
        return _trigger(ask.trigger_id, ask.agent_id, "delivered", detail="the REPL took it")

    async def set_paused(self, runtime_id: str, paused: bool, reason: str) -> Runtime:
        found = next(r for r in self.runtimes_held if r.runtime_id == runtime_id)
        return replace(found, paused=paused)

    async def force(self, trigger_id: str, reason: str) -> Trigger:
        if self.refuse:
            raise self.refuse
        self.forced.append((trigger_id, reason))
        return _trigger(trigger_id, "a", "delivered")


class FakeAudit:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    async def __call__(
        self, *, actor: str, action: str, subject: str = "", outcome: str = "", **detail: Any
    ) -> None:
        self.rows.append({"actor": actor, "action": action, "subject": subject, "outcome": outcome, **detail})


@pytest.mark.parametrize(
    ("status", "screen", "shown"),
    [
        ("idle", "idle", "idle"),
        ("active", "working", "working"),
        ("idle", "draft", "draft"),
        ("idle", "blocked", "dialog"),
        ("offline", "idle", "offline"),
        ("idle", "exited", "offline"),
        ("idle", "starting", "starting"),
        ("idle", "", "unknown"),
    ],
)
def test_the_supervisors_screen_word_is_shown_as_the_persons(status: str, screen: str, shown: str) -> None:
    assert live_state(status, screen) == shown


async def test_each_trigger_is_on_its_runtimes_card_newest_first_and_the_queue_apart() -> None:
    runtimes = [_runtime("b", "working", "active"), _runtime("a"), _runtime("c", status="offline")]
    triggers = [
        _trigger("t3", "a", "deferred", detail="AGENT_BUSY: waits"),
        _trigger("t2", "a", "delivered", runtime="rt-a"),
        _trigger("t1", "b", "timeout", runtime="rt-b", detail="the prompt may have run"),
        _trigger("t0", "gone", "failed"),
    ]
    view = await ShowAgents(FakeSupervisor(runtimes, triggers)).view()
    assert [card.runtime.agent_id for card in view.cards] == ["a", "b", "c"], "offline runtimes last"
    cards = {card.runtime.agent_id: card for card in view.cards}
    assert [t.trigger_id for t in cards["a"].triggers] == ["t3", "t2"]
    assert [t.detail for t in cards["b"].triggers] == ["the prompt may have run"]
    assert [t.trigger_id for t in view.deferred] == ["t3"]
    assert [t.trigger_id for t in view.orphans] == ["t0"], "a trigger of an agent no runtime holds is kept"


async def test_a_card_shows_at_most_its_share_of_recent_triggers() -> None:
    triggers = [_trigger(f"t{n}", "a", runtime="rt-a") for n in range(10)]
    view = await ShowAgents(FakeSupervisor([_runtime("a")], triggers), per_agent=3).view()
    assert [t.trigger_id for t in view.cards[0].triggers] == ["t0", "t1", "t2"]


async def test_a_trigger_from_the_page_is_sent_with_a_console_id_and_audited_with_its_outcome() -> None:
    supervisor, audit = FakeSupervisor([_runtime("a")], []), FakeAudit()
    outcome = await SteerAgent(supervisor, audit, lambda: "abc123").trigger(PERSON, "ws1", "a", "print(42)")
    assert outcome.result == "delivered"
    assert supervisor.asked == [
        TriggerAsk("console-abc123", "ws1", "a", "print(42)", "human: from the console")
    ]
    assert audit.rows == [{"actor": PERSON, "action": "console.agents.trigger", "subject": "ws1/a",
                           "outcome": "delivered", "trigger_id": "console-abc123", "chars": 9}]  # fmt: skip


@pytest.mark.parametrize(
    ("workspace", "agent", "prompt", "said"),
    [
        ("ws1", "a", "   ", "type a prompt"),
        ("ws1", "a", "x" * 16_001, "at most 16,000"),
        ("ws1", "../runtimes", "hi", "agent must be"),
        ("", "a", "hi", "workspace must be"),
    ],
)
async def test_a_bad_trigger_is_refused_with_a_sentence_and_nothing_is_sent(
    workspace: str, agent: str, prompt: str, said: str
) -> None:
    supervisor, audit = FakeSupervisor([], []), FakeAudit()
    with pytest.raises(InvalidArgument, match=said):
        await SteerAgent(supervisor, audit, lambda: "x").trigger(PERSON, workspace, agent, prompt)
    assert supervisor.asked == [] and audit.rows == []


async def test_force_gives_the_supervisor_a_human_override_reason() -> None:
    supervisor, audit = FakeSupervisor([], []), FakeAudit()
    steer = SteerAgent(supervisor, audit, lambda: "x")
    await steer.force(PERSON, "t9", "")
    await steer.force(PERSON, "t8", "human_override: it has waited enough")
    assert supervisor.forced == [
        ("t9", "human_override: forced from the console"),
        ("t8", "human_override: it has waited enough"),
    ]
    assert [row["action"] for row in audit.rows] == ["console.agents.force"] * 2
    assert audit.rows[0]["reason"] == "human_override: forced from the console"


async def test_a_refusal_of_the_supervisor_is_audited_as_refused_and_raised() -> None:
    supervisor, audit = FakeSupervisor([], []), FakeAudit()
    supervisor.refuse = FailedPrecondition("the supervisor refused: trigger 't1' is delivered, not deferred")
    with pytest.raises(FailedPrecondition, match="not deferred"):
        await SteerAgent(supervisor, audit, lambda: "x").force(PERSON, "t1", "now")
    assert audit.rows[0]["outcome"] == "refused" and "not deferred" in audit.rows[0]["error"]


async def test_pause_and_resume_are_audited_with_the_runtimes_new_state() -> None:
    supervisor, audit = FakeSupervisor([_runtime("a")], []), FakeAudit()
    steer = SteerAgent(supervisor, audit, lambda: "x")
    assert (await steer.pause(PERSON, "rt-a")).paused is True
    assert (await steer.resume(PERSON, "rt-a", "back to work")).paused is False
    assert [(r["action"], r["outcome"], r["reason"]) for r in audit.rows] == [
        ("console.agents.pause", "paused", "paused from the console"),
        ("console.agents.resume", "running", "back to work"),
    ]


async def test_the_pane_is_asked_for_its_last_lines_and_a_missing_runtime_is_refused() -> None:
    show = ShowAgents(FakeSupervisor([], []))
    assert await show.pane("rt-a", 2) == ["rt-a line 0", "rt-a line 1"]
    with pytest.raises(InvalidArgument):
        await show.pane("")
