"""Text redaction recall: kronii, Presidio 2.2 and detect-secrets 1.5 on the same generated corpus, in one run.

The corpus is tests/unit/redaction/generated_corpus.py (fixed seed): every python-stdnum format naming a person,
a taxpayer, a bank account or a device (valid values, and invalid look-alikes to be left alone), phone numbers
of every phonenumbers region, prose in 24 languages, structured files and CLI password flags, and harmless
look-alikes. Every tool gives spans; the same rule scores them all: a value is found only if no 6-character
piece of it is left once the spans are replaced; a harmless line is untouched when no span touches it.

- kronii: `RedactionEngine().redact(text)` per sample, the findings' spans (whatever the level: a withheld
  text is scored by what would have been masked).
- Presidio 2.2 (presidio-analyzer): every recognizer of `predefined_recognizers` that runs without a model,
  i.e. all its PatternRecognizer subclasses plus PhoneRecognizer (phonenumbers), each called directly with
  `nlp_artifacts=None` for all its entities, any score kept (AnalyzerEngine's default threshold is 0). Its
  spaCy NER (PERSON, LOCATION, DATE_TIME...) needs a model download, not possible here, so names and addresses
  are not in its figures: that is Presidio without a model, as an offline install gets it.
- detect-secrets 1.5: each sample written to a file with the extension of its format (.json, .yaml, .env,
  .netrc, ...) and scanned like `detect-secrets scan` (`scan_file` under `default_settings()`, all plugins);
  each reported secret masks its value on its line (the whole line when the value is not given or not found
  there, which favours detect-secrets).

Usage: python bench/redaction_recall.py [--misses N]
"""

from __future__ import annotations

import argparse
import inspect
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from _common import machine, save
from kronii.redaction import RedactionEngine

from tests.unit.redaction.generated_corpus import (
    SECRET_FAMILIES,
    Scores,
    generated_corpus,
    masked,
    score,
    value_found,
)
from tests.unit.redaction.generated_samples import Label, Sample

try:
    import tldextract.tldextract
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings
    from presidio_analyzer import EntityRecognizer, PatternRecognizer, predefined_recognizers
except ImportError:  # a plain `uv sync` without the bench group
    sys.exit("detect-secrets or presidio-analyzer is not installed: uv sync --all-packages --group bench")

Spans = list[tuple[int, int]]
PRESIDIO_STRICT = (
    0.5  # a second Presidio figure: only results scored at least this (context cannot raise them)
)

# Presidio's e-mail recognizer asks tldextract, which fetches the public suffix list on first use; offline, it
# uses the snapshot it ships with (and logs a connection error first), so it is given the snapshot directly.
tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=())


# What each peer says it finds, by its documentation, so that its recall can also be read within its own scope:
# Presidio's model-free recognizers (phone numbers, e-mail, IBAN, crypto wallets, MAC addresses, UK and Indian
# plates, and the ids of its country recognizers), detect-secrets' secrets. kronii's scope is everything.
PRESIDIO_MODULES = frozenset(
    {
        "au.tfn", "bitcoin", "es.dni", "es.nie", "fi.hetu", "gb.nhs", "iban", "be.iban", "es.iban", "me.iban",
        "no.iban", "in_.aadhaar", "in_.epic", "in_.gstin", "in_.pan", "it.codicefiscale", "it.iva", "kr.rrn",
        "pl.pesel", "th.pin", "us.itin", "us.ssn",
    }
)  # fmt: skip
PRESIDIO_FAMILIES = frozenset({"PHONE", "EMAIL", "MAC_ADDRESS"})
PRESIDIO_PLATES = ("misc:GB", "misc:IN")


def in_scope(tool: str, label: Label) -> bool:
    if tool.startswith("detect-secrets"):
        return label.family in SECRET_FAMILIES
    if tool.startswith("Presidio"):
        module = label.kind.removeprefix("stdnum:").split(" ")[0] if label.kind.startswith("stdnum:") else ""
        return (
            label.family in PRESIDIO_FAMILIES or module in PRESIDIO_MODULES or label.kind in PRESIDIO_PLATES
        )
    return True


def scoped_recall(tool: str, samples: Sequence[Sample], spans: Sequence[Spans]) -> list[int]:
    """Values found among those the tool's documentation says it finds."""
    found = total = 0
    for item, item_spans in zip(samples, spans, strict=True):
        output = masked(item.text, item_spans)
        for label in item.labels:
            if label.find and in_scope(tool, label):
                total += 1
                found += value_found(item.text[label.start : label.end], output)
    return [found, total]


def _timed(samples: Sequence[Sample], spans_of: Callable[[Sample], Spans]) -> tuple[list[Spans], float]:
    started = time.process_time()
    spans = [spans_of(item) for item in samples]
    return spans, time.process_time() - started


def run_kronii(samples: Sequence[Sample]) -> tuple[list[Spans], float]:
    engine = RedactionEngine()
    engine.redact(samples[0].text)  # compiled patterns, phone metadata
    return _timed(samples, lambda item: [f.span for f in engine.redact(item.text).findings])


def presidio_recognizers() -> tuple[list[EntityRecognizer], list[str]]:
    """Every predefined recognizer that needs no model, instantiated with its defaults; and those that failed."""
    made: list[EntityRecognizer] = []
    failed: list[str] = []
    for name, cls in sorted(inspect.getmembers(predefined_recognizers, inspect.isclass)):
        if not (issubclass(cls, PatternRecognizer) or name == "PhoneRecognizer"):
            continue
        try:
            recognizer = cls()
            assert isinstance(recognizer, EntityRecognizer)
            made.append(recognizer)
        except Exception as error:  # a recognizer that needs arguments or a resource
            failed.append(f"{name}: {type(error).__name__}")
    return made, failed


