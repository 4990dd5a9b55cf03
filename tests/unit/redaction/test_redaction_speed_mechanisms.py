"""The mechanisms behind the speed pass on secret-dense text: each must give exactly what the slower code gave.

Per-text memos (`ScanText.memo`), the reversed view that finds an identifier's start, the two-sort merge,
regexes rewritten so that CPython can skip ahead to their first character, the keyword detector's findings
replayed on repeated lines, and line-local formats found once per distinct line (`line_local_findings`). The rewritten regexes are compared
with the patterns they replaced, on the labelled corpus and on edge cases.
"""

from __future__ import annotations

import random
import re

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction._resolve import MaskedSpan, merge_overlaps
from kronii.redaction.detectors import (
    Candidate,
    EmailDetector,
    EntropyDetector,
    KeywordSecretDetector,
    ScanText,
    home_paths,
    iban,
    keyword_secrets,
    mac_address,
    national_ids,
    payment_card,
    postal_address,
    private_keys,
)
from kronii.redaction.detectors._assignment import parse_assignment
from kronii.redaction.detectors._base import line_local_findings
from kronii.redaction.detectors._vendor_rules import CONTEXT_RULES
from kronii.redaction.detectors.keyword_secrets import _identifier_bounds

from tests.unit.redaction.test_redaction_corpus import load_corpus

# --- ScanText.memo and ScanText.reversed ---------------------------------------------------------------------


def test_memo_computes_once_per_argument_and_function() -> None:
    calls: list[str] = []

    def upper(value: str) -> str:
        calls.append(value)
        return value.upper()

    def length(value: str) -> int:
        return len(value)

    scan = ScanText("x")
    assert [scan.memo(upper, "ab"), scan.memo(upper, "ab"), scan.memo(upper, "cd")] == ["AB", "AB", "CD"]
    assert scan.memo(length, "ab") == 2  # another function, another entry
    assert calls == ["ab", "cd"]


def test_memo_lives_as_long_as_its_text() -> None:
    calls: list[str] = []

    def seen(value: str) -> bool:
        calls.append(value)
        return True

    ScanText("one").memo(seen, "v")
    ScanText("two").memo(seen, "v")
    assert calls == ["v", "v"]


def test_reversed_reads_the_text_backwards() -> None:
    assert ScanText("abc\ndef").reversed == "fed\ncba"


# --- the keyword detector's identifier bounds ----------------------------------------------------------------

_OLD_IDENT_TAIL = re.compile(r"[\w.\-]+\Z")


def _old_start(text: str, hit_start: int) -> int:
    """How the identifier's start was found before: a search for a run that reaches the hit, in 64 chars."""
    tail = _OLD_IDENT_TAIL.search(text, max(0, hit_start - 64), hit_start)
    return hit_start if tail is None else tail.start()


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("password=x", "password"),  # the key at the very start of the text
        ("export DB_PASSWORD=x", "PASSWORD"),
        ("a\nMY.api-token: y", "token"),  # the key at a line's start
        ("é_token=1", "token"),  # a non-ASCII word character belongs to the key
        ("x" * 63 + "_token=1", "token"),  # 64 identifier characters before the hit: the window's edge
        ("x" * 64 + "_token=1", "token"),
        ("y " + "x" * 100 + "_token=1", "token"),  # longer than the window: cut at 64, as before
        ("(token)", "token"),
    ],
)
def test_identifier_start_matches_the_former_search(text: str, hit: str) -> None:
    hit_start = text.index(hit)
    start, _ = _identifier_bounds(ScanText(text), hit_start, hit_start + len(hit))
    assert start == _old_start(text, hit_start)


