"""The RAM ring: the last N records, newest first, oldest evicted, vectors kept beside them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from kronii.critic.core.ring import DEFAULT_RING_SIZE, RecordRing

from tests.unit.critic.memory_history import near, random_unit, record


def test_the_default_ring_holds_the_last_200_records() -> None:
    ring = RecordRing()
    for number in range(250):
        ring.add(record(f"r{number}"))
    assert ring.capacity == DEFAULT_RING_SIZE == 200
    assert len(ring) == 200
    assert "r49" not in ring
    assert "r50" in ring


def test_adding_beyond_capacity_evicts_and_returns_the_oldest() -> None:
    ring = RecordRing(capacity=3)
    evicted = [ring.add(record(name)) for name in ("a", "b", "c", "d")]
    assert [item.record_id if item else None for item in evicted] == [None, None, None, "a"]
    assert [item.record_id for item in ring.newest_first()] == ["d", "c", "b"]


def test_adding_a_record_again_replaces_it_in_place_without_evicting() -> None:
    ring = RecordRing(capacity=3)
    for name in ("a", "b", "c"):
        ring.add(record(name))
    vector = random_unit(np.random.default_rng(1), 1)[0]
    assert ring.add(record("b", vector)) is None
    assert [item.record_id for item in ring.newest_first()] == ["c", "b", "a"]
    assert [item.record_id for item, _ in ring.knn(vector, 5)] == ["b"]


def test_knn_leaves_out_records_without_an_embedding() -> None:
    rng = np.random.default_rng(2)
    anchor = random_unit(rng, 1)[0]
    ring = RecordRing(capacity=10)
    ring.add(record("plain"))
    ring.add(record("far", random_unit(rng, 1)[0]))
    ring.add(record("close", near(anchor, 0.9, rng)))
    found = ring.knn(anchor, 5)
    assert [item.record_id for item, _ in found] == ["close", "far"]
    assert found[0][1] == pytest.approx(0.9, abs=1e-5)


def test_an_evicted_records_vector_is_not_found_any_more() -> None:
    rng = np.random.default_rng(3)
    anchor = random_unit(rng, 1)[0]
    ring = RecordRing(capacity=2)
    ring.add(record("old", anchor))
    ring.add(record("b", random_unit(rng, 1)[0]))
    ring.add(record("c"))
    assert "old" not in [item.record_id for item, _ in ring.knn(anchor, 5)]


def test_find_returns_the_newest_matches_up_to_take() -> None:
    ring = RecordRing(capacity=10)
    for number in range(6):
        ring.add(record(f"r{number}", exit_status=number % 2))
    assert [item.record_id for item in ring.find(lambda item: item.failed, 2)] == ["r5", "r3"]
    assert ring.find(lambda item: True, 0) == []


def test_a_record_keeps_its_fields_and_get_finds_it_by_id() -> None:
    ring = RecordRing(capacity=2)
    item = replace(record("x"), summary="make: no rule")
    ring.add(item)
    assert ring.get("x") == item
    assert ring.get("y") is None


def test_a_ring_of_no_records_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        RecordRing(capacity=0)
