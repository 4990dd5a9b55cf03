"""Build the redaction engine's catalogue of checked identifiers from python-stdnum.

    .venv/bin/python scripts/build_id_catalogue.py      # rewrites libs/redaction/.../data/id_catalogue.json

python-stdnum validates some 240 formats with their check digits. This script reads every one of its modules
and keeps those that identify a person, a taxpayer or business, a bank account or a device (public catalogue
numbers, algorithms, postcodes and payment references are left out, each with the reason in EXCLUDED). For each
kept format it records, from the module itself rather than by hand:

- shapes: the layouts (D digit, A letter) of its own doctest examples once compacted: the engine only asks a
  format about a token of one of its shapes;
- layouts: the formatted forms of the examples (`format()`), which tell a number written the way its country
  writes it;
- names: what the format is called, from the module's name and the first line of its docstring (acronyms, the
  native name in brackets, native-script words of the description): the words a person writes before it;
- shapes, each with its accept rate: how often a random token of the shape passes `is_valid` (sampled with a
  fixed seed). A format
  that almost nothing random passes is found without a word before it; a weak one (one check digit: about one
  in ten) only after its name or a word of its family.

Rebuild after upgrading python-stdnum; the unit tests check the file names every module it lists.
"""

from __future__ import annotations

import json
import random
import re
import sys
import unicodedata
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import stdnum
from stdnum.util import get_number_modules

OUT = Path(__file__).resolve().parent.parent / ("libs/redaction/src/kronii/redaction/data/id_catalogue.json")

# Not personal data, or not a number a person writes down: each family with its reason.
EXCLUDED: dict[str, str] = {
    **dict.fromkeys(
        [
            "damm",
            "luhn",
            "verhoeff",
            "iso7064.mod_11_10",
            "iso7064.mod_11_2",
            "iso7064.mod_37_2",
            "iso7064.mod_37_36",
            "iso7064.mod_97_10",
        ],
        "a check-digit algorithm, not a format",
    ),
    **dict.fromkeys(
        [
            "isbn",
            "issn",
            "ismn",
            "isan",
            "isil",
            "isni",
            "isrc",
            "isin",
            "cusip",
            "gb.sedol",
            "figi",
            "lei",
            "bic",
            "cfi",
            "casrn",
            "ean",
            "gs1_128",
            "grid",
            "imo",
            "iso6346",
            "eu.nace",
            "eu.ecnumber",
            "de.wkn",
            "it.aic",
            "nl.brin",
            "eu.eic",
            "es.cae",
            "es.cups",
            "es.referenciacatastral",
            "eu.banknote",
            "eu.excise",
            "fr.accise",
            "eu.oss",
            "th.moa",
        ],
        "a public catalogue number (books, securities, products, chemicals, ships, schools, energy points)",
    ),
    **dict.fromkeys(
        ["at.postleitzahl", "es.postal_code", "nl.postcode", "se.postnummer"],
        "a postcode: part of an address, found with the address",
    ),
    **dict.fromkeys(
        ["be.ogm_vcs", "ch.esr", "iso11649", "eu.at_02", "de.leitweg", "do.ncf", "us.rtn"],
        "a payment or routing reference that names no person",
    ),
    **dict.fromkeys(
        ["iban", "be.iban", "es.iban", "me.iban", "no.iban", "mac"],
        "found by the engine's own detector (IBAN, MAC address), with its own type",
    ),
    **dict.fromkeys(
        [
            "us.ssn",
            "nl.bsn",
            "es.dni",
            "fi.hetu",
            "it.codicefiscale",
            "br.cpf",
            "br.cnpj",
            "in_.aadhaar",
            "fr.nir",
            "de.idnr",
            "pl.pesel",
            "ca.sin",
            "au.tfn",
        ],
        "found by the engine's national_ids or checked_ids detector, with its own type and context rules",
    ),
}

# A business's registration or tax number is public (its register publishes it) and names no person. A format
# whose description is a business's and not an individual's is left out; tax and VAT numbers a person can hold
# (a sole trader's) stay.
_BUSINESS_ONLY = re.compile(
    r"compan|business|enterprise|organi[sz]ation|employer|entity|entities|corporate|association|trade"
    r"|economic units|jurídica|registrikood|register number|establishment|commercial",
    re.I,
)
_BANK = re.compile(r"bank account|kontonr|cuenta corriente|clave bancaria|bitcoin", re.I)
_DEVICE = re.compile(r"\b(?:IMEI|MEID|IMSI)\b")
_BUSINESS = re.compile(
    r"tax|vat|fiscal|tributari|contribuyente|business|company|enterprise|organi[sz]ation|register|registration"
    r"|employer|preparer|entity|corporate|association|trade|comercio|jurídica",
    re.I,
)
_PERSONAL_HINT = re.compile(
    r"personal|individual|citizen|resident|identity|birth|social security|health", re.I
)
_DOCTEST_CALL = re.compile(r">>> (?:validate|is_valid|compact|format)\('([^']+)'")
_GENERIC = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "and",
        "or",
        "for",
        "number",
        "numbers",
        "code",
        "codes",
        "nr",
        "no",
        "id",
        "identifier",
        "identification",
        "international",
        "national",
        "european",
        "standard",
        "unique",
        "personal",
    ]
)
_SAMPLES = 3000


def _type_of(name: str, title: str) -> str:
    if _BANK.search(title) or name.endswith(("bankaccount", "kontonr", "cbu", "ccc", "bitcoin")):
        return "BANK_ACCOUNT"
    if _DEVICE.search(title):
        return "DEVICE_ID"
    if _BUSINESS.search(title) and not _PERSONAL_HINT.search(title):
        return "TAX_ID"
    return "NATIONAL_ID"


