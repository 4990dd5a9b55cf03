"""Checked identifiers and phone numbers for the generated corpus, made with a fixed seed from the libraries' own rules.

- python-stdnum: every module listed under a family in tests/data/redaction/generated/stdnum_families.toml. The
  valid examples of each module's doctests are the starting points; some of their digits and letters are
  replaced at random (same class: digit for digit, letter for letter) and the check characters searched until
  `module.is_valid` holds. Each value is given formatted (`module.format`, where there is one) and compact. An
  INVALID look-alike is a valid value with one character changed so that `is_valid` is False (the last
  character where that suffices: the check character of most formats).
- phonenumbers: for every supported region, its example mobile number (fixed line where it has none) with the
  last four digits replaced at random until `is_valid_number` holds, in international and national format.
"""

from __future__ import annotations

import importlib
import random
import re
import string
import tomllib
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

import phonenumbers
from stdnum import iban
from stdnum.util import get_number_modules

DATA = Path(__file__).resolve().parents[2] / "data" / "redaction" / "generated"
SEED = 32_2026
VALUES_PER_MODULE = 2
_DOCTEST_STRING = re.compile(r"^\s*>>> \w+\('([^'\n]{4,80})'", re.MULTILINE)


@dataclass(frozen=True)
class CheckedValue:
    """One value of a python-stdnum format: valid or an invalid look-alike, compact and as formatted."""

    module: str  # e.g. "dk.cpr"
    family: str  # NATIONAL_ID, TAX_ID, BANK_ACCOUNT, DEVICE_ID
    abbreviation: str  # the format's short name from its docstring, e.g. "CPR"
    compact: str
    formatted: str
    valid: bool
    randomised: bool  # False: the doctest example itself (no random variant passed is_valid)


@dataclass(frozen=True)
class PhoneValue:
    region: str
    international: str
    national: str


def _rng(*parts: str) -> random.Random:
    return random.Random(SEED ^ zlib.crc32("/".join(parts).encode()))


@cache
def catalogue() -> dict[str, dict[str, list[str]]]:
    with (DATA / "stdnum_families.toml").open("rb") as handle:
        loaded: dict[str, dict[str, list[str]]] = tomllib.load(handle)
    return loaded


def families() -> dict[str, list[str]]:
    return dict(catalogue()["families"])


def exclusions() -> dict[str, list[str]]:
    """Reason -> modules left out of the corpus."""
    return dict(catalogue()["excluded"])


def all_module_names() -> set[str]:
    return {str(module.__name__).removeprefix("stdnum.") for module in get_number_modules()}  # type: ignore[attr-defined]


def abbreviation(module: ModuleType) -> str:
    first = (module.__doc__ or "").strip().splitlines()[0]
    return first.split(" (")[0].split(",")[0].rstrip(".").strip()


def doctest_examples(module: ModuleType) -> list[str]:
    """The valid values the module's own doctests use, compact, in order of appearance."""
    seen: list[str] = []
    for literal in _DOCTEST_STRING.findall(module.__doc__ or ""):
        try:
            if module.is_valid(literal):
                value = module.compact(literal)
                if value not in seen:
                    seen.append(value)
        except Exception:  # noqa: S112  (a doctest string of another function's argument kind)
            continue
    return seen


def _alphabet(char: str) -> str:
    if char.isdigit():
        return string.digits
    if char.islower():
        return string.ascii_lowercase
    return string.ascii_uppercase


def _valid(module: ModuleType, value: str) -> bool:
    try:
        return bool(module.is_valid(value))
    except Exception:
        return False


def _search_check(module: ModuleType, chars: list[str], positions: list[int]) -> str | None:
    for position in positions:
        original = chars[position]
        for candidate in string.digits + string.ascii_uppercase:
            chars[position] = candidate
            value = "".join(chars)
            if _valid(module, value):
                return value
        chars[position] = original
    return None


def _randomised(module: ModuleType, example: str, rng: random.Random) -> str | None:
    """A variant of a valid example: some characters replaced at random, the check characters searched."""
    alnum = [i for i, char in enumerate(example) if char.isalnum()]
    if not alnum:
        return None
    check_positions = sorted({alnum[-1], alnum[-2] if len(alnum) > 1 else alnum[-1], alnum[0]}, reverse=True)
    for attempt in range(60):
        share = 0.6 if attempt < 20 else 0.3 if attempt < 40 else 0.1
        chars = list(example)
        for index in alnum:
            if rng.random() < share:
                chars[index] = rng.choice(_alphabet(example[index]))
        value = _iban_checked(module, "".join(chars))
        found = value if _valid(module, value) else _search_check(module, list(value), check_positions)
        if found is not None and found != example:
            return found
    return _search_pair(module, example, alnum[-2:], rng)


def _iban_checked(module: ModuleType, value: str) -> str:
    """IBANs carry their two check digits at positions 2-3 (ISO 13616), too many to search one by one."""
    if not module.__name__.endswith("iban"):
        return value
    return value[:2] + iban.calc_check_digits(value) + value[4:]


