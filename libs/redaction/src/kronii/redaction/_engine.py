"""The redaction engine: runs the detectors, merges their findings, writes placeholders and grades the level.

It fails closed: an exception anywhere (a detector, the policy, the placeholder numbering) yields level red and
a fixed text, never the original. The reason names where it failed and the exception's type, not its message,
which might quote the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ._context import RedactionContext
from ._harmless import drop_harmless
from ._lines import LinesRedaction, join_lines, map_to_lines
from ._model import ENGINE_ERROR_TEXT, WITHHELD_TEXT, Finding, Level, RedactionResult
from ._policy import PolicyHints, RedactionPolicy
from ._prefilter import Prefilter
from ._resolve import MaskedSpan, merge_overlaps
from ._scanner import CompiledScan, candidate_parts_of
from .detectors import (
    Candidate,
    CandidatePart,
    CustomPatternDetector,
    DenyTermDetector,
    Detector,
    EncodedValueDetector,
    ScanText,
    built_in_detectors,
)

__all__ = ["COMPILED_FROM_CHARS", "COMPILE_AT_CHARS", "RedactionEngine", "masked_text", "numbered_findings"]

# Below this many characters a text is read whole by every detector: the compiled scan's fixed cost (a score
# of hyperscan passes) is more than it saves there (measured: 170 against 156 µs at 128 characters, 295
# against 385 at 512).
COMPILED_FROM_CHARS = 256
# The compiled scan's databases are compiled (about 0.4 s of CPU) on the first text this long, or when
# `compiled_scan` is asked: a process that only redacts window titles, log records or one line never pays it.
COMPILE_AT_CHARS = 4096

_HINT_DETECTOR = "plugin_hint"


class RedactionEngine:
    """Masks secrets and personal data in text. Build one per policy and reuse it; it keeps no per-call state."""

    def __init__(
        self,
        policy: RedactionPolicy | None = None,
        *,
        detectors: Sequence[Detector] | None = None,
        compiled_scan: bool = True,
        compiled_from: int = COMPILED_FROM_CHARS,
    ) -> None:
        self._policy = policy if policy is not None else RedactionPolicy()
        chosen = (
            detectors
            if detectors is not None
            else built_in_detectors(phone_regions=self._policy.phone_regions)
        )
        if detectors is None:
            # Judges base64 values by what they decode to, with the detectors above (not with itself).
            chosen = (*chosen, EncodedValueDetector(self._finds_anything))
        policy_detectors: list[Detector] = []
        if self._policy.deny_terms:
            policy_detectors.append(DenyTermDetector(self._policy.deny_terms))
        if self._policy.custom_patterns:
            policy_detectors.append(CustomPatternDetector(self._policy.custom_patterns))
        self._detectors = tuple(
            detector
            for detector in (*chosen, *policy_detectors)
            if detector.name not in self._policy.disabled_detectors
        )
        self._prefilter = Prefilter(self._detectors, compiled=compiled_scan)
        # The findings are the same without it (compiled_scan=False, or hyperscan missing): only slower. Texts
        # shorter than `compiled_from` run without it; it is compiled on the first text of COMPILE_AT_CHARS.
        self._scanner = CompiledScan(
            candidate_parts_of(self._detectors),
            enabled=compiled_scan,
            shortest=compiled_from,
            compile_at=COMPILE_AT_CHARS,
        )
        self._inner_detectors = tuple(d for d in self._detectors if not isinstance(d, EncodedValueDetector))
        self._inner_prefilter = Prefilter(self._inner_detectors, compiled=False)  # decoded values: short
        self._red_types = self._policy.red_types | {p.type for p in self._policy.custom_patterns if p.red}

    @property
    def policy(self) -> RedactionPolicy:
        return self._policy

    @property
    def detectors(self) -> tuple[Detector, ...]:
        return self._detectors

    @property
    def compiled_scan(self) -> bool:
        """Whether the compiled scan runs (asked for, and hyperscan took every candidate pattern). Asking
        compiles it, so that it serves every text of `compiled_from` characters or more from then on."""
        return self._scanner.active

    def redact(
        self,
        text: str,
        *,
        context: RedactionContext | None = None,
        app: str | None = None,
        hints: PolicyHints | None = None,
    ) -> RedactionResult:
        found = self.masked_spans(text, app=app, hints=hints)
        if isinstance(found, RedactionResult):
            return found
        try:
            return self._result(
                text, found, context if context is not None else RedactionContext.random(), hints
            )
        except Exception as error:  # fail closed, whatever went wrong
            return RedactionResult(
                ENGINE_ERROR_TEXT, Level.RED, f"engine error in engine: {type(error).__name__}"
            )

    def masked_spans(
        self, text: str, *, app: str | None = None, hints: PolicyHints | None = None
    ) -> list[MaskedSpan] | RedactionResult:
        """The disjoint spans to mask, in order, before any placeholder is numbered (for a caller that
        writes only part of the text, `redact_stream`), or the red result that stops it: a red-listed
        app, an engine error."""
        stage = "engine"
        try:
            if self._policy.is_red_app(app):
                return RedactionResult(WITHHELD_TEXT, Level.RED, "content of a red-listed app")
            if not isinstance(text, str):
                raise TypeError("text must be a str")
            scan = ScanText(text)
            scan.candidate_lines = self._candidate_lines(scan)
            candidates: list[Candidate] = []
            stage = "prefilter"
            selected = self._prefilter.select(scan, compiled=scan.candidate_lines is not None)
            for detector in (*selected, *self._hint_detectors(hints)):
                stage = detector.name
                candidates.extend(detector.detect(scan))
            stage = "harmless"
            candidates = drop_harmless(scan, candidates)
            stage = "engine"
            candidates.extend(self._hint_spans(hints, len(text)))
            return merge_overlaps(self._kept(text, candidates))
        except Exception as error:  # fail closed, whatever went wrong
            return RedactionResult(
                ENGINE_ERROR_TEXT, Level.RED, f"engine error in {stage}: {type(error).__name__}"
            )

    def red_types_of(self, spans: Sequence[MaskedSpan], hints: PolicyHints | None = None) -> list[str]:
        """The must-not-leave types among `spans` (every type merged into one, not only its winner)."""
        red_hint_types = {span.type for span in hints.spans if span.red} if hints is not None else set()
        red_hint_types |= {p.type for p in hints.patterns if p.red} if hints is not None else set()
        found_types = set().union(*(span.types for span in spans))
        return sorted(found_types & (self._red_types | red_hint_types))

    def _candidate_lines(self, scan: ScanText) -> dict[CandidatePart, list[tuple[int, int]]] | None:
        try:
            return self._scanner.lines(scan)
        except Exception:  # hyperscan failed on this text: the plain path finds the same, slower
            return None

    def _finds_anything(self, text: str) -> bool:
        """Whether the detectors find anything kept in `text` (a decoded value); its candidates stay here."""
        scan = ScanText(text)
        found = [c for d in self._inner_prefilter.select(scan, compiled=False) for c in d.detect(scan)]
        return bool(self._kept(text, drop_harmless(scan, found)))

    def redact_lines(
        self,
        lines: Sequence[str],
        *,
        context: RedactionContext | None = None,
        app: str | None = None,
        hints: PolicyHints | None = None,
    ) -> LinesRedaction:
        """Redact OCR lines as one text; each finding comes back as per-line character spans too."""
        try:
            joined = join_lines(lines)
        except Exception as error:
            failed = RedactionResult(
                ENGINE_ERROR_TEXT, Level.RED, f"engine error in lines: {type(error).__name__}"
            )
            return LinesRedaction(failed, ())
        result = self.redact(joined, context=context, app=app, hints=hints)
        return LinesRedaction(result, map_to_lines(result.findings, lines))

    def _hint_detectors(self, hints: PolicyHints | None) -> Iterable[Detector]:
        if hints is None:
            return ()
        extra: list[Detector] = []
        if hints.deny_terms:
            extra.append(DenyTermDetector(hints.deny_terms))
        if hints.patterns:
            extra.append(CustomPatternDetector(hints.patterns))
        return extra

    def _hint_spans(self, hints: PolicyHints | None, length: int) -> Iterable[Candidate]:
        if hints is None:
            return ()
        return (
            Candidate(span.type, max(0, span.start), min(length, span.end), 1.0, _HINT_DETECTOR)
            for span in hints.spans
        )

    def _kept(self, text: str, candidates: list[Candidate]) -> list[Candidate]:
        policy = self._policy
        floor = policy.min_confidence
        if not (policy.allow_values or policy.allow_patterns):  # the usual case: no value to slice and test
            return [c for c in candidates if c.confidence >= floor]
        return [
            c for c in candidates if c.confidence >= floor and not policy.is_allowed(text[c.start : c.end])
        ]

    def _result(
        self, text: str, spans: list[MaskedSpan], context: RedactionContext, hints: PolicyHints | None
    ) -> RedactionResult:
        if not spans:
            if hints is not None and hints.red_reason:
                return RedactionResult(text, Level.RED, f"plugin: {hints.red_reason}")
            return RedactionResult(text, Level.GREEN, "nothing found")
        findings = numbered_findings(text, spans, context)
        masked = sum(end - start for start, end, _winner, _types in spans)
        share = masked / len(text)
        level, reason = self.grade(
            red_found=self.red_types_of(spans, hints),
            masked_types={span.winner.type for span in spans},
            spans=len(spans),
            share=share,
            length=len(text),
            hints=hints,
        )
        return RedactionResult(masked_text(text, findings), level, reason, tuple(findings), share)

    def grade(
        self,
        *,
        red_found: Sequence[str],
        masked_types: Iterable[str],
        spans: int,
        share: float,
        length: int,
        hints: PolicyHints | None = None,
    ) -> tuple[Level, str]:
        """The level of a text with `spans` masked spans: red for a must-not-leave type, a plugin's red
        reason or a masked share above the policy's limit, else amber. Public for a caller that grades
        one text read in several windows (`redact_stream`)."""
        if red_found:
            return Level.RED, f"must not leave: {', '.join(sorted(red_found))}"
        if hints is not None and hints.red_reason:
            return Level.RED, f"plugin: {hints.red_reason}"
        policy = self._policy
        if length >= policy.red_share_min_chars and share > policy.red_share_threshold:
            return Level.RED, f"masked share {share:.2f} above {policy.red_share_threshold:.2f}"
        return Level.AMBER, f"masked {spans}: {', '.join(sorted(set(masked_types)))}"


def numbered_findings(text: str, spans: Sequence[MaskedSpan], context: RedactionContext) -> list[Finding]:
    """The spans as findings with their placeholders, numbered in order (the winner's own text keys
    the placeholder: the same token gets the same one whichever neighbour it was merged with)."""
    findings: list[Finding] = []
    # A value repeated in one text (an address on every log line) is numbered once: HMAC is the cost here.
    numbered: dict[tuple[str, str], str] = {}
    for start, end, winner, _types in spans:
        key = (winner.type, text[winner.start : winner.end])
        placeholder = numbered.get(key)
        if placeholder is None:
            placeholder = numbered[key] = context.placeholder(*key)
        findings.append(
            Finding(str(winner.type), start, end, winner.detector, winner.confidence, placeholder)
        )
    return findings


def masked_text(text: str, findings: Sequence[Finding], start: int = 0, end: int | None = None) -> str:
    """text[start:end] with each finding (disjoint, in order, inside it) replaced by its placeholder."""
    pieces: list[str] = []
    cursor = start
    for finding in findings:
        pieces.append(text[cursor : finding.start])
        pieces.append(finding.placeholder)
        cursor = finding.end
    pieces.append(text[cursor:end])
    return "".join(pieces)
