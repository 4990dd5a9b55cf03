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
    result = engine.redact("mail alice@exemple.com from 8.8.8.8")
    assert result.text == "mail [EMAIL_1] from [IP_ADDRESS_1]"
    assert result.level is Level.AMBER
    assert [(f.type, f.span) for f in result.findings] == [("EMAIL", (5, 22)), ("IP_ADDRESS", (28, 35))]


def test_same_value_same_placeholder_within_a_context(engine: RedactionEngine) -> None:
    context = RedactionContext(KEY)
    first = engine.redact("to alice@exemple.com, cc bob@exemple.com", context=context)
    second = engine.redact("reply from ALICE@exemple.com about bob@exemple.com", context=context)
    assert first.text == "to [EMAIL_1], cc [EMAIL_2]"
    assert second.text == "reply from [EMAIL_1] about [EMAIL_2]"
    third = engine.redact("card 4111 1113 2437 0017 and 4111111324370017", context=context)
    assert third.text == "card [PAYMENT_CARD_1] and [PAYMENT_CARD_1]"


def test_contexts_do_not_share_numbering(engine: RedactionEngine) -> None:
    one, two = RedactionContext(KEY), RedactionContext(b"x" * 32)
    engine.redact("a@exemple.com", context=one)
    assert engine.redact("b@exemple.com", context=one).text == "[EMAIL_2]"
    assert engine.redact("b@exemple.com", context=two).text == "[EMAIL_1]"


def test_context_stores_digests_not_values(engine: RedactionEngine) -> None:
    context = RedactionContext(KEY)
    engine.redact("secret holder alice@exemple.com password=hunter2", context=context)
    assert len(context) == 2
    assert all(isinstance(digest, bytes) and len(digest) == 32 for digest in context._index)
    assert all(isinstance(number, int) for number in context._index.values())
    assert set(context._counters) == {"EMAIL", "PASSWORD"}
    assert "alice" not in repr(context) and KEY.decode() not in repr(context)


def test_context_key_must_be_long_enough() -> None:
    with pytest.raises(ValueError, match="at least 16 bytes"):
        RedactionContext(b"short")


def test_findings_and_results_never_show_values(engine: RedactionEngine) -> None:
    result = engine.redact("token ghp_16C7e42F292c6912E7710c838347Ae178B4a for alice@exemple.com")
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
    addresses = " ".join(f"user{n}@exemple.com" for n in range(10))
    assert engine.redact(addresses).level is Level.RED
    assert engine.redact("hi user1@exemple.com").level is Level.AMBER  # shorter than the minimum


class _Exploding:
    name = "exploding"

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        raise RuntimeError(f"boom while reading {scan.text}")


def test_detector_error_fails_closed() -> None:
    engine = RedactionEngine(detectors=[EmailDetector(), _Exploding()])
    result = engine.redact("alice@exemple.com wrote password=hunter2")
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
    result = RedactionEngine().redact("write to alice@exemple.com")
    assert result.level is Level.RED and "alice" not in result.text and result.text == ENGINE_ERROR_TEXT


def test_placeholder_error_fails_closed(monkeypatch: pytest.MonkeyPatch, engine: RedactionEngine) -> None:
    def explode(self: RedactionContext, finding_type: str, value: str) -> str:
        raise KeyError(value)

    monkeypatch.setattr(RedactionContext, "placeholder", explode)
    result = engine.redact("write to alice@exemple.com", context=RedactionContext(KEY))
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
        "Inbox - alice@exemple.com",
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


# --- the pre-filter -----------------------------------------------------------------------------------------


class _Recording:
    """A detector that declares `anchors` and records the texts it was asked to scan."""

    name = "recording"

    def __init__(self, anchors: object) -> None:
        self.anchors = anchors
        self.seen: list[str] = []

    def detect(self, scan: ScanText) -> Iterator[Candidate]:
        self.seen.append(scan.text)
        return iter(())


def test_anchored_detector_is_skipped_on_a_line_without_its_anchor() -> None:
    recording = _Recording(("zq:",))
    engine = RedactionEngine(detectors=[recording, EmailDetector()])
    engine.redact("nothing to see here")
    engine.redact("mail bob@exemple.com")
    assert recording.seen == []
    engine.redact("prefix ZQ: value")  # anchors match the lowered text
    assert recording.seen == ["prefix ZQ: value"]


@pytest.mark.parametrize("anchors", [None, (), ("UPPER",), ("",), ("é",), ["list"]])
def test_detector_without_usable_anchors_always_runs(anchors: object) -> None:
    recording = _Recording(anchors)
    RedactionEngine(detectors=[recording]).redact("plain words")
    assert recording.seen == ["plain words"]


def test_overlapping_anchors_are_all_seen() -> None:
    # "secretoken": "token" starts inside "secret"; "pass" is a prefix of the longer anchor "password".
    token, password = _Recording(("token",)), _Recording(("pass",))
    engine = RedactionEngine(detectors=[_Recording(("secret",)), token, _Recording(("password",)), password])
    engine.redact("x secretoken y")
    engine.redact("x password y")
    assert token.seen == ["x secretoken y"]
    assert password.seen == ["x password y"]


def _corpus_texts() -> Iterator[str]:
    from tests.unit.redaction.test_redaction_corpus import load_corpus

    for document in load_corpus():
        yield document.text
        yield from document.text.splitlines()


def test_skipped_detectors_would_have_found_nothing(engine: RedactionEngine) -> None:
    """No regression: on every labelled document and each of its lines, a detector the pre-filter skips
    reports nothing when run anyway, and a plain line skips every anchored detector."""
    from kronii.redaction._prefilter import Prefilter

    prefilter = Prefilter(engine.detectors)
    skipped_runs = 0
    for text in _corpus_texts():
        scan = ScanText(text)
        chosen = prefilter.select(scan)
        for detector in engine.detectors:
            if detector not in chosen:
                skipped_runs += 1
                assert list(detector.detect(scan)) == [], (detector.name, text)
    assert skipped_runs > 1000  # the filter does skip work on this corpus
    anchored = {d.name for d in engine.detectors if getattr(d, "anchors", None)}
    assert anchored >= {"jwt", "url_credentials", "private_keys", "keyword_secrets", "email"}
    plain = {d.name for d in prefilter.select(ScanText("Refactor the parser - Visual Studio Code"))}
    assert not plain & anchored


def test_anchor_across_a_window_boundary_of_a_long_text() -> None:
    from kronii.redaction._prefilter import _WINDOW

    for offset in range(-8, 2):  # the anchor ends just before, straddles, or starts at the boundary
        recording = _Recording(("zq:anchor",))
        text = "a" * (_WINDOW + offset) + "ZQ:ANCHOR" + "b" * (_WINDOW * 2)
        RedactionEngine(detectors=[recording]).redact(text)
        assert len(recording.seen) == 1, offset
