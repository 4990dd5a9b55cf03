"""The orchestrator in process (usecases/orchestrate.py) over the real trigger use case, with the
pane, the stores and the clock faked (trigger_fakes.py, thread_fakes.py): whom it wakes, once per
wake, what it posts back, and how a person's draft, a pause, a block and a restart change it."""

from __future__ import annotations

from dataclasses import replace

from kronii.supervisor.core.agent_state import Delivery
from kronii.supervisor.core.model import PaneFacts
from kronii.supervisor.core.threads import PERSON, MessageKind, NewMessage
from kronii.supervisor.core.tokens import Claims
from kronii.supervisor.usecases.threads import ReadQuery

from tests.unit.supervisor.thread_fakes import OrchestratedWorld, orchestrated
from tests.unit.supervisor.trigger_fakes import T0, FakePanes, runtime, trigger_world

PERSON_CLAIMS = Claims("cli:tester", frozenset({"trigger", "read", "operate"}), frozenset({"*"}), T0 + 3600)
REVIEWER = Claims("runtime:rt-r", frozenset({"runtime:rt-r"}), frozenset({"ws"}), T0 + 3600)


def world(panes: FakePanes | None = None, **reviewer: object) -> OrchestratedWorld:
    records = (
        replace(runtime("rt-r", "%2", "reviewer"), workspace_id="ws", **reviewer),  # type: ignore[arg-type]
        replace(runtime("rt-e", "%3", "executioner"), workspace_id="ws"),
    )
    return orchestrated(trigger_world(panes or FakePanes(), *records))


async def post(
    w: OrchestratedWorld, body: str, to: str = "reviewer", kind: MessageKind = MessageKind.RESULT
) -> None:
    await w.desk.post(NewMessage("ws", "t1", "", body, kind, (to,)), PERSON_CLAIMS)


async def one_pass(w: OrchestratedWorld) -> None:
    await w.orchestrator.pass_dirty()
    await w.orchestrator.drain()


def typed(w: OrchestratedWorld) -> list[str]:
    return [text for _pane, text in w.world.panes.written]


async def test_a_message_to_an_agent_wakes_it_once_and_the_outcome_is_posted_back() -> None:
    w = world()
    await post(w, "done: parse() handles empty input")
    await one_pass(w)
    for _ in range(3):  # the note, and later passes: the same wake is never asked for again
        w.orchestrator.changed("ws", "t1")
        await one_pass(w)

    assert len(typed(w)) == 1
    assert typed(w)[0].startswith("[kronii] thread t1: 1 new for you: #1 person (result): done: parse()")
    assert w.store.bodies("ws", "t1", MessageKind.OUTCOME) == [
        "woke reviewer: delivered (tmux; acknowledged by output)"
    ]
    assert next(row[1:] for row in w.audit.rows if row[1] == "supervisor.wake")[1].startswith("wake-unread-")


async def test_a_new_message_after_the_first_wake_is_a_new_wake() -> None:
    w = world()
    await post(w, "first")
    await one_pass(w)
    await post(w, "second")
    await one_pass(w)
    # The first is still unread (this agent never reads): the second wake carries both.
    assert (
        len(typed(w)) == 2
        and "2 new for you: #1 person (result): first #3 person (result): second" in typed(w)[1]
    )


async def test_the_agents_read_cursor_moving_acknowledges_its_wake() -> None:
    w = world(FakePanes(seen=Delivery.PENDING))
    await post(w, "look at this")
    await w.orchestrator.pass_dirty()
    for _ in range(100):
        if typed(w):
            break
        await __import__("asyncio").sleep(0.01)
    read = await w.desk.read(ReadQuery("ws", "t1"), REVIEWER)
    await w.orchestrator.drain()

    assert read.cursor == 1 and [m.body for m in read.messages] == ["look at this"]
    assert w.store.bodies("ws", "t1", MessageKind.OUTCOME) == [
        "woke reviewer: delivered (tmux; acknowledged by cursor)"
    ]


async def test_a_persons_draft_defers_the_wake_and_says_so_once() -> None:
    w = world(FakePanes(PaneFacts(draft="my own note")))
    await post(w, "done")
    await one_pass(w)

    assert typed(w) == []
    assert w.store.bodies("ws", "t1", MessageKind.OUTCOME) == [
        "waking reviewer is deferred: a person is typing in its pane; kronii tries again when they stop"
    ]
    await one_pass(w)  # deferred: still the supervisor's; not asked for again
    assert len(w.store.bodies("ws", "t1", MessageKind.OUTCOME)) == 1


