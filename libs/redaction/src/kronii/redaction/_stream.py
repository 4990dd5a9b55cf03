"""One long text redacted in windows, in memory that does not grow with it.

A text of any size is read a window at a time (512 K characters by default). Each window is
scanned with a margin of text on both sides: the text before it (already written) so a value on the
line after its label ("password:" then the answer) is still seen with its label, and the text after it
so a value cut by the window's edge is seen whole. Only the window's own part is written; its end is
moved to a line's end, and past any finding that crosses it, so a value is never split. Placeholders
are numbered only for what is written, in order, in one RedactionContext for the whole text: the
result is the text and the findings one pass over the whole text gives. The level is graded once over
the whole text (a masked share is the whole text's), with the engine's own rules.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from ._context import RedactionContext
from ._engine import RedactionEngine, masked_text, numbered_findings
from ._model import Finding, Level, RedactionResult
from ._resolve import MaskedSpan

__all__ = ["MARGIN_CHARS", "WINDOW_CHARS", "StreamResult", "StreamTotals", "redact_stream"]

# Measured on 10 MB of mixed text (bench/redaction_memory.py): 512 K windows cost 2 % more CPU than one
# pass and peak at 61 MB; 1 M windows 86 MB; 256 K windows 8 % more CPU (the margins are read twice).
WINDOW_CHARS = 512 << 10
# A value and its label, or a private key's whole block (an 8192-bit RSA key's PEM is 6.5 K), fit in
# this many characters either side.
MARGIN_CHARS = 16 << 10


@dataclass
class StreamTotals:
    """What the windows found together; `result` grades them as one text. The findings themselves are
    kept only when asked for (they grow with the text): the counts by type always."""

    keep_findings: bool = True
    findings: list[Finding] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    red_types: set[str] = field(default_factory=set)
    masked: int = 0
    length: int = 0

    def add(self, findings: list[Finding], spans: list[MaskedSpan], base: int, red: list[str]) -> None:
        if self.keep_findings:
            self.findings.extend(
                Finding(f.type, base + f.start, base + f.end, f.detector, f.confidence, f.placeholder)
                for f in findings
            )
        self.counts.update(f.type for f in findings)
        self.masked += sum(f.end - f.start for f in findings)
        self.red_types.update(red)

    def result(self, engine: RedactionEngine) -> StreamResult:
        if not self.counts:
            return StreamResult(Level.GREEN, "nothing found")
        share = self.masked / self.length if self.length else 0.0
        level, reason = engine.grade(
            red_found=sorted(self.red_types),
            masked_types=self.counts,
            spans=self.counts.total(),
            share=share,
            length=self.length,
        )
        return StreamResult(level, reason, share, self.counts, tuple(self.findings))


@dataclass(frozen=True)
class StreamResult:
    """The whole text's level and why, its masked share, how many findings of each type, and the
    findings themselves (offsets in the whole text) when they were kept."""

    level: Level
    reason: str
    masked_share: float = 0.0
    counts: Counter[str] = field(default_factory=Counter)
    findings: tuple[Finding, ...] = ()

    @classmethod
    def stopped(cls, result: RedactionResult) -> StreamResult:
        return cls(result.level, result.reason)


def redact_stream(
    engine: RedactionEngine,
    read: Callable[[int], str],
    write: Callable[[str], object],
    *,
    app: str | None = None,
    context: RedactionContext | None = None,
    window: int = WINDOW_CHARS,
    margin: int = MARGIN_CHARS,
    keep_findings: bool = True,
) -> StreamResult:
    """Read text with `read(n)` ("" at its end), write the masked text with `write`; the result holds
    the level of the whole text and its findings (offsets in the whole text; only their counts with
    keep_findings=False, so memory stays flat). An engine failure or a red-listed app stops the
    reading and is the result: what was written before it must be thrown away."""
    if window <= 0 or margin < 0:
        raise ValueError("window must be positive and margin not negative")
    context = context if context is not None else RedactionContext.random()
    totals = StreamTotals(keep_findings=keep_findings)
    buffer, done, base = "", 0, 0  # `done`: how much of `buffer` is written (kept as the margin before)
    ended = False
    while True:
        while not ended and len(buffer) - done < window + margin:
            piece = read(window)
            ended = not piece
            buffer += piece
        if len(buffer) == done:
            return totals.result(engine)
        spans = engine.masked_spans(buffer, app=app)
        if isinstance(spans, RedactionResult):
            return StreamResult.stopped(spans)  # an engine error or a red-listed app: nothing may be written
        cut = len(buffer) if ended else _cut(buffer, done, spans, margin)
        mine = _written(spans, done, cut)
        findings = numbered_findings(buffer, mine, context)
        write(masked_text(buffer, findings, done, cut))
        totals.add(findings, mine, base, engine.red_types_of(mine))
        totals.length += cut - done
        keep = max(0, cut - margin)
        buffer, done, base = buffer[keep:], cut - keep, base + keep


def _cut(buffer: str, done: int, spans: list[MaskedSpan], margin: int) -> int:
    """Where this window's written part ends: the last line's end before the margin after it, moved
    past every span that crosses it."""
    limit = len(buffer) - margin
    newline = buffer.rfind("\n", done, limit)
    cut = newline + 1 if newline >= done else limit
    for span in spans:  # in order: a crossing span may reach into the next
        if span.start < cut < span.end:
            cut = span.end
    return cut


def _written(spans: list[MaskedSpan], done: int, cut: int) -> list[MaskedSpan]:
    """The spans in buffer[done:cut]. One that starts in the margin before (written by the last
    window, which did not find it there) is masked from `done` on."""
    mine = [span for span in spans if span.end > done and span.start < cut]
    if mine and mine[0].start < done:
        mine[0] = mine[0]._replace(start=done)
    return mine
