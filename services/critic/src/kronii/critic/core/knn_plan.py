"""How PostgreSQL answers a similar-record search of the long tier (pure), chosen by measurement
(bench/critic_knn.py; docs/benchmarks.md, "Similar-record search").

The critic itself searches in its own process (core/sign_index.py, through
adapters/indexed_long_tier.py: sign codes choose candidates, their int8 vectors are scored exactly,
and only the k rows found are read from PostgreSQL by primary key): no PostgreSQL query can meet a
p95 of 2 ms at 100,000 rows on a loaded machine, where one round trip alone costs 3-5 ms. This plan
is what PostgreSQL does when it is asked instead: while the in-process index loads at start (or
cannot be loaded), for a filter on text (the texts are not in RAM), and when
KRONII_CRITIC_KNN_IN_PROCESS is false.

pgvector's HNSW graph (0.6.2, m 16, ef_construction 64) finds the neighbours of a query that has real
ones (an error seen before: recall@5 0.995 at 100,000 records with ef_search 100) but not those of a
query with no neighbour above the noise: on random 384-d unit vectors it finds 12-15 % of the true five
at ef_search 100 and 63 % at ef_search 1000 (pgvector's limit, where it is nearly as slow as a
scan of every row). So:

- a table below ``exact_below`` rows is always scanned exactly (every row's cosine). At 1,000 rows
  a scan costs what the index does; at 10,000 the index is ~2x faster on a near-duplicate, and a
  scan alone ~1.5x faster on a query with no real neighbour (which above the switch pays for the
  index, then the scan): for an even mix of the two they cost the same there, while at 100,000
  rows a scan costs 8-9 times the index on a near-duplicate;
- above it the index answers first, and its answer stands when it holds ``k`` rows and the best is
  at least ``trust_above`` similar (far above the noise: the best of 100,000 random vectors is ~0.25);
  otherwise the same search runs again as an exact scan. A query with no real neighbour pays for
  both, and gets the true nearest rows.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_EF_SEARCH",
    "DEFAULT_EXACT_BELOW",
    "DEFAULT_TRUST_ABOVE",
    "KnnTuning",
    "index_answer_holds",
    "scan_exactly",
]

# The in-process search's candidate count (core/sign_index.py): here, so that reading the settings
# (the launcher and every CLI command do) does not import numpy.
DEFAULT_CANDIDATES = 3000
DEFAULT_EF_SEARCH = 100
DEFAULT_EXACT_BELOW = 10_000
DEFAULT_TRUST_ABOVE = 0.5
MAX_EF_SEARCH = 1000  # pgvector's upper bound for hnsw.ef_search


@dataclass(frozen=True)
class KnnTuning:
    ef_search: int = DEFAULT_EF_SEARCH
    exact_below: int = DEFAULT_EXACT_BELOW
    trust_above: float = DEFAULT_TRUST_ABOVE

    def __post_init__(self) -> None:
        if not 1 <= self.ef_search <= MAX_EF_SEARCH:
            raise ValueError(f"ef_search must be 1 to {MAX_EF_SEARCH}, not {self.ef_search}")
        if self.exact_below < 0:
            raise ValueError(f"exact_below must be 0 or more, not {self.exact_below}")


def scan_exactly(rows: int, tuning: KnnTuning) -> bool:
    """True when a table of `rows` rows is searched by a sequential scan rather than the index."""
    return rows < tuning.exact_below


def index_answer_holds(similarities: list[float], k: int, tuning: KnnTuning) -> bool:
    """True when the index's answer (cosines, best first) can stand: k rows, the best far above the
    noise. False sends the search to an exact scan."""
    return len(similarities) >= k and similarities[0] >= tuning.trust_above
