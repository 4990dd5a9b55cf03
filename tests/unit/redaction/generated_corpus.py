"""A generated, labelled corpus (fixed seed) for recall and over-masking, shared by the tests and bench/.

Groups of samples (each a short document with labelled value spans):
- `catalogue`: every covered python-stdnum format (generated_ids.py), valid values formatted beside the format's
  own short name and compact in a sentence, and INVALID look-alikes (one character changed, is_valid False)
  that are to be left alone unless another detector claims them;
- `phone`: every phonenumbers region, international and national format, in a sentence of the region's
  language where the corpus has it (English otherwise);
- `prose`: 22 languages in their scripts (tests/data/redaction/generated/prose.toml): a password, a phone
  number, a birth date with the month's name, an identity number, a postal address and a person's name (each
  after a label, and again in running text with no label);
- `structured`: JSON, YAML, TOML, INI, .env, URL query strings, .netrc, .pgpass, docker config.json auths,
  `kubectl get secret -o yaml` (base64 data), `docker inspect` Env; `cli`: passwords given to common tools;
- `misc` (generated_misc.py): VINs (valid and with a wrong check digit), GPS coordinates, MAC addresses in
  every notation, IDN e-mail addresses, licence plates of eight countries;
- `harmless`: look-alikes that must stay as they are (documented example keys and cards, documentation
  addresses, public keys and fingerprints, hashes and test vectors, versions, timestamps, a font data URI,
  ids with a wrong check digit): tests/data/redaction/generated/harmless.toml.

Scoring, the same for every tool: a tool gives spans; the output is the text with those spans replaced; a
value counts as found only if no 6-character piece of it (the whole value if shorter) is left in the output.
A harmless sample is untouched when no span touches it. Nothing here is tuned to a tool: the corpus measures.
"""

from __future__ import annotations

import base64
import json
import random
import string
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache

from tests.unit.redaction.generated_ids import DATA, SEED, CheckedValue, checked_values, phone_values
from tests.unit.redaction.generated_misc import misc_samples
from tests.unit.redaction.generated_samples import Label, Sample
from tests.unit.redaction.generated_structured import cli_samples, structured_samples

SECRET_FAMILIES = frozenset({"PASSWORD", "SECRET"})
PIECE = 6


def filled(template: str, value: str) -> tuple[str, int, int]:
    """The template with {value} in place, and where the value is."""
    before, _, after = template.partition("{value}")
    return before + value + after, len(before), len(before) + len(value)


def sample(
    group: str, template: str, value: str, family: str, kind: str, *, find: bool = True, suffix: str = ".txt"
) -> Sample:
    text, start, end = filled(template, value)
    return Sample(group, text, (Label(start, end, family, kind, find),), suffix)


@cache
def languages() -> dict[str, dict[str, object]]:
    with (DATA / "prose.toml").open("rb") as handle:
        return tomllib.load(handle)


def _password(rng: random.Random) -> str:
    body = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(9))
    return body[:4] + rng.choice("!#%&*+-=?@^_") + body[4:] + rng.choice(string.digits)


def _language_of_country() -> dict[str, str]:
    return {str(spec["region"]).lower(): lang for lang, spec in languages().items()}


def _catalogue_samples() -> Iterable[Sample]:
    by_country = _language_of_country()
    for value in checked_values():
        state = "valid" if value.valid else "invalid"
        yield sample(
            "catalogue", f"{value.abbreviation}: {{value}}", value.formatted, value.family,
            f"stdnum:{value.module} formatted {state}", find=value.valid,
        )  # fmt: skip
        yield sample(
            "catalogue", _compact_template(value, by_country), value.compact, value.family,
            f"stdnum:{value.module} compact {state}", find=value.valid,
        )  # fmt: skip


def _compact_template(value: CheckedValue, by_country: dict[str, str]) -> str:
    country = value.module.split(".")[0].rstrip("_") if "." in value.module else ""
    lang = by_country.get(country)
    if lang is not None and languages()[lang].get("id_module") == value.module:
        return str(languages()[lang]["id"])
    return f"the {value.abbreviation} on file is {{value}}, see the form"


def _phone_samples() -> Iterable[Sample]:
    by_region = {str(spec["region"]): spec for spec in languages().values()}
    english = languages()["en"]
    for phone in phone_values():
        spec = by_region.get(phone.region, english)
        yield sample(
            "phone",
            str(english["phone"]),
            phone.international,
            "PHONE",
            f"phone:{phone.region} international",
        )
        yield sample("phone", str(spec["phone"]), phone.national, "PHONE", f"phone:{phone.region} national")


def _date(spec: dict[str, object], rng: random.Random) -> str:
    index = rng.randrange(3)
    months = list(spec["months"])  # type: ignore[call-overload]
    return str(spec["date"]).format(
        d=rng.randint(2, 28), m=(3, 7, 11)[index], month=months[index], y=rng.randint(1950, 2004)
    )


def _prose_samples() -> Iterable[Sample]:
    phones = {p.region: p for p in phone_values()}
    ids = {v.module: v for v in checked_values() if v.valid}
    for lang, spec in languages().items():
        rng = random.Random(f"{SEED}/prose/{lang}")
        phone = phones[str(spec["region"])]
        values: list[tuple[str, str, str]] = [
            ("password", _password(rng), "PASSWORD"),
            ("phone", phone.national, "PHONE"),
            ("born", _date(spec, rng), "DATE_OF_BIRTH"),
            ("address", rng.choice(list(spec["addresses"])), "POSTAL_ADDRESS"),  # type: ignore[call-overload]
            ("name", rng.choice(list(spec["names"])), "PERSON_NAME"),  # type: ignore[call-overload]
            ("address_in_text", rng.choice(list(spec["addresses"])), "POSTAL_ADDRESS"),  # type: ignore[call-overload]
            ("name_in_text", rng.choice(list(spec["names"])), "PERSON_NAME"),  # type: ignore[call-overload]
        ]
        module = spec.get("id_module")
        if isinstance(module, str) and module in ids:
            values.append(("id", ids[module].compact, ids[module].family))
        for key, value, family in values:
            yield sample("prose", str(spec[key]), value, family, f"prose:{lang} {key}")


