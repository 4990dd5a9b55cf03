"""When the long tier scans exactly and when the HNSW index's answer stands (core/knn_plan.py), and
the critic's settings that tune it."""

from __future__ import annotations

import pytest
from kronii.critic.core.knn_plan import (
    DEFAULT_EF_SEARCH,
    DEFAULT_EXACT_BELOW,
    KnnTuning,
    index_answer_holds,
    scan_exactly,
)
from kronii.critic.settings import CriticSettings
from pydantic import ValidationError


def test_a_table_one_row_below_the_switch_is_scanned_exactly_and_one_at_it_uses_the_index() -> None:
    tuning = KnnTuning()
    assert scan_exactly(DEFAULT_EXACT_BELOW - 1, tuning)
    assert not scan_exactly(DEFAULT_EXACT_BELOW, tuning)
    assert scan_exactly(0, tuning)


def test_a_switch_of_zero_always_uses_the_index() -> None:
    assert not scan_exactly(0, KnnTuning(exact_below=0))


def test_the_index_answer_stands_only_with_k_rows_and_a_best_hit_far_above_the_noise() -> None:
    tuning = KnnTuning(trust_above=0.5)
    assert index_answer_holds([0.5, 0.3, 0.2], 3, tuning)
    assert not index_answer_holds([0.49, 0.3, 0.2], 3, tuning)  # a random query: best hit ~0.25
    assert not index_answer_holds([0.9, 0.3], 3, tuning)  # the filter or the graph left rows out
    assert not index_answer_holds([], 1, tuning)


def test_an_ef_search_outside_pgvectors_range_or_a_negative_switch_is_refused() -> None:
    with pytest.raises(ValueError, match="ef_search must be 1 to 1000"):
        KnnTuning(ef_search=0)
    with pytest.raises(ValueError, match="ef_search must be 1 to 1000"):
        KnnTuning(ef_search=1001)
    with pytest.raises(ValueError, match="exact_below must be 0 or more"):
        KnnTuning(exact_below=-1)


def test_the_settings_default_to_the_measured_tuning_and_read_their_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    defaults = CriticSettings()
    assert (defaults.knn_ef_search, defaults.knn_exact_below) == (DEFAULT_EF_SEARCH, DEFAULT_EXACT_BELOW)
    monkeypatch.setenv("KRONII_CRITIC_KNN_EF_SEARCH", "200")
    monkeypatch.setenv("KRONII_CRITIC_KNN_EXACT_BELOW", "0")
    tuned = CriticSettings()
    assert (tuned.knn_ef_search, tuned.knn_exact_below) == (200, 0)
    monkeypatch.setenv("KRONII_CRITIC_KNN_EF_SEARCH", "5000")
    with pytest.raises(ValidationError, match="knn_ef_search"):
        CriticSettings()
