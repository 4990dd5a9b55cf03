"""Recall and precision per type over the labelled corpus in tests/data/redaction (see its README).

A label counts as found when a finding of a compatible type overlaps it; a finding counts as correct when it
overlaps a label of a compatible type. Types with too few samples for a rate still count in the totals.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from kronii.redaction import Finding, Level, RedactionEngine

CORPUS = Path(__file__).parents[2] / "data" / "redaction" / "corpus"
_MARK = re.compile(r"⟦([A-Z0-9_]+)\|(.*?)⟧", re.DOTALL)
# A random token without a vendor format is labelled SECRET; the entropy detector reports it as HIGH_ENTROPY.
_FAMILY = {"HIGH_ENTROPY": "SECRET"}
MIN_SAMPLES = 5
MIN_RECALL = 0.95
MIN_PRECISION = 0.95
MIN_OVERALL = 0.97


@dataclass(frozen=True)
class Label:
    type: str
    start: int
    end: int


@dataclass(frozen=True)
class Document:
    source: str
    text: str
    labels: tuple[Label, ...]


def _family(finding_type: str) -> str:
    return _FAMILY.get(finding_type, finding_type)


def load_corpus() -> list[Document]:
    documents = []
    for path in sorted(CORPUS.glob("*.txt")):
        for number, raw in enumerate(path.read_text(encoding="utf-8").split("\n=====\n")):
            pieces, labels, cursor, length = [], [], 0, 0
            for match in _MARK.finditer(raw):
                before = raw[cursor : match.start()]
                pieces.append(before)
                length += len(before)
                value = match.group(2)
                labels.append(Label(match.group(1), length, length + len(value)))
                pieces.append(value)
                length += len(value)
                cursor = match.end()
            pieces.append(raw[cursor:])
            documents.append(Document(f"{path.name}#{number}", "".join(pieces), tuple(labels)))
    return documents


def _overlaps(label: Label, finding: Finding) -> bool:
    return finding.start < label.end and label.start < finding.end and _family(finding.type) == label.type


@dataclass
class Scores:
    labels: Counter[str]
    found: Counter[str]
    findings: Counter[str]
    correct: Counter[str]
    misses: list[str]
    false_alarms: list[str]


def score(engine: RedactionEngine, documents: list[Document]) -> Scores:
    scores = Scores(Counter(), Counter(), Counter(), Counter(), [], [])
    for document in documents:
        result = engine.redact(document.text)
        assert result.level is not Level.RED or result.findings, document.source  # never an engine error
        for label in document.labels:
            scores.labels[label.type] += 1
            if any(_overlaps(label, finding) for finding in result.findings):
                scores.found[label.type] += 1
            else:
                scores.misses.append(f"{document.source} {label.type} at {label.start}")
        for finding in result.findings:
            kind = _family(finding.type)
            scores.findings[kind] += 1
            if any(_overlaps(label, finding) for label in document.labels):
                scores.correct[kind] += 1
            else:
                scores.false_alarms.append(f"{document.source} {finding.type} at {finding.start}")
    return scores


@pytest.fixture(scope="module")
def scores() -> Scores:
    return score(RedactionEngine(), load_corpus())


def test_corpus_is_large_and_varied(scores: Scores) -> None:
    assert sum(scores.labels.values()) >= 150
    assert len(scores.labels) >= 25
    assert len(load_corpus()) >= 100


def test_recall_per_type(scores: Scores) -> None:
    low = {
        kind: f"{scores.found[kind]}/{count}"
        for kind, count in scores.labels.items()
        if count >= MIN_SAMPLES and scores.found[kind] / count < MIN_RECALL
    }
    assert not low, (low, scores.misses)


def test_precision_per_type(scores: Scores) -> None:
    low = {
        kind: f"{scores.correct[kind]}/{count}"
        for kind, count in scores.findings.items()
        if count >= MIN_SAMPLES and scores.correct[kind] / count < MIN_PRECISION
    }
    assert not low, (low, scores.false_alarms)


def test_overall_recall_and_precision(scores: Scores) -> None:
    recall = sum(scores.found.values()) / sum(scores.labels.values())
    precision = sum(scores.correct.values()) / sum(scores.findings.values())
    assert recall >= MIN_OVERALL, scores.misses
    assert precision >= MIN_OVERALL, scores.false_alarms
