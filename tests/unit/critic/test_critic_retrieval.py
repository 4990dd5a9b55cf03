"""Retrieval: exact KNN over the RAM tier, the hybrid score's boosts and recency decay, predicate
filters, the merge of near-duplicates and the greedy clusters."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from kronii.critic.core.clusters import greedy_clusters
from kronii.critic.core.model import InvocationRecord, Trigger
from kronii.critic.core.retrieval import (
    DAY_MS,
    Hit,
    HybridWeights,
    QueryContext,
    RecordFilter,
    by_command,
    by_trigger,
    exact_top_k,
    failed,
    hybrid_score,
    merge_near_duplicates,
    project_of,
    rank,
    since,
    text_contains,
    unit_vector,
)
from kronii.critic.core.ring import RecordRing

from tests.unit.critic.memory_history import BASE_MS, PLANTED_COSINES, make_history, near, random_unit, record

NOW = BASE_MS + 30 * DAY_MS
NO_RECENCY = HybridWeights(recency=0.0)


@pytest.fixture(scope="module")
def history():  # type: ignore[no-untyped-def]
    return make_history()


def test_ram_tier_knn_finds_the_planted_neighbours_of_10000_records_nearest_first(history) -> None:  # type: ignore[no-untyped-def]
    ring = RecordRing(capacity=len(history.records))
    for item in history.records:
        ring.add(item)
    hits = 0
    for name, anchor in history.anchors.items():
        found = [item.record_id for item, _ in ring.knn(anchor, 5)]
        exact = [f"r{int(index):05d}" for index in np.argsort(-(history.matrix @ anchor))[:5]]
        hits += len(set(found) & set(exact))
        assert found == history.planted[name]
    assert hits / (5 * len(history.anchors)) >= 0.95


def test_ram_tier_similarities_are_the_planted_cosines(history) -> None:  # type: ignore[no-untyped-def]
    ring = RecordRing(capacity=len(history.records))
    for item in history.records:
        ring.add(item)
    similarities = [similarity for _, similarity in ring.knn(history.anchors["anchor-3"], 5)]
    assert similarities == pytest.approx(PLANTED_COSINES, abs=1e-4)


def test_exact_top_k_orders_best_first_and_caps_at_the_rows() -> None:
    matrix = np.eye(384, dtype=np.float32)[:3]
    query = unit_vector(np.array([0.1, 0.7, 0.2] + [0.0] * 381))
    assert [index for index, _ in exact_top_k(query, matrix, 10)] == [1, 2, 0]
    assert exact_top_k(query, matrix, 0) == []


def test_unit_vector_rejects_zero_and_wrong_sizes() -> None:
    with pytest.raises(ValueError, match="non-zero"):
        unit_vector([0.0] * 384)
    with pytest.raises(ValueError, match="384"):
        unit_vector([1.0, 2.0])


def _pair(
    rng: np.random.Generator, **better_fields: Any
) -> tuple[list[tuple[InvocationRecord, float, str]], str]:
    """A record at cosine 0.80 and one at 0.76 sharing `better_fields` with the query context."""
    anchor = random_unit(rng, 1)[0]
    more_similar = record(
        "more", near(anchor, 0.80, rng), trigger=Trigger.OK, command_name="git", cwd="/srv/app/x"
    )
    boosted = record(
        "boosted", near(anchor, 0.76, rng), trigger=Trigger.OK, command_name="git", cwd="/srv/app/x"
    )
    boosted = replace(boosted, **better_fields)
    return [(more_similar, 0.80, "ram"), (boosted, 0.76, "ram")], "boosted"


CONTEXT = QueryContext(
    now_ms=NOW, trigger=Trigger.ERROR, command_name="make", cwd="/home/u/src/kronii/services"
)


@pytest.mark.parametrize(
    "shared",
    [
        {"trigger": Trigger.ERROR},
        {"command_name": "make"},
        {"cwd": "/home/[USERNAME_1]/src/kronii/libs/common"},
    ],
    ids=["same trigger", "same command", "same project"],
)
def test_each_boost_lifts_a_slightly_less_similar_record_above_the_other(shared: dict[str, Any]) -> None:
    candidates, boosted = _pair(np.random.default_rng(1), **shared)
    weights = HybridWeights(same_trigger=0.05, same_command=0.05, same_project=0.05, recency=0.0)
    plain = rank(candidates, QueryContext(now_ms=NOW), weights, 2)
    assert plain[0].record.record_id == "more"
    boosted_order = rank(candidates, CONTEXT, weights, 2)
    assert [hit.record.record_id for hit in boosted_order] == [boosted, "more"]
    assert boosted_order[0].score == pytest.approx(0.76 + 0.05)


def test_a_boost_does_not_lift_an_unrelated_record_above_a_related_one() -> None:
    related = record(
        "related", timestamp_ms=NOW - 30 * DAY_MS, trigger=Trigger.OK, command_name="ls", cwd="/x/y"
    )
    unrelated = record(
        "unrelated", timestamp_ms=NOW, trigger=Trigger.ERROR, command_name="make", cwd="/home/u/src/kronii"
    )
    ranked = rank([(related, 0.75, "ram"), (unrelated, 0.25, "ram")], CONTEXT, HybridWeights(), 2)
    assert ranked[0].record.record_id == "related"


def test_recency_decay_halves_the_recency_bonus_every_half_life() -> None:
    weights = HybridWeights(recency=0.2, half_life_days=7.0, same_trigger=0, same_command=0, same_project=0)
    context = QueryContext(now_ms=NOW)
    fresh = hybrid_score(0.5, record("a", timestamp_ms=NOW), context, weights)
    week = hybrid_score(0.5, record("b", timestamp_ms=NOW - 7 * DAY_MS), context, weights)
    fortnight = hybrid_score(0.5, record("c", timestamp_ms=NOW - 14 * DAY_MS), context, weights)
    assert fresh == pytest.approx(0.7)
    assert week == pytest.approx(0.6)
    assert fortnight == pytest.approx(0.55)


def test_recency_orders_two_equally_similar_records_newest_first() -> None:
    old = record("old", timestamp_ms=NOW - 20 * DAY_MS)
    new = record("new", timestamp_ms=NOW - DAY_MS)
    ranked = rank([(old, 0.9, "disk"), (new, 0.9, "disk")], QueryContext(now_ms=NOW), HybridWeights(), 2)
    assert [hit.record.record_id for hit in ranked] == ["new", "old"]


@pytest.mark.parametrize(
    ("cwd", "project"),
    [
        ("/home/[USERNAME_1]/src/kronii/services/critic", "~/src/kronii"),
        ("/root/x", "~/x"),
        ("~/src/kronii/", "~/src/kronii"),
        ("/home/ann", "~"),
        ("/etc/nginx/sites-enabled", "/etc/nginx"),
        ("/tmp", "/tmp"),
        ("/", "/"),
    ],
)
def test_project_is_the_first_two_parts_below_home_or_root(cwd: str, project: str) -> None:
    assert project_of(cwd) == project


def test_rank_keeps_one_hit_per_record_and_prefers_the_ram_copy() -> None:
    item = record("same")
    ranked = rank([(item, 0.9, "disk"), (item, 0.9, "ram")], QueryContext(now_ms=NOW), HybridWeights(), 5)
    assert [(hit.record.record_id, hit.tier) for hit in ranked] == [("same", "ram")]


def test_near_duplicates_of_one_cluster_merge_into_the_best_scored() -> None:
    hits = [
        Hit(record("a", command_line="pip install x"), 0.9, 0.9, "ram"),
        Hit(record("b", command_line="pip install y"), 0.95, 0.95, "ram"),
        Hit(record("c", command_line="cargo build"), 0.5, 0.5, "ram"),
    ]
    merged = merge_near_duplicates(hits, {"a": "day-1", "b": "day-1"})
    assert [hit.record.record_id for hit in merged] == ["b", "c"]
    assert len(merge_near_duplicates(hits, {})) == 3


def test_the_same_line_failing_the_same_way_merges_without_a_cluster() -> None:
    hits = [
        Hit(record("a", command_line="make", error_message="no rule"), 0.9, 0.9, "ram"),
        Hit(record("b", command_line="make", error_message="no rule"), 0.8, 0.8, "disk"),
        Hit(record("c", command_line="make", error_message="other"), 0.7, 0.7, "disk"),
    ]
    assert [hit.record.record_id for hit in merge_near_duplicates(hits, {})] == ["a", "c"]


def test_merging_happens_before_taking_k_so_duplicates_do_not_use_up_places() -> None:
    candidates: list[tuple[InvocationRecord, float, str]] = [
        (record(f"d{n}", command_line="make", error_message="same"), 0.9 - n / 100, "ram") for n in range(5)
    ]
    candidates.append((record("other", command_line="ls"), 0.1, "ram"))
    ranked = rank(candidates, QueryContext(now_ms=NOW), NO_RECENCY, 2)
    assert [hit.record.record_id for hit in ranked] == ["d0", "other"]


def test_predicates_select_by_trigger_command_failure_time_and_text() -> None:
    records = [
        record("ok", trigger=Trigger.OK, command_name="ls", exit_status=0, timestamp_ms=NOW - 10),
        record("err", trigger=Trigger.ERROR, command_name="make", error_message="No rule to make target"),
        record(
            "nf", trigger=Trigger.COMMAND_NOT_FOUND, command_name="gti", exit_status=127, timestamp_ms=NOW
        ),
    ]

    def ids(predicate: RecordFilter) -> list[str]:
        return [item.record_id for item in records if predicate(item)]

    assert ids(by_trigger(Trigger.ERROR, Trigger.COMMAND_NOT_FOUND)) == ["err", "nf"]
    assert ids(by_command("ls")) == ["ok"]
    assert ids(failed()) == ["err", "nf"]
    assert ids(failed(False)) == ["ok"]
    assert ids(since(NOW - 10)) == ["ok", "nf"]
    assert ids(text_contains("NO RULE")) == ["err"]
    assert ids(failed() & since(NOW - 10)) == ["nf"]
    assert ids(RecordFilter()) == ["ok", "err", "nf"]


def test_combining_filters_that_cannot_both_match_is_refused() -> None:
    with pytest.raises(ValueError, match="command name"):
        by_command("ls") & by_command("make")
    with pytest.raises(ValueError, match="triggers"):
        by_trigger(Trigger.OK) & by_trigger(Trigger.ERROR)
    assert (by_trigger(Trigger.OK, Trigger.ERROR) & by_trigger(Trigger.ERROR)).triggers == {Trigger.ERROR}
    assert (since(5) & since(9)).since_ms == 9


def test_greedy_clusters_group_the_planted_near_duplicates_and_leave_singles_out() -> None:
    rng = np.random.default_rng(7)
    first, second = random_unit(rng, 2)
    items = [
        ("a1", first),
        ("x", random_unit(rng, 1)[0]),
        ("a2", near(first, 0.96, rng)),
        ("b1", second),
        ("a3", near(first, 0.95, rng)),
        ("b2", near(second, 0.99, rng)),
        ("far", near(first, 0.80, rng)),
    ]
    groups = greedy_clusters([(name, tuple(vector)) for name, vector in items], threshold=0.92)
    assert groups == [["a1", "a2", "a3"], ["b1", "b2"]]
