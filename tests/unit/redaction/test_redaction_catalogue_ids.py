"""The catalogue of checked identifiers (python-stdnum): every format it lists, found by its check and its name.

The values are the modules' own doctest examples (valid by their check digits, none belonging to anyone) and the
same with one check character changed; the words before them are the catalogue's own names and the family words
of data/id_words.toml. The generated corpus (test_redaction_generated_corpus.py) draws random values besides.
"""

from __future__ import annotations

import importlib
import json
import re
from functools import cache
from importlib.resources import files
from types import ModuleType
from typing import Any, cast

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors import CatalogueIdDetector, ScanText
from stdnum.util import get_number_modules

_ENGINE = RedactionEngine()
_DOCTEST = re.compile(r">>> (?:validate|is_valid|format)\('([^']+)'")


@cache
def _catalogue() -> dict[str, Any]:
    data = files("kronii.redaction").joinpath("data", "id_catalogue.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(data)
    return loaded


def _formats() -> list[dict[str, Any]]:
    return [f for f in _catalogue()["formats"] if max(map(len, f["shapes"])) >= 7]


def _valid_example(module_name: str) -> str | None:
    """A doctest example as a person writes it: capitals, and the digits the format's compact form keeps; None
    when the format pads or rewrites the digits or is written in lower case (the engine reads digits as
    written)."""
    module = importlib.import_module(f"stdnum.{module_name}")
    for example in _DOCTEST.findall(module.__doc__ or ""):
        written = re.sub(r"[^0-9A-Za-z]", "", example)
        try:
            compact = re.sub(r"[^0-9A-Za-z]", "", module.compact(example))
        except ValueError:  # an example of what compact refuses
            continue
        if (
            len(compact) >= 7
            and module.is_valid(example)
            and written.endswith(compact)
            and example.upper() == example
        ):
            return str(example)
    return None


def _written_examples() -> list[Any]:
    """Each catalogued format with an example written as its compact form (those without one are listed in
    test_formats_read_only_as_written_are_few)."""
    params = []
    for entry in _formats():
        value = _valid_example(entry["module"])
        if value is not None:
            params.append(pytest.param(entry, value, id=entry["module"]))
    return params


def _checked_examples() -> list[Any]:
    """Each of those whose example can be mistyped so that its own check fails."""
    params = []
    for param in _written_examples():
        entry, value = param.values
        wrong = _mistyped(entry["module"], value)
        if wrong is not None:
            params.append(pytest.param(entry, wrong, id=entry["module"]))
    return params


def _survivors(value: str, output: str) -> list[str]:
    """The 6-character pieces of the value's letters and digits still readable in the output."""
    compact = re.sub(r"[^0-9A-Za-z]", "", value)
    readable = re.sub(r"[^0-9A-Za-z]", "", output)
    return [compact[i : i + 6] for i in range(len(compact) - 5) if compact[i : i + 6] in readable]


def _found(text: str) -> list[tuple[str, str]]:
    return [(c.type, text[c.start : c.end]) for c in CatalogueIdDetector().detect(ScanText(text))]


def _mistyped(module_name: str, value: str) -> str | None:
    """The value with one digit changed so that its check fails, or None if every change still passes."""
    module = importlib.import_module(f"stdnum.{module_name}")
    if not module.is_valid(value):
        return None
    for index in reversed([i for i, c in enumerate(value) if c.isdigit()]):
        for digit in "0123456789":
            changed = value[:index] + digit + value[index + 1 :]
            if changed != value and not module.is_valid(changed):
                return changed
    return None


def test_every_stdnum_module_is_catalogued_or_left_out_with_a_reason() -> None:
    catalogue = _catalogue()
    listed = {f["module"] for f in catalogue["formats"]}
    accounted = (
        listed
        | set(catalogue["excluded"])
        | set(catalogue["without_examples"])
        | set(catalogue["business_numbers"])
    )
    every = {cast(ModuleType, m).__name__.removeprefix("stdnum.") for m in get_number_modules()}
    assert every <= accounted, f"rebuild with scripts/build_id_catalogue.py: {sorted(every - accounted)}"
    assert all(reason for reason in catalogue["excluded"].values())


def test_formats_read_only_as_written_are_few() -> None:
    unread = [f["module"] for f in _formats() if _valid_example(f["module"]) is None]
    assert len(unread) <= 12, unread
    assert len(_written_examples()) >= 100


@pytest.mark.parametrize(("entry", "value"), _written_examples())
def test_a_catalogued_number_after_its_own_name_is_masked(entry: dict[str, Any], value: str) -> None:
    name = next((n for n in entry["names"] if n.isascii() and len(n) >= 3), entry["names"][0])
    text = f"{name}: {value}"
    assert _found(text), text
    result = _ENGINE.redact(text)
    assert _survivors(value, result.text) == [], (text, result.text)


@pytest.mark.parametrize(("entry", "wrong"), _checked_examples())
def test_a_number_failing_its_check_is_left_alone_even_after_its_name(
    entry: dict[str, Any], wrong: str
) -> None:
    text = f"{entry['names'][0]}: {wrong}"
    found = [piece for _type, piece in _found(text) if len(piece) >= len(wrong) - 1]
    # Another format of the same shape may accept the changed digits; never the one it was written as.
    module = importlib.import_module(f"stdnum.{entry['module']}")
    assert not module.is_valid(wrong)
    assert not found or any(
        importlib.import_module(f"stdnum.{other['module']}").is_valid(wrong)
        for other in _formats()
        if other["module"] != entry["module"]
    ), (text, found)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Mitt personnummer är 880320-0016, ring mig.", "880320-0016"),
        ("주민등록번호 971013-9019902 입니다", "971013-9019902"),
        ("T.C. Kimlik No: 10000000146", "10000000146"),
        ("ИНН 7707083893", "7707083893"),
        ("Steuernummer 181/815/08155 (Bayern)", "181/815/08155"),
        ("身份证 11010519491231002X", "11010519491231002X"),
        ("IMEI: 35-417803-685978-9", "35-417803-685978-9"),
        ("tax number: 7707083893", "7707083893"),
        ("AHV-Nr. 756.9217.0769.85", "756.9217.0769.85"),
        ("PAN: ACUPA7085R", "ACUPA7085R"),
        ("MEID: AF 01 23 45 0A BC DE C", "AF 01 23 45 0A BC DE C"),
    ],
)
def test_ids_in_prose_of_many_countries_are_masked_by_the_engine(text: str, value: str) -> None:
    result = _ENGINE.redact(text)
    assert _survivors(value, result.text) == [], result.text


def test_a_strong_format_needs_no_word_and_a_weak_one_does() -> None:
    # Switzerland's social security number: a fixed prefix and a check digit; Russia's INN: one check digit.
    assert _found("756.9217.0769.85")
    assert not _found("order 7707083893 shipped")
    assert _found("ИНН 7707083893")


@pytest.mark.parametrize(
    "line",
    [
        "2024-05-17T09:31:02.145Z INFO request 1716243460 done in 35 ms",
        "build 20241205.1234567 of version 1.2.3.4567",
        "commit 4f3c2a1b9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a",
        "ORDER 1234567890 SHIPPED TO WAREHOUSE 7",
        "phone extension 4711 room 1234567",
    ],
)
def test_numbers_of_logs_and_builds_are_left_alone(line: str) -> None:
    assert _found(line) == []
