"""The compiled scan itself: string offsets of lines in any script, the text's edges, streaming windows, and the
fall-back to the plain path when hyperscan is missing or refuses a pattern."""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator

import pytest
from kronii.redaction import RedactionContext, RedactionEngine, _hyperscan
from kronii.redaction import _scanner as scanner
from kronii.redaction._stream import redact_stream
from kronii.redaction.detectors import Candidate, CandidatePart, IbanDetector, ScanText
from kronii.redaction.detectors._base import line_local_findings


def _compiled_engine() -> RedactionEngine:
    """An engine with the compiled scan compiled now and serving every text, the shortest too."""
    engine = RedactionEngine(compiled_from=0)
    assert engine.compiled_scan  # asking compiles it
    return engine


COMPILED = _compiled_engine()
PLAIN = RedactionEngine(compiled_scan=False)
IBAN = "DE89370400440532013000"
CARD = "4539 1488 0343 6467"
NEEDLE = CandidatePart("needle", ("needle",))
LOWER_NEEDLE = CandidatePart("lower needle", (), ("needle",))


def _found(engine: RedactionEngine, text: str) -> list[tuple[str, int, int, str]]:
    return [(f.type, f.start, f.end, f.detector) for f in engine.redact(text).findings]


def _lines(part: CandidatePart, text: str) -> list[str]:
    found = scanner.CompiledScan([part]).lines(ScanText(text))
    assert found is not None
    return [text[start:end] for start, end in found[part]]


@pytest.mark.parametrize(
    "before",
    [
        "日本語のテキスト",  # CJK: three bytes a character
        "deploy 🚀🎉 done",  # emoji: four bytes, two UTF-16 units
        "cafe\u0301 and n\u0303o",  # combining marks: two characters where one is drawn
        "Ελληνικά и кириллица",
    ],
)
def test_lines_after_non_ascii_text_have_their_string_offsets(before: str) -> None:
    text = f"{before}\n{before} needle {before}\nno match here\n{before}"
    assert _lines(NEEDLE, text) == [f"{before} needle {before}"]
    assert _lines(LOWER_NEEDLE, text.upper()) == [f"{before} needle {before}".upper()]


@pytest.mark.parametrize("before", ["日本語 ", "🚀🎉 ", "e\u0301e\u0301 ", "İstanbul K "])
def test_findings_after_non_ascii_text_are_those_of_the_plain_path(before: str) -> None:
    text = f"{before}\n{before}IBAN {IBAN} and card {CARD}\nmail jane.doe@corp.example.org {before}"
    found = _found(COMPILED, text)
    assert found == _found(PLAIN, text)
    assert {text[start:end] for _type, start, end, _detector in found} >= {IBAN, CARD}


@pytest.mark.parametrize(
    "text",
    [IBAN, f"{IBAN}\nsecond line", f"first line\n{IBAN}", f"{CARD}", f"日本\n{CARD}", f"{CARD}\n日本"],
)
def test_a_finding_at_the_very_start_or_end_of_a_text_is_found(text: str) -> None:
    found = _found(COMPILED, text)
    assert found == _found(PLAIN, text)
    value = IBAN if IBAN in text else CARD
    assert [(start, end) for _type, start, end, _detector in found] == [
        (text.index(value), text.index(value) + len(value))
    ]


def test_a_match_stands_for_the_line_of_its_last_character() -> None:
    text = "first\nsecond needle\nthird"
    starts_on_newline = CandidatePart("after a boundary", (r"(?:^|[^a-z])needle",))
    assert _lines(starts_on_newline, "needle at the start\nx") == ["needle at the start"]
    assert _lines(starts_on_newline, text) == ["second needle"]
    assert _lines(starts_on_newline, "needles\nneedle") == ["needles", "needle"]


