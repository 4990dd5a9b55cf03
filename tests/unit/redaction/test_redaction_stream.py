"""One long text redacted in windows (`redact_stream`, what `kronii redact` runs) gives what one pass
over the whole text gives: the same findings at the same offsets, the same masked text, the same
level, whatever the window; a value at a window's edge is masked whole, and a value on the line after
its label is still found when the window starts between them."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from kronii.redaction import Level, RedactionContext, RedactionEngine, RedactionPolicy
from kronii.redaction._stream import StreamResult, redact_stream

CORPUS = Path(__file__).parents[2] / "data" / "redaction" / "corpus"
_MARK = re.compile(r"⟦([A-Z0-9_]+)\|(.*?)⟧", re.DOTALL)
KEY = b"k" * 32


def corpus_text() -> str:
    """Every labelled document of the corpus, values in place, one after another."""
    documents = sorted(CORPUS.glob("*.txt"))
    assert documents, "the labelled corpus is missing"
    return "\n".join(_MARK.sub(lambda m: m.group(2), path.read_text(encoding="utf-8")) for path in documents)


def streamed(engine: RedactionEngine, text: str, *, window: int, margin: int) -> tuple[str, StreamResult]:
    source, out = io.StringIO(text), io.StringIO()
    result = redact_stream(
        engine, source.read, out.write, context=RedactionContext(KEY), window=window, margin=margin
    )
    return out.getvalue(), result


@pytest.mark.parametrize(("window", "margin"), [(700, 300), (4096, 2048), (1 << 20, 64 << 10)])
def test_the_corpus_read_in_windows_gives_the_findings_and_text_of_one_pass(window: int, margin: int) -> None:
    engine = RedactionEngine(RedactionPolicy(red_share_threshold=1.0))
    text = corpus_text()
    whole = engine.redact(text, context=RedactionContext(KEY))
    masked, result = streamed(engine, text, window=window, margin=margin)
    assert [(f.type, f.start, f.end, f.detector) for f in result.findings] == [
        (f.type, f.start, f.end, f.detector) for f in whole.findings
    ]
    assert masked == whole.text
    assert (result.level, result.reason) == (whole.level, whole.reason)
    assert result.masked_share == pytest.approx(whole.masked_share)
    assert result.counts.total() == len(whole.findings)


def test_a_value_across_a_windows_edge_is_masked_whole_once_with_its_offsets_in_the_whole_text() -> None:
    engine = RedactionEngine()
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    # No line end anywhere: the first window's own part ends at 1,900 characters, inside the token.
    text = "x" * 1889 + " " + token + " " + "y" * 3000
    masked, result = streamed(engine, text, window=1000, margin=100)
    start = text.index(token)
    assert masked == text[:start] + "[GITHUB_TOKEN_1]" + text[start + len(token) :]
    assert [(f.start, f.end) for f in result.findings] == [(start, start + len(token))]


def test_a_password_on_the_line_after_its_label_is_found_when_a_window_starts_between_them() -> None:
    engine = RedactionEngine()
    head = "notes\n" * 160 + "password:\n"
    text = head + "Tr0ub4dor&3-horse\n" + "more notes\n" * 40
    # The first window's own part ends at the label's line end: the answer opens the next window.
    masked, result = streamed(engine, text, window=len(head) + 400, margin=400)
    assert "Tr0ub4dor" not in masked
    assert result.level is Level.RED and "PASSWORD" in result.reason


def test_a_value_seen_in_two_windows_gets_one_placeholder() -> None:
    engine = RedactionEngine(RedactionPolicy(red_share_threshold=1.0))
    line = "mail jane.doe@acme.io today\n"
    text = line + "filler line of words\n" * 400 + line
    masked, _ = streamed(engine, text, window=2000, margin=500)
    placeholders = re.findall(r"\[EMAIL_\d+\]", masked)
    assert len(placeholders) == 2 and placeholders[0] == placeholders[1]


def test_a_red_listed_app_writes_nothing_and_is_withheld() -> None:
    engine = RedactionEngine(RedactionPolicy(red_apps=("org.keepassxc.KeePassXC",)))
    source, out = io.StringIO("secret stuff\n" * 10), io.StringIO()
    result = redact_stream(engine, source.read, out.write, app="org.keepassxc.KeePassXC")
    assert result.level is Level.RED and out.getvalue() == ""


def test_without_keeping_findings_only_their_counts_are_kept_and_the_text_is_the_same() -> None:
    engine = RedactionEngine(RedactionPolicy(red_share_threshold=1.0))
    text = corpus_text()
    kept_text, kept = streamed(engine, text, window=4096, margin=2048)
    source, out = io.StringIO(text), io.StringIO()
    counted = redact_stream(
        engine,
        source.read,
        out.write,
        context=RedactionContext(KEY),
        window=4096,
        margin=2048,
        keep_findings=False,
    )
    assert out.getvalue() == kept_text and counted.findings == ()
    assert counted.counts == kept.counts and (counted.level, counted.reason) == (kept.level, kept.reason)