@cache
def _harmless_data() -> dict[str, object]:
    with (DATA / "harmless.toml").open("rb") as handle:
        return tomllib.load(handle)


def _font_data_uri() -> str:
    rng = random.Random(f"{SEED}/font")
    payload = b"wOF2\x00\x01\x00\x00" + bytes(rng.randrange(256) for _ in range(180))
    return "data:font/woff2;base64," + base64.b64encode(payload).decode()


def _harmless_samples() -> Iterable[Sample]:
    for kind, lines in _harmless_data()["lines"].items():  # type: ignore[attr-defined]
        for line in lines:
            yield Sample("harmless", line, (Label(0, len(line), "HARMLESS", f"harmless:{kind}", find=False),))
    css = f"@font-face {{ font-family: 'Inter'; src: url({_font_data_uri()}) format('woff2'); }}"
    yield Sample(
        "harmless", css, (Label(0, len(css), "HARMLESS", "harmless:font data URI", find=False),), ".css"
    )
    rng = random.Random(f"{SEED}/digest")
    manifest = json.dumps(
        {"sha256": "".join(rng.choice("0123456789abcdef") for _ in range(64)), "size": 48213}
    )
    yield Sample(
        "harmless",
        manifest,
        (Label(0, len(manifest), "HARMLESS", "harmless:content digest", find=False),),
        ".json",
    )


@cache
def generated_corpus() -> tuple[Sample, ...]:
    """Every sample, in a fixed order."""
    return (
        *_catalogue_samples(),
        *_phone_samples(),
        *_prose_samples(),
        *structured_samples(),
        *cli_samples(),
        *misc_samples(),
        *_harmless_samples(),
    )


def joined(samples: Sequence[Sample], separator: str = "\n\n") -> Sample:
    """Several samples as one document (labels moved with their text), e.g. for one CLI run."""
    parts: list[str] = []
    labels: list[Label] = []
    offset = 0
    for item in samples:
        labels.extend(
            replace(label, start=label.start + offset, end=label.end + offset) for label in item.labels
        )
        parts.append(item.text)
        offset += len(item.text) + len(separator)
    return Sample("joined", separator.join(parts), tuple(labels))


def masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """The text with every span replaced by one placeholder character per run (spans may overlap)."""
    covered = [False] * len(text)
    for start, end in spans:
        for index in range(max(0, start), min(len(text), end)):
            covered[index] = True
    out: list[str] = []
    for index, char in enumerate(text):
        if not covered[index]:
            out.append(char)
        elif index == 0 or not covered[index - 1]:
            out.append("\x00")
    return "".join(out)


def value_found(value: str, output: str) -> bool:
    """Found: no PIECE-character piece of the value (the whole value if shorter) is left in the output."""
    if len(value) <= PIECE:
        return value not in output
    return all(value[i : i + PIECE] not in output for i in range(len(value) - PIECE + 1))


def _touched(label: Label, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start < label.end and end > label.start for start, end in spans)


@dataclass
class Scores:
    """Recall per family, harmless untouched, invalid look-alikes left alone: for one tool."""

    total: Counter[str] = field(default_factory=Counter)
    found: Counter[str] = field(default_factory=Counter)
    missed_kinds: Counter[str] = field(default_factory=Counter)
    harmless: int = 0
    harmless_untouched: int = 0
    harmless_changed: Counter[str] = field(default_factory=Counter)
    invalid: int = 0
    invalid_left: int = 0
    invalid_masked: Counter[str] = field(default_factory=Counter)

    def add(self, item: Sample, spans: Sequence[tuple[int, int]]) -> None:
        output = masked(item.text, spans)
        for label in item.labels:
            if label.find:
                self.total[label.family] += 1
                if value_found(item.text[label.start : label.end], output):
                    self.found[label.family] += 1
                else:
                    self.missed_kinds[f"{label.family} {label.kind}"] += 1
            elif label.family == "HARMLESS":
                self.harmless += 1
                self.harmless_untouched += not _touched(label, spans)
                if _touched(label, spans):
                    self.harmless_changed[label.kind] += 1
            else:
                self.invalid += 1
                self.invalid_left += not _touched(label, spans)
                if _touched(label, spans):
                    self.invalid_masked[label.kind] += 1

    def recall(self, families: Iterable[str] | None = None) -> tuple[int, int]:
        chosen = set(self.total) if families is None else set(families)
        return sum(self.found[f] for f in chosen), sum(self.total[f] for f in chosen)

    def figures(self) -> dict[str, object]:
        secrets = self.recall(f for f in self.total if f in SECRET_FAMILIES)
        personal = self.recall(f for f in self.total if f not in SECRET_FAMILIES)
        return {
            "secrets": list(secrets),
            "personal": list(personal),
            "by_family": {f: [self.found[f], self.total[f]] for f in sorted(self.total)},
            "harmless_untouched": [self.harmless_untouched, self.harmless],
            "harmless_changed": dict(sorted(self.harmless_changed.items())),
            "invalid_left_alone": [self.invalid_left, self.invalid],
            "invalid_masked": dict(sorted(self.invalid_masked.items())),
        }


def score(samples: Sequence[Sample], spans: Sequence[Sequence[tuple[int, int]]]) -> Scores:
    scores = Scores()
    for item, item_spans in zip(samples, spans, strict=True):
        scores.add(item, item_spans)
    return scores