def test_a_value_across_a_streaming_windows_edge_is_found_as_in_one_pass() -> None:
    filler = "".join(f"line {n} of ordinary text ümlaut\n" for n in range(40))
    text = f"{filler}the account IBAN {IBAN} and the card {CARD} here\n{filler}"
    edge = text.index(IBAN) + 10  # the window ends inside the IBAN, the next one starts there
    out = io.StringIO()
    streamed = redact_stream(
        COMPILED,
        io.StringIO(text).read,
        out.write,
        context=RedactionContext(b"k" * 32),
        window=edge,
        margin=24,
    )
    whole = COMPILED.redact(text, context=RedactionContext(b"k" * 32))
    assert [(f.type, f.start, f.end) for f in streamed.findings] == [
        (f.type, f.start, f.end) for f in whole.findings
    ]
    assert out.getvalue() == whole.text
    assert IBAN not in out.getvalue() and CARD not in out.getvalue()


@pytest.fixture
def no_compiled_databases() -> Iterator[None]:
    """Compiled databases are cached per set of patterns: forget them before and after a test that breaks them."""
    for cached in (scanner._part_database, _hyperscan._literal_database):
        cached.cache_clear()
    _hyperscan._warned.clear()
    yield
    for cached in (scanner._part_database, _hyperscan._literal_database):
        cached.cache_clear()


def test_without_hyperscan_the_engine_finds_the_same_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, no_compiled_databases: None
) -> None:
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # `import hyperscan` now raises ImportError
    text = f"IBAN {IBAN}\ncard {CARD}\nmail jane.doe@corp.example.org"
    with caplog.at_level(logging.WARNING, logger=scanner.__name__):
        first, second = RedactionEngine(compiled_from=0), RedactionEngine(compiled_from=0)
    assert not first.compiled_scan and not second.compiled_scan
    assert _found(first, text) == _found(COMPILED, text)
    assert [found[0] for found in _found(first, text)] == ["IBAN", "PAYMENT_CARD"]
    warnings = [r for r in caplog.records if "hyperscan is not installed" in r.getMessage()]
    assert len(warnings) == 1


_REFUSED = CandidatePart("look-behind", (r"(?<=IBAN )[A-Z]{2}",))  # hyperscan has no look-around


class _IbanWithARefusedPattern(IbanDetector):
    candidate_parts = (_REFUSED,)

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        return line_local_findings(scan, self._find, _REFUSED)


def test_a_pattern_hyperscan_refuses_turns_the_scan_off_and_finds_the_same(
    caplog: pytest.LogCaptureFixture, no_compiled_databases: None
) -> None:
    with caplog.at_level(logging.WARNING, logger=scanner.__name__):
        engine = RedactionEngine(detectors=[_IbanWithARefusedPattern()], compiled_from=0)
    assert not engine.compiled_scan
    assert any("does not compile" in r.getMessage() for r in caplog.records)
    text = f"first\nIBAN {IBAN}\nlast {IBAN}"
    assert [(start, end) for _t, start, end, _d in _found(engine, text)] == [(11, 33), (39, 61)]


def test_a_text_hyperscan_cannot_be_given_reads_every_line() -> None:
    text = f"\ud800 lone surrogate\nIBAN {IBAN}"  # not encodable as UTF-8
    assert scanner.CompiledScan([NEEDLE]).lines(ScanText(text)) is None
    assert _found(COMPILED, text) == _found(PLAIN, text)
    assert [f[0] for f in _found(COMPILED, text)] == ["IBAN"]


def test_a_part_without_a_candidate_line_does_not_run() -> None:
    calls: list[str] = []

    def find(scan: ScanText) -> Iterator[Candidate]:
        calls.append(scan.text)
        return iter(())

    scan = ScanText("nothing\nto see")
    scan.candidate_lines = scanner.CompiledScan([NEEDLE]).lines(scan)
    assert list(line_local_findings(scan, find, NEEDLE)) == []
    assert calls == []
    scan = ScanText("one\nneedle here\ntwo\nneedle here")
    scan.candidate_lines = scanner.CompiledScan([NEEDLE]).lines(scan)
    list(line_local_findings(scan, find, NEEDLE))
    assert calls == ["needle here"]  # the candidate lines only, each distinct one once


