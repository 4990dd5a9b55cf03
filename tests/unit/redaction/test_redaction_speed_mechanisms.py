"""The mechanisms behind the speed pass on secret-dense text: each must give exactly what the slower code gave.

Per-text memos (`ScanText.memo`), the reversed view that finds an identifier's start, the two-sort merge, and
regexes rewritten so that CPython can skip ahead to their first character. The rewritten regexes are compared
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
    ScanText,
    home_paths,
    iban,
    mac_address,
    national_ids,
    payment_card,
    postal_address,
    private_keys,
)
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
        ("alice@example.com", 0),
        ("@example.com", None),  # the "@" opens the text: no local part
        ("x" * 64 + "@example.com", 0),  # 64 characters: the longest local part
        ("y" + "x" * 64 + "@example.com", 1),  # one more: cut at 64, as the windowed search did
        ("mail: bob.smith+tag@example.com", 6),
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
    "4111 1111 1111 1111 4111-1111-1111-1111 41111111111111111 123-45-6789 131052-308T 12345678Z",
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
