"""One redaction engine per policy in a process (kronii.redaction.shared_engine): the services `kronii up` runs
in one process build the detectors once and compile the scan once, and the default users take it."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from kronii.redaction import RedactingLogFilter, RedactionPolicy, shared_engine


def test_the_same_policy_gives_the_same_engine_and_another_policy_its_own() -> None:
    assert shared_engine() is shared_engine(RedactionPolicy())
    other = RedactionPolicy(deny_terms=("project-falcon",))
    assert shared_engine(other) is shared_engine(RedactionPolicy(deny_terms=("project-falcon",)))
    assert shared_engine(other) is not shared_engine()
    assert "project-falcon" not in shared_engine(other).redact("see project-falcon").text


def test_threads_asking_at_once_all_get_one_engine() -> None:
    policy = RedactionPolicy(deny_terms=("threads-at-once",))
    with ThreadPoolExecutor(8) as pool:
        engines = list(pool.map(lambda _n: shared_engine(policy), range(32)))
    assert len({id(engine) for engine in engines}) == 1


def test_the_log_filter_uses_the_shared_engine_by_default() -> None:
    assert RedactingLogFilter()._engine is shared_engine()
