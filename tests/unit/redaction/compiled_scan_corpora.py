"""Every text the redaction tests feed the engine, for comparing the compiled scan with the plain path.

The labelled documents of tests/data/redaction, each alone, each corpus file whole and all of them three times
over; the generated corpus, each sample alone, all of it as one long document, and three times over (texts that
repeat their lines take the engine's distinct-lines paths); and
every string any test module of this directory passes through `pytest.mark.parametrize` or keeps in a
module-level constant (the harmless lines, the documented examples, each detector's cases).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

from kronii.redaction import RedactionEngine

from tests.unit.redaction.generated_corpus import generated_corpus, joined
from tests.unit.redaction.test_redaction_corpus import CORPUS, load_corpus

HERE = Path(__file__).resolve().parent
# These read the compiled scan's own cases (or the CLI's files): the engine's corpora are the others.
_NOT_CORPORA = frozenset({"test_redaction_compiled_scan", "test_redaction_scanner"})

Found = tuple[tuple[str, int, int, str], ...]


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from _strings(item)
    elif hasattr(value, "values") and hasattr(value, "id"):  # pytest.param(...)
        yield from _strings(value.values)


def _parametrized(module: ModuleType) -> Iterator[str]:
    for name, value in vars(module).items():
        if name.isupper():
            yield from _strings(value)
        for mark in getattr(value, "pytestmark", ()):
            if mark.name == "parametrize" and len(mark.args) >= 2:
                yield from _strings(mark.args[1])


@cache
def test_strings() -> tuple[str, ...]:
    """The strings the test modules of this directory pass to their tests (parametrize, constants)."""
    found: dict[str, None] = {}
    for path in sorted(HERE.glob("test_redaction_*.py")):
        if path.stem in _NOT_CORPORA:
            continue
        module = importlib.import_module(f"tests.unit.redaction.{path.stem}")
        found.update(dict.fromkeys(text for text in _parametrized(module) if text.strip()))
    return tuple(found)


@cache
def corpora() -> dict[str, tuple[str, ...]]:
    """Every corpus by name: the texts the engine is run on."""
    samples = generated_corpus()
    return {
        "labelled documents": tuple(document.text for document in load_corpus()),
        "labelled files": tuple(path.read_text(encoding="utf-8") for path in sorted(CORPUS.glob("*.txt"))),
        "generated samples": tuple(sample.text for sample in samples),
        "generated, one document": (joined(samples).text,),
        "test strings": test_strings(),
        "test strings, one document": ("\n".join(test_strings()),),
        # Texts that repeat their lines are scanned once per distinct line (a log, a dense config).
        "labelled documents, three times over": ("\n".join(document.text for document in load_corpus()) * 3,),
        "generated samples, three times over": ("\n\n".join(sample.text for sample in samples) * 3,),
    }


def findings(engine: RedactionEngine, texts: Iterable[str]) -> list[Found]:
    """Each text's findings as (type, start, end, detector), the level's reason with them."""
    results = []
    for text in texts:
        result = engine.redact(text)
        found = tuple((f.type, f.start, f.end, f.detector) for f in result.findings)
        results.append((*found, (result.level.value, 0, 0, result.reason)))
    return results
