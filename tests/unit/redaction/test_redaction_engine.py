"""The engine: placeholders stable per context, findings without values, levels, and failing closed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kronii.redaction import (
    ENGINE_ERROR_TEXT,
    WITHHELD_TEXT,
    HintSpan,
    Level,
    PolicyHints,
    RedactionContext,
    RedactionEngine,
    RedactionPolicy,
)
from kronii.redaction.detectors import Candidate, EmailDetector, ScanText

KEY = b"k" * 32


def test_nothing_found_is_green_and_unchanged(engine: RedactionEngine) -> None:
    result = engine.redact("Refactor the parser (src/parser.py) - Visual Studio Code")
    assert (result.text, result.level, result.findings) == (
        "Refactor the parser (src/parser.py) - Visual Studio Code",
        Level.GREEN,
        (),
    )
    assert result.may_leave


def test_findings_are_masked_and_amber(engine: RedactionEngine) -> None:
    result = engine.redact("mail alice@example.com from 8.8.8.8")
    assert result.text == "mail [EMAIL_1] from [IP_ADDRESS_1]"
    assert result.level is Level.AMBER
    assert [(f.type, f.span) for f in result.findings] == [("EMAIL", (5, 22)), ("IP_ADDRESS", (28, 35))]


def test_same_value_same_placeholder_within_a_context(engine: RedactionEngine) -> None:
    context = RedactionContext(KEY)
    first = engine.redact("to alice@example.com, cc bob@example.com", context=context)
    second = engine.redact("reply from ALICE@example.com about bob@example.com", context=context)
    assert first.text == "to [EMAIL_1], cc [EMAIL_2]"
    assert second.text == "reply from [EMAIL_1] about [EMAIL_2]"
    third = engine.redact("card 4111 1111 1111 1111 and 4111111111111111", context=context)
    assert third.text == "card [PAYMENT_CARD_1] and [PAYMENT_CARD_1]"


def test_contexts_do_not_share_numbering(engine: RedactionEngine) -> None:
    one, two = RedactionContext(KEY), RedactionContext(b"x" * 32)
    engine.redact("a@example.com", context=one)
    assert engine.redact("b@example.com", context=one).text == "[EMAIL_2]"
    assert engine.redact("b@example.com", context=two).text == "[EMAIL_1]"


def test_context_stores_digests_not_values(engine: RedactionEngine) -> None:
    context = RedactionContext(KEY)
    engine.redact("secret holder alice@example.com password=hunter2", context=context)
    assert len(context) == 2
    assert all(isinstance(digest, bytes) and len(digest) == 32 for digest in context._index)
    assert all(isinstance(number, int) for number in context._index.values())
    assert set(context._counters) == {"EMAIL", "PASSWORD"}
    assert "alice" not in repr(context) and KEY.decode() not in repr(context)


def test_context_key_must_be_long_enough() -> None:
    with pytest.raises(ValueError, match="at least 16 bytes"):
        RedactionContext(b"short")


def test_findings_and_results_never_show_values(engine: RedactionEngine) -> None:
    result = engine.redact("token ghp_16C7e42F292c6912E7710c838347Ae178B4a for alice@example.com")
    for shown in (repr(result.findings), str(result.findings), repr(result)):
        assert "ghp_16C7" not in shown and "alice@" not in shown


@pytest.mark.parametrize(
    ("text", "reason_part"),
    [
        ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----", "PRIVATE_KEY"),
        ("DB_PASSWORD=hunter2", "PASSWORD"),
    ],
)
def test_red_types(engine: RedactionEngine, text: str, reason_part: str) -> None:
    result = engine.redact(text)
    assert result.level is Level.RED and reason_part in result.reason
    assert not result.may_leave
    assert "hunter2" not in result.text and "MIIEvQ" not in result.text


def test_red_app_withholds_everything(engine: RedactionEngine) -> None:
    result = engine.redact("Vault - github.com entry", app="org.keepassxc.KeePassXC")
    assert (result.text, result.level) == (WITHHELD_TEXT, Level.RED)


def test_masked_share_above_threshold_is_red() -> None:
    engine = RedactionEngine(RedactionPolicy(red_share_threshold=0.3, red_share_min_chars=40))
    addresses = " ".join(f"user{n}@example.com" for n in range(10))
    assert engine.redact(addresses).level is Level.RED
    assert engine.redact("hi user1@example.com").level is Level.AMBER  # shorter than the minimum


class _Exploding:
    name = "exploding"

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        raise RuntimeError(f"boom while reading {scan.text}")


def test_detector_error_fails_closed() -> None:
    engine = RedactionEngine(detectors=[EmailDetector(), _Exploding()])
    result = engine.redact("alice@example.com wrote password=hunter2")
    assert result.level is Level.RED
    assert result.text == ENGINE_ERROR_TEXT
    assert result.reason == "engine error in exploding: RuntimeError"  # no message: it could quote the text
    assert result.findings == ()


def test_monkeypatched_builtin_detector_fails_closed(
    monkeypatch: pytest.MonkeyPatch, engine: RedactionEngine
) -> None:
    def explode(self: object, scan: ScanText) -> Iterator[Candidate]:
        raise ValueError("nope")

    monkeypatch.setattr(EmailDetector, "detect", explode)
    result = RedactionEngine().redact("write to alice@example.com")
    assert result.level is Level.RED and "alice" not in result.text and result.text == ENGINE_ERROR_TEXT


def test_placeholder_error_fails_closed(monkeypatch: pytest.MonkeyPatch, engine: RedactionEngine) -> None:
    def explode(self: RedactionContext, finding_type: str, value: str) -> str:
        raise KeyError(value)

    monkeypatch.setattr(RedactionContext, "placeholder", explode)
    result = engine.redact("write to alice@example.com", context=RedactionContext(KEY))
    assert (result.level, result.text) == (Level.RED, ENGINE_ERROR_TEXT)
    assert "alice" not in result.reason


def test_non_text_input_fails_closed(engine: RedactionEngine) -> None:
    result = engine.redact(b"bytes are not text")  # type: ignore[arg-type]
    assert (result.level, result.text) == (Level.RED, ENGINE_ERROR_TEXT)


def test_overlapping_findings_merge_into_one_mask(engine: RedactionEngine) -> None:
    # The keyword detector and the vendor detector both see the token; it is masked once, as the vendor type.
    result = engine.redact("GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a")
    assert result.text == "GITHUB_TOKEN=[GITHUB_TOKEN_1]"


def test_plugin_hints_add_patterns_spans_and_red() -> None:
    engine = RedactionEngine()
    hints = PolicyHints(deny_terms=("Nightingale",), spans=(HintSpan(0, 4, "PIN", red=False),))
    result = engine.redact("1234 is the PIN for project nightingale", hints=hints)
    assert result.text == "[PIN_1] is the PIN for project [DENIED_1]"
    red = engine.redact("balance 1,234.00", hints=PolicyHints(red_reason="banking app in focus"))
    assert red.level is Level.RED and red.reason == "plugin: banking app in focus"


def test_redact_lines_maps_findings_to_each_line(engine: RedactionEngine) -> None:
    lines = [
        "Inbox - alice@example.com",
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA",
        "-----END RSA PRIVATE KEY-----",
        "nothing here",
    ]
    redaction = engine.redact_lines(lines)
    assert redaction.result.level is Level.RED
    spans = [(s.line, s.start, s.end) for s in redaction.line_spans]
    assert spans == [(0, 8, 25), (1, 0, 31), (2, 0, 16), (3, 0, 29)]
    assert redaction.spans_on(4) == ()
    for span in redaction.line_spans:
        finding = redaction.result.findings[span.finding]
        assert finding.type in ("EMAIL", "PRIVATE_KEY")