def _examples(module: ModuleType) -> list[str]:
    found = []
    for raw in _DOCTEST_CALL.findall(module.__doc__ or ""):
        try:
            if module.is_valid(raw):
                found.append(raw)
        except Exception:  # noqa: S112  (a doctest argument some helper rejects)
            continue
    return found


def _shape(compact: str) -> str:
    """As the engine reads a token (detectors/catalogue_ids.py): a final X is the check digit 10."""
    shape = "".join("D" if c.isdigit() else "A" if c.isalpha() else "?" for c in compact)
    return shape[:-1] + "D" if compact.endswith("X") else shape


def _layout(formatted: str) -> str:
    return "".join("D" if c.isdigit() else "A" if c.isalpha() else c for c in formatted)


def _non_latin(word: str) -> bool:
    """A word written wholly in a script other than Latin (주민등록번호, ЕГН, マイナンバー)."""
    letters = [c for c in word if c.isalpha()]
    return bool(letters) and not any(unicodedata.name(c, "").startswith("LATIN") for c in letters)


def _names(short: str, module: ModuleType) -> list[str]:
    doc = (module.__doc__ or "").strip()
    title = doc.splitlines()[0].rstrip(".")
    names: set[str] = set()
    head, _, rest = title.partition("(")
    for part in re.split(r",| or ", head):
        if part.strip():
            names.add(part.strip())
    bracket = rest.rstrip(")")
    for part in bracket.split(","):
        part = part.strip()
        if (part and not re.search(r"\b(?:number|code|identifier)\b", part, re.I)) or not part.isascii():
            names.add(part)
    first_paragraph = doc.split("\n\n")[1] if "\n\n" in doc else ""
    # The description's bracketed names in their own script ("(resident registration number, 주민등록번호)"),
    # never its loose words: a word such as "номер" or "מספר" means "number" and names nothing.
    for bracket in re.findall(r"\(([^)]*)\)", first_paragraph):
        names.update(item.strip() for item in bracket.split(",") if _non_latin(item.strip()))
    last = short.rsplit(".", 1)[-1].rstrip("_")
    if len(last) >= 3 and last not in {"vat", "tin", "nif", "pin", "cc", "ci", "ni", "cf", "cn", "in"}:
        names.add(last)
    cleaned = {" ".join(n.split()).strip(" .:") for n in names}
    return sorted(n for n in cleaned if len(n) >= 2 and n.lower() not in _GENERIC)


def _random_of(shape: str, rng: random.Random) -> str:
    return "".join(
        rng.choice("0123456789") if c == "D" else rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for c in shape
    )


def _accept_rate(module: ModuleType, shape: str, rng: random.Random) -> float:
    accepted = 0
    for _ in range(_SAMPLES):
        try:
            accepted += bool(module.is_valid(_random_of(shape, rng)))
        except Exception:  # noqa: S112
            continue
    return round(accepted / _SAMPLES, 5)


def _entry(module: ModuleType, short: str, rng: random.Random) -> dict[str, Any] | None:
    """The format's record, or None when it has no example to learn its shapes from. Each shape has its own
    accept rate: IMEI's 15 digits carry a Luhn digit, its 14 and 16 (IMEISV) none."""
    examples = _examples(module)
    if not examples:
        return None
    # Some formats keep a separator in their compact form (Sweden's "880320-0016"); the engine compares tokens
    # without separators.
    compacts = sorted({module.compact(e) for e in examples})
    shapes = sorted(
        {_shape(c) for c in (re.sub(r"[^0-9A-Za-z]", "", c) for c in compacts) if "?" not in _shape(c)}
    )
    if not shapes:
        return None
    layouts: set[str] = set()
    formatter = getattr(module, "format", None)
    for example in compacts:
        try:
            layouts.add(_layout(formatter(example) if formatter else example))
        except Exception:  # noqa: S112
            continue
    title = (module.__doc__ or "").strip().splitlines()[0].rstrip(".")
    return {
        "module": short,
        "title": title,
        "type": _type_of(short, title),
        "shapes": {shape: _accept_rate(module, shape, rng) for shape in shapes},
        "layouts": sorted(layouts),
        "names": _names(short, module),
    }


def build() -> dict[str, Any]:
    rng = random.Random(20261206)
    formats = []
    unread = []
    elsewhere: dict[str, list[str]] = {}
    business: dict[str, str] = {}
    for numbers in get_number_modules():
        module = cast(ModuleType, numbers)
        short = module.__name__.removeprefix("stdnum.")
        if EXCLUDED.get(short, "").startswith("found by the engine's"):
            elsewhere[short] = _names(short, module)
        if short in EXCLUDED:
            continue
        title = (module.__doc__ or "").strip().splitlines()[0]
        if _BUSINESS_ONLY.search(title) and not _PERSONAL_HINT.search(title):
            business[short] = title
            continue
        entry = _entry(module, short, rng)
        if entry is None:
            unread.append(short)
        else:
            formats.append(entry)
    return {
        "source": f"python-stdnum {stdnum.__version__}, read by scripts/build_id_catalogue.py",
        "excluded": EXCLUDED,
        "business_numbers": business,  # public registration numbers of businesses, left out
        "without_examples": unread,  # no doctest example to learn a shape from
        # The names of the formats other detectors find: a number after one is theirs, not a phone number.
        "names_elsewhere": elsewhere,
        "formats": formats,
    }


def main() -> int:
    catalogue = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(catalogue, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(catalogue['formats'])} formats written to {OUT.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