def run_presidio(samples: Sequence[Sample]) -> tuple[list[Spans], list[Spans], float, dict[str, Any]]:
    """Spans of every result, and of results scored at least PRESIDIO_STRICT."""
    recognizers, failed = presidio_recognizers()
    scored: list[list[tuple[int, int, float]]] = []

    def spans_of(item: Sample) -> Spans:
        out: list[tuple[int, int, float]] = []
        for recognizer in recognizers:
            results = recognizer.analyze(item.text, recognizer.supported_entities, None)  # type: ignore[arg-type]
            out.extend((r.start, r.end, r.score) for r in results or ())
        scored.append(out)
        return [(start, end) for start, end, _ in out]

    spans_of(samples[0])
    scored.clear()
    spans, cpu = _timed(samples, spans_of)
    strict = [[(s, e) for s, e, value in item if value >= PRESIDIO_STRICT] for item in scored]
    info = {
        "recognizers": len(recognizers),
        "names": sorted(type(r).__name__ for r in recognizers),
        "failed": failed,
    }
    return spans, strict, cpu, info


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for line in text.split("\n"):
        spans.append((start, start + len(line)))
        start += len(line) + 1
    return spans


def _ds_spans(text: str, path: Path) -> Spans:
    lines = _line_spans(text)
    out: Spans = []
    for secret in scan_file(str(path)):
        start, end = lines[secret.line_number - 1]
        value = secret.secret_value
        at = text.find(value, start, end) if value else -1
        if value is None or at < 0:
            out.append((start, end))
            continue
        while at >= 0:
            out.append((at, at + len(value)))
            at = text.find(value, at + len(value), end)
    return out


def run_detect_secrets(samples: Sequence[Sample], workdir: Path) -> tuple[list[Spans], float]:
    paths = []
    for number, item in enumerate(samples):
        path = workdir / f"{number:05d}{item.suffix}"
        path.write_text(item.text, encoding="utf-8")
        paths.append(path)
    with default_settings():
        _ds_spans(samples[0].text, paths[0])
        started = time.process_time()
        spans = [_ds_spans(item.text, path) for item, path in zip(samples, paths, strict=True)]
        return spans, time.process_time() - started


def _cell(pair: Sequence[int]) -> str:
    found, total = pair
    return f"{found} / {total}" if total else "-"


def print_table(tools: dict[str, Scores], scoped: dict[str, list[int]]) -> None:
    families = sorted(
        {f for scores in tools.values() for f in scores.total}, key=lambda f: (f in SECRET_FAMILIES, f)
    )
    print("| | " + " | ".join(tools) + " |")
    print("| --- |" + " --- |" * len(tools))
    rows: list[tuple[str, Callable[[Scores], Sequence[int]]]] = [
        ("secrets (all)", lambda s: s.recall(f for f in s.total if f in SECRET_FAMILIES)),
        ("personal data (all)", lambda s: s.recall(f for f in s.total if f not in SECRET_FAMILIES)),
        *((family, (lambda s, family=family: (s.found[family], s.total[family]))) for family in families),
        ("harmless untouched", lambda s: (s.harmless_untouched, s.harmless)),
        ("invalid look-alikes left alone", lambda s: (s.invalid_left, s.invalid)),
    ]
    for name, get in rows:
        print(f"| {name} | " + " | ".join(_cell(get(scores)) for scores in tools.values()) + " |")
    print("| within its documented scope | " + " | ".join(_cell(scoped[tool]) for tool in tools) + " |")


def _misses(scores: Scores, limit: int) -> dict[str, Any]:
    """kronii's misses by family and kind of sample (no values): what to fix."""
    by_group: Counter[str] = Counter()
    for kind, count in scores.missed_kinds.items():
        family, what = kind.split(" ", 1)
        by_group[f"{family} {what.split(':')[0]}"] += count
    return {"by_family_and_group": dict(by_group.most_common()), "kinds": sorted(scores.missed_kinds)[:limit]}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--misses", type=int, default=400, help="how many of kronii's missed kinds to list")
    args = parser.parse_args()
    started = time.perf_counter()
    samples = list(generated_corpus())
    print(f"corpus: {len(samples)} samples, generated in {time.perf_counter() - started:.1f} s", flush=True)
    k_spans, k_cpu = run_kronii(samples)
    p_spans, p_strict, p_cpu, p_info = run_presidio(samples)
    with tempfile.TemporaryDirectory(prefix="redaction-recall-") as tmp:
        d_spans, d_cpu = run_detect_secrets(samples, Path(tmp))
    tools = {
        "kronii": score(samples, k_spans),
        f"Presidio {version('presidio-analyzer')} (pattern recognizers)": score(samples, p_spans),
        f"Presidio, score >= {PRESIDIO_STRICT}": score(samples, p_strict),
        f"detect-secrets {version('detect-secrets')}": score(samples, d_spans),
    }
    all_spans = {0: k_spans, 1: p_spans, 2: p_strict, 3: d_spans}
    scoped = {tool: scoped_recall(tool, samples, all_spans[i]) for i, tool in enumerate(tools)}
    print_table(tools, scoped)
    size = sum(len(item.text.encode()) for item in samples)
    figures = {
        "machine": machine(),
        "corpus": {"samples": len(samples), "bytes": size, "groups": dict(Counter(s.group for s in samples))},
        "tools": {name: {**scores.figures(), "within_scope": scoped[name]} for name, scores in tools.items()},
        "cpu_s": {"kronii": round(k_cpu, 2), "presidio": round(p_cpu, 2), "detect_secrets": round(d_cpu, 2)},
        "presidio": p_info,
        "kronii_misses": _misses(tools["kronii"], args.misses),
    }
    save("redaction_recall", figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