async def test_a_persons_work_in_a_workers_pane_sends_a_sync_to_the_coordinator_before_anyone_else_is_woken() -> (
    None
):
    w = world()
    w.world.registry.records["rt-c"] = replace(
        runtime("rt-c", "%4", "lead"), workspace_id="ws", role="coordinator"
    )
    await w.desk.note(NewMessage("ws", "t1", "lead", "plan", MessageKind.MESSAGE, ("reviewer",)))
    w.world.panes.facts = PaneFacts(draft="my own note")
    await one_pass(w)  # the reviewer's wake is deferred: the person is typing there
    w.world.panes.facts = PaneFacts()  # (the fake shows every pane alike: the others are free)
    w.orchestrator.agent_state_changed("rt-r", "idle", "draft")  # what the look at its pane read
    await one_pass(w)
    sync = [m for m in w.store.threads[("ws", "t1")].messages if m.kind is MessageKind.SYNC]
    assert [m.to for m in sync] == [("lead",)]
    assert [p for p, _ in w.world.panes.written] == ["%4"]  # the lead, woken for the sync
    w.orchestrator.agent_state_changed("rt-r", "draft", "draft")  # the same episode: no second note

    # The executioner's message waits until the coordinator has read the sync note.
    await w.desk.note(NewMessage("ws", "t1", "lead", "and you", MessageKind.MESSAGE, ("executioner",)))
    await one_pass(w)
    assert "%3" not in [p for p, _ in w.world.panes.written]
    lead = Claims("runtime:rt-c", frozenset({"runtime:rt-c"}), frozenset({"ws"}), T0 + 3600)
    await w.desk.read(ReadQuery("ws", "t1"), lead)
    await one_pass(w)
    assert "%3" in [p for p, _ in w.world.panes.written]  # then the executioner
    assert len([m for m in w.store.threads[("ws", "t1")].messages if m.kind is MessageKind.SYNC]) == 1


async def test_without_a_coordinator_the_sync_goes_to_the_worker_itself() -> None:
    w = world()
    await post(w, "done")
    await one_pass(w)
    w.orchestrator.agent_state_changed("rt-r", "idle", "draft")
    await one_pass(w)
    sync = [m for m in w.store.threads[("ws", "t1")].messages if m.kind is MessageKind.SYNC]
    assert [m.to for m in sync] == [("reviewer",)]


async def test_a_paused_agent_is_not_woken_until_it_is_resumed() -> None:
    w = world(paused=True)
    await post(w, "done")
    await one_pass(w)
    assert typed(w) == []
    await w.world.registry.change("rt-r", paused=False)
    w.orchestrator.changed("ws", "t1")
    await one_pass(w)
    assert len(typed(w)) == 1


async def test_nobody_is_woken_on_a_blocked_thread_and_the_person_is_told_once() -> None:
    told: list[str] = []

    async def blocked(view: object, reason: str) -> None:
        told.append(reason)

    w2 = world()
    w2.desk.on_blocked(blocked)
    for _n in range(3):
        await w2.desk.note(
            NewMessage("ws", "t2", "reviewer", "no test", MessageKind.FINDING, ("executioner",))
        )
    await w2.desk.note(NewMessage("ws", "t2", "executioner", "ok", MessageKind.MESSAGE, ("reviewer",)))
    await one_pass(w2)
    assert typed(w2) == [] and len(told) == 1 and "3 times" in told[0]
    assert "THREAD_AUTO_BLOCKED" in w2.store.bodies("ws", "t2", MessageKind.BLOCKED)[0]
    assert await w2.desk.unblock("ws", "t2", "looked at it", PERSON_CLAIMS) is True
    w2.orchestrator.changed("ws", "t2")
    await one_pass(w2)
    # Unblocked: the executioner (three findings) and the reviewer (its answer) are woken.
    assert sorted(pane for pane, _ in w2.world.panes.written) == ["%2", "%3"]


async def test_a_restarted_orchestrator_asks_for_the_same_wake_and_nothing_is_typed_twice() -> None:
    w = world()
    await post(w, "done")
    await one_pass(w)
    again = w.restart()
    again.changed("ws", "t1")
    await again.pass_dirty()
    await again.drain()
    assert len(typed(w)) == 1
    assert len(w.store.bodies("ws", "t1", MessageKind.OUTCOME)) == 1


async def test_an_agent_without_a_runtime_is_held_and_nothing_is_posted() -> None:
    w = world()
    await w.desk.post(NewMessage("ws", "t1", "", "hi", MessageKind.MESSAGE, ("ghost",)), PERSON_CLAIMS)
    await one_pass(w)
    assert typed(w) == [] and w.store.bodies("ws", "t1", MessageKind.OUTCOME) == []


async def test_the_person_posting_is_person_and_an_agent_posting_is_its_agent() -> None:
    w = world()
    posted = await w.desk.post(
        NewMessage("ws", "t1", "", "hello", MessageKind.MESSAGE, ("reviewer",)), PERSON_CLAIMS
    )
    by_agent = await w.desk.post(NewMessage("ws", "t1", "", "hi", MessageKind.MESSAGE, (PERSON,)), REVIEWER)
    assert (posted.message.author, by_agent.message.author) == (PERSON, "reviewer")
