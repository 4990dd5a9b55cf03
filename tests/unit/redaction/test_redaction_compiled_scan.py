"""The compiled scan changes no finding: every corpus of the redaction tests gives the same findings (type, start,
end, detector) and the same level with it as without it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors import Candidate, CandidatePart, IbanDetector, ScanText
from kronii.redaction.detectors._base import line_local_findings

from tests.unit.redaction.compiled_scan_corpora import Found, corpora, findings


def _compiled_engine() -> RedactionEngine:
    """An engine with the compiled scan compiled now and serving every text, the shortest too."""
    engine = RedactionEngine(compiled_from=0)
    assert engine.compiled_scan  # asking compiles it
    return engine


COMPILED = _compiled_engine()
PLAIN = RedactionEngine(compiled_scan=False)


def _first_difference(texts: tuple[str, ...], with_scan: list[Found], without: list[Found]) -> str:
    for index, (found, expected) in enumerate(zip(with_scan, without, strict=True)):
        if found != expected:
            return (
                f"text {index} ({texts[index][:80]!r}...): only with the scan {sorted(set(found) - set(expected))}, "
                f"only without it {sorted(set(expected) - set(found))}"
            )
    return ""


def test_the_compiled_scan_runs_here() -> None:
    # Otherwise the comparisons below would compare the plain path with itself.
    assert COMPILED.compiled_scan
    assert not PLAIN.compiled_scan


@pytest.mark.parametrize("name", sorted(corpora()))
def test_every_corpus_gives_the_same_findings_with_the_compiled_scan_as_without(name: str) -> None:
    texts = corpora()[name]
    with_scan, without = findings(COMPILED, texts), findings(PLAIN, texts)
    assert with_scan == without, _first_difference(texts, with_scan, without)


_NEVER = CandidatePart("never matches", (r"\x00{3}never\x00{3}",))


class _BlindIban(IbanDetector):
    """An IBAN detector whose candidate pattern is wrong: it matches no line that holds an IBAN."""

    candidate_parts = (_NEVER,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        return line_local_findings(scan, self._find, _NEVER)


def test_a_candidate_pattern_that_misses_findings_fails_the_comparison() -> None:
    texts = corpora()["generated samples"]
    with_scan = RedactionEngine(detectors=[_BlindIban()], compiled_from=0)
    without = RedactionEngine(detectors=[_BlindIban()], compiled_scan=False)
    assert with_scan.compiled_scan
    found, expected = findings(with_scan, texts), findings(without, texts)
    assert any(len(result) > 1 for result in expected)  # the plain path finds IBANs in the corpus
    assert found != expected
    assert _first_difference(texts, found, expected)
