"""The in-process similar-record index (core/sign_index.py) against numpy's exact search: the same
records for near-duplicates, recall on random queries, changes (upsert, removal, prune) seen by the
next search, and the record filters applied as PostgreSQL applies them."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt
import pytest
from kronii.critic.core.model import InvocationRecord, Trigger
from kronii.critic.core.retrieval import RecordFilter, exact_top_k
from kronii.critic.core.sign_index import IndexRows, SignCodeIndex

from tests.unit.critic.memory_history import BASE_MS, History, make_history, near, random_unit, record

Matrix = npt.NDArray[np.float32]


def _index(records: list[InvocationRecord], candidates: int = 3000) -> SignCodeIndex:
    index = SignCodeIndex(candidates, capacity=16)  # small: the index grows as rows come
    for start in range(0, len(records), 2500):
        index.upsert(IndexRows.of(records[start : start + 2500]))
    return index


def _exact(records: list[InvocationRecord], matrix: Matrix, query: Matrix, k: int) -> list[str]:
    return [records[row].record_id for row, _ in exact_top_k(query, matrix, k)]


@pytest.fixture(scope="module")
def history() -> History:
    return make_history(total=10_000, groups=50, seed=35)


def test_near_duplicates_get_the_records_and_cosines_of_an_exact_search(history: History) -> None:
    index = _index(history.records)
    rng = np.random.default_rng(1)
    for anchor in history.anchors.values():
        query = near(anchor, 0.95, rng)
        exact = exact_top_k(query, history.matrix, 5)
        found = index.search(query, 5)
        assert [record_id for record_id, _ in found] == [history.records[row].record_id for row, _ in exact]
        for (_, similarity), (_, true) in zip(found, exact, strict=True):
            assert similarity == pytest.approx(true, abs=0.003)


def test_random_queries_find_at_least_95_percent_of_the_true_five_in_20000_rows() -> None:
    rng = np.random.default_rng(20_000)
    matrix = random_unit(rng, 20_000)
    records = [record(f"r{n:05d}", vector) for n, vector in enumerate(matrix)]
    queries = random_unit(rng, 100)

    def recall(index: SignCodeIndex) -> float:
        found = 0
        for query in queries:
            exact = set(_exact(records, matrix, query, 5))
            found += len(exact & {record_id for record_id, _ in index.search(query, 5)})
        return found / (5 * len(queries))

    index = _index(records)
    assert recall(index) >= 0.95
    index.candidates = 100  # too few rows scored exactly: the sign codes alone miss most of them
    assert recall(index) < 0.8


def test_a_removed_record_is_not_found_and_an_upserted_one_is(history: History) -> None:
    index = _index(history.records)
    query = near(history.anchors["anchor-0"], 0.95, np.random.default_rng(2))
    first, second = (record_id for record_id, _ in index.search(query, 2))
    assert index.remove([first, "never-held"]) == 1
    assert first not in index and len(index) == len(history.records) - 1
    assert index.search(query, 1)[0][0] == second
    index.upsert(IndexRows.of([record("twin", query)]))
    twin, similarity = index.search(query, 1)[0]
    assert twin == "twin" and similarity == pytest.approx(1.0, abs=0.003)
    elsewhere = random_unit(np.random.default_rng(3), 1)[0]
    index.upsert(IndexRows.of([record("twin", elsewhere)]))  # the same id, another vector: replaced
    assert index.search(query, 1)[0][0] == second
    assert index.search(elsewhere, 1)[0][0] == "twin"
    assert len(index) == len(history.records)


def test_removing_before_a_time_forgets_exactly_the_older_rows(history: History) -> None:
    index = _index(history.records)
    before_ms = history.records[6000].timestamp_ms
    assert index.remove_before(before_ms) == 6000
    query = near(history.anchors["anchor-1"], 0.95, np.random.default_rng(4))
    kept = history.records[6000:]
    assert [record_id for record_id, _ in index.search(query, 5)] == _exact(
        kept, history.matrix[6000:], query, 5
    )


def test_a_record_without_a_usable_embedding_is_not_indexed() -> None:
    rows = IndexRows.of(
        [
            record("none"),
            record("zero", np.zeros(384, dtype=np.float32)),
            record("ok", random_unit(np.random.default_rng(5), 1)[0]),
        ]
    )
    assert rows.record_ids == ["ok"]


def _varied(history: History) -> list[InvocationRecord]:
    """The history's records with triggers, commands and exit statuses spread over them."""
    triggers = (Trigger.ERROR, Trigger.OK, Trigger.DANGEROUS)
    return [
        replace(
            item,
            trigger=triggers[n % 3],
            command_name=f"cmd{n % 7}",
            exit_status=0 if n % 2 else 1,
            timestamp_ms=BASE_MS + n,
        )
        for n, item in enumerate(history.records)
    ]


