"""The Shell page's use cases on an in-process critic: by meaning is the critic's own search with the
words; by text reads the critic's records and keeps those with every word as written; failures only
is passed on; each hit shows its cluster and its hint; a silent critic is a sentence."""

from __future__ import annotations

import pytest
from kronii.console.adapters.critic_api import hit_of
from kronii.console.core.shell import Cluster, ShellHit, ShellRecord
from kronii.console.usecases.search_shell import SearchShell
from kronii.foundation.errors import InvalidArgument

from tests.unit.console.console_records_fakes import FakeCritic


def _hit(
    rid: str, line: str, status: int = 0, trigger: str = "ok", at: float = 1.0, error: str = ""
) -> ShellHit:
    record = ShellRecord(rid, at, line, "~/src", status, 10, "bash", trigger, "", error, "", 0)
    return ShellHit(record, 0.5, 0.5, "ram")


HITS = [
    _hit("r1", "git push origin main", 1, "error", 3.0, "Permission denied (publickey)"),
    _hit("r2", "ls -la", 0, "ok", 2.0),
    _hit("r3", "git pull", 0, "ok", 1.0),
    _hit("r4", "mysql -p[MASKED]", 0, "secret", 4.0),
]


async def test_by_meaning_is_the_critics_own_search_with_the_words() -> None:
    critic = FakeCritic(HITS)

    view = await SearchShell(critic).search("  push   rejected ", "meaning", False)

    assert critic.asked == [("search", ("push rejected", 50, False))]
    assert view.query == "push rejected" and len(view.hits) == 4


async def test_by_text_keeps_the_records_with_every_word_newest_first() -> None:
    critic = FakeCritic(HITS)

    view = await SearchShell(critic).search("GIT", "text", False)
    denied = await SearchShell(critic).search("git denied", "text", False)

    assert critic.asked[0] == ("search", ("", 500, False))
    assert [hit.record.record_id for hit in view.hits] == ["r1", "r3"]
    assert [hit.record.record_id for hit in denied.hits] == ["r1"]


async def test_failures_only_is_passed_to_the_critic() -> None:
    critic = FakeCritic(HITS)

    view = await SearchShell(critic).search("", "meaning", True)

    assert critic.asked == [("search", ("", 50, True))]
    assert [hit.record.record_id for hit in view.hits] == ["r1"]


async def test_each_hit_shows_its_cluster_and_its_hint() -> None:
    clusters = [
        Cluster("20261205-1", "2026-12-05", "git push origin main", "Permission denied", ("r1", "r9"))
    ]

    view = await SearchShell(FakeCritic(HITS, clusters)).search("", "meaning", False)

    marked = {hit.record.record_id: hit for hit in view.hits}
    assert marked["r1"].cluster_id == "20261205-1" and marked["r2"].cluster_id == ""
    assert marked["r4"].record.hint == "a secret was typed on the command line (kept masked)"
    assert marked["r2"].record.hint == ""
    assert view.clusters == tuple(clusters)


async def test_similar_failures_are_asked_of_the_critic_for_that_record() -> None:
    critic = FakeCritic(HITS)

    view = await SearchShell(critic).similar("r1")

    assert critic.asked == [("similar", ("r1", 10))] and view.similar_to == "r1"


async def test_a_critic_that_does_not_answer_is_one_sentence() -> None:
    view = await SearchShell(FakeCritic(answering=False)).search("x", "meaning", False)

    assert view.hits == () and view.problems == (
        "critic is not answering: it cannot be reached (is `kronii up` running it?)",
    )


@pytest.mark.parametrize(("text", "mode"), [("x" * 201, "meaning"), ("git", "regex")])
async def test_a_search_too_long_or_of_an_unknown_kind_is_refused(text: str, mode: str) -> None:
    critic = FakeCritic(HITS)

    with pytest.raises(InvalidArgument):
        await SearchShell(critic).search(text, mode, False)

    assert critic.asked == []


def test_a_hit_from_the_critics_json_keeps_its_record_and_closeness() -> None:
    hit = hit_of(
        {"record": {"record_id": "r1", "timestamp": "2026-12-06T09:00:00Z", "command_line": "git push",
                    "exit_status": 1, "trigger": "error", "error_message": "denied"},
         "similarity": 0.91, "score": 1.2, "tier": "disk"},
        {},
    )  # fmt: skip

    assert hit.record.failed and hit.record.at == 1_796_547_600.0
    assert hit.similarity == pytest.approx(0.91) and hit.tier == "disk"