def test_identifier_start_matches_the_former_search_on_random_text() -> None:
    rng = random.Random(7)
    alphabet = "ab_.-/ \n=:é9"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 90))) + "token"
        hit_start = len(text) - 5
        start, _ = _identifier_bounds(ScanText(text), hit_start, len(text))
        assert start == _old_start(text, hit_start), text


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("alice@exemple.com", 0),
        ("@exemple.com", None),  # the "@" opens the text: no local part
        ("x" * 64 + "@exemple.com", 0),  # 64 characters: the longest local part
        ("y" + "x" * 64 + "@exemple.com", 1),  # one more: cut at 64, as the windowed search did
        ("mail: bob.smith+tag@exemple.com", 6),
        ("to=jane%40example.com", 3),
    ],
)
def test_email_local_part_is_read_leftwards_from_the_at(text: str, start: int | None) -> None:
    found = [c.start for c in EmailDetector().detect(ScanText(text))]
    assert found == ([] if start is None else [start])


# --- the merge ----------------------------------------------------------------------------------------------


def _old_merge(candidates: list[Candidate]) -> list[MaskedSpan]:
    """The merge as it was: one sort keyed by (start, -end), then groups of overlapping candidates."""
    ordered = sorted((c for c in candidates if c.end > c.start), key=lambda c: (c.start, -c.end))
    spans: list[MaskedSpan] = []
    group: list[Candidate] = []
    end = -1
    for candidate in [*ordered, None]:
        if group and (candidate is None or candidate.start >= end):
            winner = max(group, key=lambda c: (c.confidence, c.end - c.start, -c.start))
            spans.append(MaskedSpan(group[0].start, end, winner, frozenset(c.type for c in group)))
            group = []
        if candidate is not None:
            group.append(candidate)
            end = max(end, candidate.end) if len(group) > 1 else candidate.end
    return spans


def test_merge_gives_what_the_former_merge_gave() -> None:
    rng = random.Random(11)
    for _ in range(200):
        candidates = []
        for index in range(rng.randrange(0, 30)):
            start = rng.randrange(0, 60)
            end = start + rng.randrange(0, 12)
            kind = rng.choice(("EMAIL", "PHONE", "SECRET"))
            candidates.append(Candidate(kind, start, end, rng.choice((0.6, 0.85, 0.9)), f"d{index}"))
        assert merge_overlaps(candidates) == _old_merge(candidates)


def test_merge_keeps_the_first_of_equal_candidates_and_longest_first() -> None:
    first = Candidate("EMAIL", 0, 5, 0.9, "a")
    same = Candidate("EMAIL", 0, 5, 0.9, "b")
    longer = Candidate("PHONE", 0, 8, 0.9, "c")
    [span] = merge_overlaps([first, same, longer])
    assert (span.start, span.end, span.winner, span.types) == (0, 8, longer, frozenset({"EMAIL", "PHONE"}))
    [span] = merge_overlaps([first, same])
    assert span.winner is first


# --- per-text memos: the same value in different contexts ------------------------------------------------------


def test_entropy_verdict_of_a_repeated_hex_token_still_depends_on_its_line() -> None:
    digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    text = f"sha256 checksum {digest}\napi token {digest}\ncommit {digest}\n"
    found = [(c.start, c.end) for c in EntropyDetector().detect(ScanText(text))]
    start = text.index(f"token {digest}") + 6
    assert found == [(start, start + len(digest))]


def test_a_repeated_secret_is_found_every_time(engine: RedactionEngine) -> None:
    line = "api_key = 'Zk3qP9xWm2Lr7Tb5Vn8Hc4Jd6Fs1Gy0E'\n"
    result = engine.redact(line * 5)
    assert len(result.findings) == 5
    assert len({f.placeholder for f in result.findings}) == 1


def test_a_repeated_ip_address_in_a_version_context_is_left_alone(engine: RedactionEngine) -> None:
    text = "host 10.20.30.40 up\nversion 10.20.30.40\nping 10.20.30.40\n"
    starts = [f.start for f in engine.redact(text).findings if f.type == "IP_ADDRESS"]
    assert starts == [5, text.index("ping") + 5]