def _search_pair(module: ModuleType, example: str, pair: list[int], rng: random.Random) -> str | None:
    """Two check characters (e.g. CUPS' two letters): one random body, both searched together."""
    if len(pair) < 2:
        return None
    chars = [rng.choice(_alphabet(c)) if c.isdigit() and i not in pair else c for i, c in enumerate(example)]
    for first in string.digits + string.ascii_uppercase:
        for second in string.digits + string.ascii_uppercase:
            chars[pair[0]], chars[pair[1]] = first, second
            value = "".join(chars)
            if value != example and _valid(module, value):
                return value
    return None


def _formatted(module: ModuleType, value: str) -> str:
    format_: Callable[[str], str] | None = getattr(module, "format", None)
    if format_ is None:
        return value
    try:
        return format_(value)
    except Exception:
        return value


def has_check_character(module: ModuleType) -> bool:
    """Whether the last character of the module's examples is checked: fewer than half of its replacements pass
    is_valid (formats like ar.dni or us.ssn accept any digit there, and have no invalid look-alike)."""
    tried = passed = 0
    for example in doctest_examples(module)[:3]:
        index = max(i for i, char in enumerate(example) if char.isalnum())
        for char in _alphabet(example[index]):
            if char != example[index]:
                tried += 1
                passed += _valid(module, example[:index] + char + example[index + 1 :])
    return tried > 0 and passed < tried / 2


@cache
def _checked_modules() -> tuple[ModuleType, ...]:
    modules = (importlib.import_module(f"stdnum.{name}") for names in families().values() for name in names)
    return tuple(module for module in modules if has_check_character(module))


def _invalid(module: ModuleType, value: str, rng: random.Random) -> str | None:
    """One of the last two characters changed so that is_valid fails for this format and for every other
    covered format with a check character (else that format would rightly claim it); None for a format
    without a check character, or when every such change is valid in another format."""
    if module not in _checked_modules():
        return None
    positions = [i for i, char in enumerate(value) if char.isalnum()][-2:]
    for index in reversed(positions):
        options = [c for c in _alphabet(value[index]) if c != value[index]]
        rng.shuffle(options)
        for option in options[:6]:
            candidate = value[:index] + option + value[index + 1 :]
            if not _valid(module, candidate) and not any(
                _valid(other, candidate) for other in _checked_modules()
            ):
                return candidate
    return None


def _module_values(name: str, family: str) -> Iterator[CheckedValue]:
    module = importlib.import_module(f"stdnum.{name}")
    rng = _rng("stdnum", name)
    short = abbreviation(module)
    examples = doctest_examples(module)
    if not examples:
        return
    made: list[tuple[str, bool]] = []
    for index in range(VALUES_PER_MODULE):
        value = _randomised(module, examples[index % len(examples)], rng)
        made.append((value, True) if value is not None else (examples[index % len(examples)], False))
    for value, randomised in made:
        yield CheckedValue(name, family, short, value, _formatted(module, value), True, randomised)
    wrong = _invalid(module, made[0][0], rng)
    if wrong is not None:
        yield CheckedValue(name, family, short, wrong, _formatted(module, wrong), False, made[0][1])


@cache
def checked_values() -> tuple[CheckedValue, ...]:
    """Every covered module's values: VALUES_PER_MODULE valid ones and one invalid look-alike."""
    out: list[CheckedValue] = []
    for family, names in families().items():
        for name in names:
            out.extend(_module_values(name, family))
    return tuple(out)


def modules_without_invalid() -> list[str]:
    """Covered modules for which no invalid look-alike could be made (see _invalid)."""
    with_invalid = {value.module for value in checked_values() if not value.valid}
    return sorted({value.module for value in checked_values()} - with_invalid)


def modules_without_examples() -> list[str]:
    """Covered modules whose doctests hold no valid value (the corpus cannot hold them)."""
    covered = {value.module for value in checked_values()}
    return sorted(name for names in families().values() for name in names if name not in covered)


def _phone(region: str) -> PhoneValue | None:
    kinds = (phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE)
    example = next(
        (n for kind in kinds if (n := phonenumbers.example_number_for_type(region, kind)) is not None), None
    )
    if example is None:
        return None
    rng = _rng("phone", region)
    digits = str(example.national_number)
    for _ in range(40):
        tail = "".join(rng.choice(string.digits) for _ in range(min(4, len(digits) - 2)))
        number = phonenumbers.parse(f"+{example.country_code}{digits[: len(digits) - len(tail)]}{tail}")
        number.italian_leading_zero = example.italian_leading_zero
        number.number_of_leading_zeros = example.number_of_leading_zeros
        if phonenumbers.is_valid_number(number) and phonenumbers.region_code_for_number(number) == region:
            break
    else:
        number = example
    fmt = phonenumbers.PhoneNumberFormat
    return PhoneValue(
        region,
        phonenumbers.format_number(number, fmt.INTERNATIONAL),
        phonenumbers.format_number(number, fmt.NATIONAL),
    )


@cache
def phone_values() -> tuple[PhoneValue, ...]:
    return tuple(p for region in sorted(phonenumbers.SUPPORTED_REGIONS) if (p := _phone(region)) is not None)