def test_the_scan_is_compiled_on_the_first_long_text_and_then_serves_every_text_but_the_shortest() -> None:
    scan = scanner.CompiledScan([NEEDLE], shortest=5, compile_at=100)
    short, shortest = ScanText("a needle"), ScanText("needle"[:4])
    assert scan.lines(short) is None  # a short text alone never pays for compiling
    assert scan.lines(ScanText("x" * 100 + "\nneedle")) == {NEEDLE: [(101, 107)]}
    assert scan.lines(short) == {NEEDLE: [(0, 8)]}
    assert scan.lines(shortest) is None  # cheaper read whole


def test_asking_whether_the_engine_has_the_scan_compiles_it() -> None:
    engine = RedactionEngine(detectors=[IbanDetector()], compiled_from=0)
    text = f"IBAN {IBAN}"
    scan = ScanText(text)
    assert engine._scanner.lines(scan) is None  # short, and not compiled yet
    assert engine.compiled_scan
    assert engine._scanner.lines(scan) is not None
    assert _found(engine, text) == [("IBAN", 5, 27, "iban")]


def test_the_compiled_pre_filter_skips_no_detector_that_would_find_something() -> None:
    """The hyperscan pre-filter keeps exactly the detectors one of whose anchors occurs; the regex one keeps a
    few more (an anchor hidden inside another's match stands for itself): every kept one of the first is kept by
    the second, and every detector only the second keeps finds nothing."""
    from kronii.redaction._prefilter import Prefilter

    from tests.unit.redaction.compiled_scan_corpora import corpora

    prefilter = Prefilter(COMPILED.detectors, compiled=True)
    texts = [*corpora()["labelled documents"], *corpora()["test strings"]]
    skipped = 0
    for text in texts:
        scan = ScanText(text)
        compiled, plain = prefilter.select(scan, compiled=True), prefilter.select(scan, compiled=False)
        assert set(compiled) <= set(plain)
        for detector in set(plain) - set(compiled):
            assert list(detector.detect(scan)) == [], (detector.name, text[:80])
        skipped += len(COMPILED.detectors) - len(compiled)
    assert skipped > 10_000  # it does skip detectors on these texts


def test_a_scan_that_fails_on_a_text_leaves_it_to_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = RedactionEngine(compiled_from=0)
    assert engine.compiled_scan

    def fails(scan: ScanText) -> None:
        raise RuntimeError("hyperscan failed")

    monkeypatch.setattr(engine._scanner, "lines", fails)
    text = f"IBAN {IBAN}\ncard {CARD}"
    result = engine.redact(text)
    assert "engine error" not in result.reason
    assert (
        _found(engine, text)
        == _found(PLAIN, text)
        == [
            ("IBAN", 5, 27, "iban"),
            ("PAYMENT_CARD", 33, 52, "payment_card"),
        ]
    )


@pytest.mark.parametrize(
    "first", ["\u0660", "\u0966", "\U0001e2f0"]
)  # Arabic-Indic, Devanagari, Wancho (2019)
def test_digits_of_any_script_reach_the_detectors_that_read_them(first: str) -> None:
    # Python's `\d` reads every script's digits, the Unicode of Python's version included: the candidate
    # patterns take any non-ASCII character for one, so no Unicode table of hyperscan's decides.
    digits = str.maketrans("0123456789", "".join(chr(ord(first) + n) for n in range(10)))
    text = "log line\nMeet at 48.858370, 2.294481 tonight\nend".translate(digits)
    found = _found(COMPILED, text)
    assert found == _found(PLAIN, text) == [("GPS_COORDINATES", 17, 36, "gps")]


def test_a_text_of_repeated_lines_is_scanned_once_per_distinct_line() -> None:
    from tests.unit.redaction.compiled_scan_corpora import corpora

    (text,) = corpora()["labelled documents, three times over"]
    scan = ScanText(text)
    found = COMPILED._scanner.lines(scan)
    assert found is not None and scan.candidates_in_distinct
    distinct = scan.distinct_lines
    assert distinct is not None
    iban_lines = found[next(part for part in found if part.name == "iban")]
    assert iban_lines and all(distinct.compact[start:end] in text for start, end in iban_lines)
    assert _found(COMPILED, text) == _found(PLAIN, text)