@pytest.mark.parametrize(
    "record_filter",
    [
        RecordFilter(failed=True),  # half the rows: more than the candidates, searched by sign codes
        RecordFilter(command_name="cmd3"),  # fewer rows than the candidates: all scored exactly
        RecordFilter(triggers=frozenset({Trigger.ERROR, Trigger.DANGEROUS}), failed=False),
        RecordFilter(since_ms=BASE_MS + 7000, command_name="cmd1"),
        RecordFilter(command_name="never-run"),
    ],
)
def test_a_filter_gives_the_exact_answer_among_the_rows_it_accepts(
    history: History, record_filter: RecordFilter
) -> None:
    """Every hit passes the filter, and the accepted near-duplicates (above 0.5: far above the
    noise, whose order an approximate search need not keep) come first, in the exact order."""
    records = _varied(history)
    index = _index(records, candidates=2000)
    accepted = [n for n, item in enumerate(records) if record_filter(item)]
    kept = [records[n] for n in accepted]
    rng = np.random.default_rng(6)
    planted_seen = 0
    for anchor in list(history.anchors.values())[:10]:
        query = near(anchor, 0.95, rng)
        found = index.search(query, 5, record_filter)
        exact = exact_top_k(query, history.matrix[accepted], 5)
        assert len(found) == min(5, len(accepted))
        assert all(record_filter(records[int(record_id[1:])]) for record_id, _ in found)
        planted = [kept[row].record_id for row, similarity in exact if similarity > 0.5]
        assert [record_id for record_id, _ in found[: len(planted)]] == planted
        planted_seen += len(planted)
    assert planted_seen > 0 or not accepted


def test_a_filter_on_text_is_left_to_postgresql(history: History) -> None:
    index = _index(history.records[:100])
    with_text = RecordFilter(text="make")
    assert not index.supports(with_text) and index.supports(RecordFilter(failed=True))
    with pytest.raises(ValueError, match="text"):
        index.search(history.matrix[0], 5, with_text)


def test_a_search_shared_with_the_helper_thread_weighs_every_row_and_scores_every_candidate_as_one_pass() -> (
    None
):
    """Above two chunks of rows (16,384 each) the passes over the codes and the scoring are jobs taken by
    two threads: every row's distance is the one a plain numpy reading of its signs gives, and the
    candidates' cosines are their int8 vectors' against the query, whoever computed them."""
    rng = np.random.default_rng(7)
    rows = 40_000  # three chunks: two threads take them in turn
    vectors = rng.standard_normal((rows, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = SignCodeIndex(3000)
    index.upsert(
        IndexRows(
            record_ids=[f"r{row}" for row in range(rows)],
            vectors=vectors,
            timestamps_ms=np.full(rows, BASE_MS, dtype=np.int64),
            triggers=[Trigger.ERROR] * rows,
            command_names=["git"] * rows,
            failed=np.ones(rows, dtype=bool),
        )
    )
    for _ in range(5):
        query = rng.standard_normal(384).astype(np.float32)
        query /= np.linalg.norm(query)
        levels = np.minimum(np.rint(np.abs(query) * 1.5 * np.sqrt(384)), 3)
        expected = ((vectors > 0) != (query > 0)) @ levels
        assert np.array_equal(index._distances(query), expected.astype(np.uint16))
        found = index.search(query, 5)
        quantized = np.rint(vectors / (np.abs(vectors).max(axis=1, keepdims=True) / 127.0))
        steps = np.abs(vectors).max(axis=1) / 127.0
        for record_id, similarity in found:
            row = int(record_id[1:])
            assert similarity == pytest.approx(float(quantized[row] @ query * steps[row]), abs=1e-4)