# --- regexes rewritten to open with a plain class ------------------------------------------------------------

_DISCORD_PATTERN = next(rule.pattern for rule in CONTEXT_RULES if rule.type == "DISCORD_TOKEN")
_REWRITTEN = [
    (
        "payment_card",
        payment_card._CANDIDATE,
        r"[0-9]{4}[ \-]?[0-9]{4}[ \-]?[0-9]{2,7}(?:[ \-]?[0-9]{1,7}){0,2}",
    ),
    ("iban", iban._CANDIDATE, r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?"),
    (
        "national_ids digit-led",
        national_ids._DIGIT_LED,
        r"[0-9]{3}(?:(?P<ssn>-[0-9]{2}-[0-9]{4})"
        r"|[0-9]{3}(?:(?P<hetu>[-+A-FU-Y][0-9]{3}[0-9A-FHJ-NPR-Y])|(?P<dni>[0-9]{2}[- ]?[A-Z])))",
    ),
    (
        "national_ids fiscal",
        national_ids._FISCAL_TAIL,
        r"[0-9LMNP-V]{2}[A-EHLMPR-T][0-9LMNP-V]{2}[A-Z][0-9LMNP-V]{3}[A-Z]",
    ),
    (
        "postal_address",
        postal_address._DIGIT_CODE,
        r"[0-9]{3}(?:[0-9]{2}-[0-9]{3}|[0-9]{2,3}| [0-9]{3})(?![0-9])",
    ),
    (
        "mac_address",
        mac_address._MAC_TAIL,
        r"(?P<sep>[:-])(?:[0-9A-Fa-f]{2}(?P=sep)){4}[0-9A-Fa-f]{2}|\.[0-9a-f]{4}\.[0-9a-f]{4}",
    ),
    (
        "private_keys",
        private_keys._BEGIN,
        r"-{3,}\s?BEGIN ([A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?\s?-{3,}",
    ),
    (
        "discord",
        re.compile(_DISCORD_PATTERN),
        r"(?<![A-Za-z0-9_\-])[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}"
        r"(?![A-Za-z0-9_\-])",
    ),
]
_EDGES = (
    "aa:bb:cc:dd:ee:ff aa-bb-cc-dd-ee-ff aa:bb-cc:dd:ee:ff 0011.2233.4455 :aa:bb:cc:dd:ee:ff- .abcd.ef01.",
    "4111 1113 2437 0017 4111-1113-2437-0017 41111111111111111 123-45-6789 131052-308T 12345678Z",
    "GB82 WEST 1234 5698 7654 32 DE89370400440532013000 RSSMRA85T10A562S 10115 Berlin 560 001 12345-678",
    "--BEGIN RSA PRIVATE KEY----- ------BEGIN PRIVATE KEY--- ---- BEGIN EC PRIVATE KEY----",
    "xMTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs",
)


@pytest.fixture(scope="module")
def corpus_text() -> str:
    return "\n".join(document.text for document in load_corpus())


@pytest.mark.parametrize(("name", "rewritten", "former"), _REWRITTEN, ids=[row[0] for row in _REWRITTEN])
def test_rewritten_regex_matches_what_the_former_one_matched(
    name: str, rewritten: re.Pattern[str], former: str, corpus_text: str
) -> None:
    former_pattern = re.compile(former)
    for text in (corpus_text, *_EDGES):
        assert [m.span() for m in rewritten.finditer(text)] == [
            m.span() for m in former_pattern.finditer(text)
        ]


def test_windows_homes_are_found_where_the_full_pattern_finds_them(corpus_text: str) -> None:
    edges = (
        "C:\\Users\\alice",
        "xC:\\Users\\bob c:/users/carol D:\\\\Users\\\\dave",
        ":\\Users\\eve",  # no drive letter: the colon opens the text
        "aC:/Users/x bC:/Users/y 9C:/Users/z",
        "C:/Users/",
    )
    for text in (corpus_text, *edges):
        found = [m.span() for m in home_paths._windows_homes(text)]
        assert found == [m.span() for m in home_paths._WINDOWS_HOME.finditer(text)], text


# --- the keyword detector's findings replayed per distinct line ----------------------------------------------


def _former_keyword_detect(scan: ScanText) -> list[Candidate]:
    """The keyword detector as it was: every hit of the whole text worked out in place, no line replayed."""
    text, lower = scan.text, scan.lower
    found: list[Candidate] = []
    seen_keys: set[int] = set()
    for hit in keyword_secrets._HIT.finditer(lower):
        if hit.group() == "identified by":
            key_start, key_end = hit.start(), hit.end()
            finding_type: str | None = "PASSWORD"
        else:
            key_start, key_end = _identifier_bounds(scan, hit.start(), hit.end())
            if key_start in seen_keys:
                continue
            seen_keys.add(key_start)
            finding_type = keyword_secrets._classify_key(text[key_start:key_end])
        if finding_type is None or keyword_secrets._is_reference_sigil(text, key_start):
            continue
        assignment = parse_assignment(text, key_start, key_end, is_flag=text.startswith("-", key_start))
        if assignment is None:
            continue
        assignment = keyword_secrets._skip_auth_scheme(text, text[key_start:key_end], assignment)
        if assignment is None or not keyword_secrets._is_literal_secret(
            scan, assignment, finding_type, key_start
        ):
            continue
        confidence = 0.85 if assignment.operator in ("=", ":", "xml", "flag") else 0.7
        found.append(Candidate(finding_type, assignment.start, assignment.end, confidence, "keyword_secrets"))
    if '"sensitive"' in lower:
        found.extend(KeywordSecretDetector()._sensitive_values(text))
    return found


def _repeated_lines(text: str, seed: int, count: int) -> str:
    """Lines of `text` drawn with repeats, as logs and the secret-dense benchmark repeat them."""
    lines = text.split("\n")
    rng = random.Random(seed)
    return "\n".join(rng.choice(lines) for _ in range(count))


def test_keyword_findings_on_repeated_lines_match_the_former_whole_text_scan(corpus_text: str) -> None:
    for text in (corpus_text, _repeated_lines(corpus_text, 3, 4000), _repeated_lines(corpus_text, 5, 800)):
        assert list(KeywordSecretDetector().detect(ScanText(text))) == _former_keyword_detect(ScanText(text))


@pytest.mark.parametrize(
    "text",
    [
        # An XML value that closes on a later line: found at every repetition, not only the first.
        "<password>\nHunter2Secret99</password>\n" * 3,
        "<password>\nHunter2Secret99</password>\n<password>\n</b></password>\n<password>\n",
        # A quoted value that a backslash continues onto the next line.
        'token = "ab12cd34\\\nef56"\ntoken = "ab12cd34\\\nzz"\n' * 2,
        "password=Pa55word\npassword=Pa55word",  # the last line has no newline after it
        "%API_TOKEN%=x1y2z3w4\n%API_TOKEN%=x1y2z3w4\n",
        "password=Pa55word\r\npassword=Pa55word\r\n",
        "db password: Pa55word identified by Pa55word\n" * 2,
    ],
)
def test_keyword_findings_on_lines_that_read_past_their_end_match_the_former_scan(text: str) -> None:
    assert list(KeywordSecretDetector().detect(ScanText(text))) == _former_keyword_detect(ScanText(text))


def test_a_repeated_keyword_line_gives_its_finding_at_every_occurrence() -> None:
    line = "export GITHUB_TOKEN=ghx12345abcdef67890\n"
    text = "header\n" + line * 3
    spans = [(c.start, c.end) for c in KeywordSecretDetector().detect(ScanText(text))]
    value_start = line.index("ghx")
    assert spans == [(7 + i * len(line) + value_start, 7 + (i + 1) * len(line) - 1) for i in range(3)]


def test_only_lines_that_cannot_read_past_their_ends_are_replayed() -> None:
    assert keyword_secrets._is_line_local("password=Pa55word")
    assert not keyword_secrets._is_line_local("<password>")
    assert not keyword_secrets._is_line_local('token = "ab\\')


# --- line-local formats found once per distinct line -----------------------------------------------------------


def test_distinct_lines_keep_each_line_once_and_where_every_line_came_from() -> None:
    lines = ["alpha 1", "beta 22", "alpha 1", "", "gamma 333", "beta 22", "alpha 1"] * 1000
    text = "\n".join(lines)
    index = ScanText(text).distinct_lines
    assert index is not None
    assert index.compact == "alpha 1\nbeta 22\n\ngamma 333"
    assert index.compact_starts == [0, 8, 16, 17]
    assert [index.compact.split("\n")[number] for number in index.order] == lines
    assert [text[start : start + len(line)] for start, line in zip(index.starts, lines, strict=True)] == lines
    assert all(start == 0 or text[start - 1] == "\n" for start in index.starts)


def test_distinct_lines_are_not_used_where_they_would_not_halve_the_text() -> None:
    assert ScanText("a\n" * 100).distinct_lines is None  # short: the whole text is scanned
    unique = "\n".join(f"line number {n}" for n in range(5000))
    assert ScanText(unique).distinct_lines is None  # no line repeats


def _sixes_in(scan: ScanText) -> list[Candidate]:
    return _sixes(scan.text)


def _sixes(text: str) -> list[Candidate]:
    return [Candidate("SIX", m.start(), m.end(), 0.5, "t") for m in re.finditer(r"[0-9]{6}", text)]


@pytest.mark.parametrize("ending", ["", "\n", "\n\n"])
def test_line_local_findings_are_those_of_the_whole_text_in_its_order(ending: str) -> None:
    lines = ["123456 x 654321", "no digits", "", "x123456", "111111"]
    text = "\n".join(random.Random(2).choice(lines) for _ in range(6000)) + ending
    scan = ScanText(text)
    assert scan.distinct_lines is not None
    assert list(line_local_findings(scan, _sixes_in)) == _sixes(text)


def test_line_local_findings_scan_the_whole_text_when_lines_do_not_repeat() -> None:
    text = "\n".join(f"{n:06d}" for n in range(4000))
    assert list(line_local_findings(ScanText(text), _sixes_in)) == _sixes(text)


def _whole_text_scan(text: str) -> ScanText:
    scan = ScanText(text)
    scan.distinct_lines = None  # what the detectors did before: every format over the whole text
    return scan


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_detector_finds_on_distinct_lines_what_it_finds_on_the_whole_text(
    engine: RedactionEngine, corpus_text: str, seed: int
) -> None:
    text = _repeated_lines(corpus_text, seed, 6000)
    assert ScanText(text).distinct_lines is not None
    for detector in engine.detectors:
        found = list(detector.detect(ScanText(text)))
        assert found == list(detector.detect(_whole_text_scan(text))), detector.name


@pytest.mark.parametrize(
    "line",
    [
        "4111 1113 2437 0017",  # a card at a line's start and end
        "iban GB82WEST12345698765432",
        "mac aa:bb:cc:dd:ee:ff",
        "ssn 123-45-6789 nie X1234567L nino AB123456C cf RSSMRA85T10A562S",
        "cpf 123.456.789-09 aadhaar 2345 6789 0124",
        "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw5-",
    ],
)
def test_a_value_on_a_repeated_line_is_found_at_every_occurrence(engine: RedactionEngine, line: str) -> None:
    text = ("filler line\n" + line + "\n") * 1000 + line
    scan = ScanText(text)
    assert scan.distinct_lines is not None
    for detector in engine.detectors:
        assert list(detector.detect(scan)) == list(detector.detect(_whole_text_scan(text))), detector.name
