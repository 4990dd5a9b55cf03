# ruff: noqa: RUF001  (letters of other scripts are the point of these tests)
"""The lexicons and the CLI flag table as data: every entry of data/lexicons/*.toml and data/cli_password_flags.toml
is exercised through the whole engine (prefilter included), so adding a language or a tool adds its tests.

- a secret announced in prose after each password, passphrase, PIN, secret, token and API-key word of each
  language (with an operator, and with each connector of the language) is masked, the word stays readable;
- a date of birth after each birth word, and with each month name and abbreviation of each language, is masked;
- harmless prose of each language (the words without a value, "reset your password", a release date) is left
  alone (tests/data/redaction/lexicons/harmless_samples.toml);
- each flag, positional argument and variable of the CLI table masks its value and leaves the command readable.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from kronii.redaction import RedactionEngine
from kronii.redaction.detectors._keywords import (
    BIRTH_WORDS_FILE,
    CONTEXT_CONCEPTS,
    MONTHS_FILE,
    SECRET_WORDS_FILE,
    load_data,
    secret_words,
)
from kronii.redaction.detectors.command_secrets import FLAGS_FILE, CommandSecretDetector

ENGINE = RedactionEngine()
COMMANDS_ONLY = RedactionEngine(detectors=[CommandSecretDetector()])
SECRETS = load_data(SECRET_WORDS_FILE)
BIRTHS = load_data(BIRTH_WORDS_FILE)
MONTHS = load_data(MONTHS_FILE)
FLAGS = load_data(FLAGS_FILE)
SAMPLES = tomllib.loads(
    (Path(__file__).parents[2] / "data/redaction/lexicons/harmless_samples.toml").read_text(encoding="utf-8")
)
PASSWORD = "Xq7mR2pLw9"
API_SECRET = "a8F3kQ9zL2mX7pR4"
PIN = "4821"
CLI_SECRET = "Zq8vK3mW7xP2"
LEXICON_TYPES = {"PASSWORD", "SECRET", "DATE_OF_BIRTH"}
VALUES = {"pin": PIN, "password": PASSWORD, "passphrase": PASSWORD}
CJK_DATES = {"zh": "1985年3月12日", "ja": "1985年3月12日", "ko": "1985년 3월 12일"}


def _by_language(params: list[Any]) -> list[Any]:
    """The cases of one language as one test: thousands of one-line cases cost pytest more than the engine."""
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for param in params:
        groups.setdefault(str(param.id).split("-", 1)[0], []).append(tuple(param.values))
    return [pytest.param(cases, id=code) for code, cases in groups.items()]


def _announcements() -> list[Any]:
    cases = []
    for code, language in SECRETS.items():
        for concept, words in language.items():
            if not isinstance(words, list) or concept == "connectors" or concept in CONTEXT_CONCEPTS:
                continue
            value = VALUES.get(concept, API_SECRET)
            for word in words:
                # Where words are written without spaces or take suffixes (Korean particles), the connector
                # is glued to the word; in scripts without spaces the value may be glued too.
                boundary = secret_words()[word.lower()].boundary
                texts = [f"{word}: {value}", f"{word[0].upper()}{word[1:]} = {value}"]
                for connector in language["connectors"]:
                    texts.append(f"{word}{'' if boundary != 'word' else ' '}{connector} {value}")
                    if boundary == "none":
                        texts.append(f"{word}{connector}{value}")
                cases += [pytest.param(text, value, word, id=f"{code}-{text}") for text in texts]
    return cases


@pytest.mark.parametrize("cases", _by_language(_announcements()))
def test_a_secret_announced_in_each_language_is_masked(cases: list[tuple[str, str, str]]) -> None:
    failed = []
    for text, value, word in cases:
        result = ENGINE.redact(text)
        # Masked, and the word that announced it stays readable.
        if value in result.text or word.lower() not in result.text.lower():
            failed.append((text, result.text))
    assert failed == []


@pytest.mark.parametrize("operator", ["\N{FULLWIDTH COLON}", "\N{FULLWIDTH EQUALS SIGN}", ": ", "="])
def test_the_operator_after_a_password_word_is_never_part_of_the_mask(operator: str) -> None:
    """CJK text writes a full-width colon or equals sign after the word; like an ASCII one it links the
    word to its value and stays readable, in every language's password words."""
    failed = []
    for word, entry in secret_words().items():
        if entry.concept != "password":
            continue
        text = f"{word}{operator}{PASSWORD}"
        result = ENGINE.redact(text)
        if PASSWORD in result.text or not result.text.startswith(f"{word}{operator}"):
            failed.append((text, result.text))
    assert failed == []


def _keys() -> list[Any]:
    """Config keys named in each language (`DB_SENHA=...`, `kennwort_db: "..."`), ASCII words other than
    English (the keyword detector's own) and PIN."""
    cases = []
    for word, entry in secret_words().items():
        if "en" in entry.languages or entry.concept in ("pin", *CONTEXT_CONCEPTS) or not word.isascii():
            continue
        if "'" in word or "." in word:
            continue
        value = PASSWORD if entry.concept in VALUES else API_SECRET
        key = word.replace(" ", "_").replace("-", "_")
        for text in (
            f"DB_{key.upper()}={value}",
            f'{key}_db: "{value}"',
            f"--{key.replace('_', '-')} {value}",
        ):
            cases.append(pytest.param(text, value, id=f"{entry.languages[0]}-{text}"))
    return cases


@pytest.mark.parametrize("cases", _by_language(_keys()))
def test_a_secret_under_a_key_named_in_each_language_is_masked(cases: list[tuple[str, str]]) -> None:
    assert [text for text, value in cases if value in ENGINE.redact(text).text] == []


@pytest.mark.parametrize(
    "text",
    ["senha_minima = 8", "senhaBanco = getSenha()", "KENNWORT_LAENGE=12", "wachtwoord = config.get('db')"],
)
def test_keys_named_in_other_languages_without_a_literal_stay(text: str) -> None:
    found = {finding.type for finding in ENGINE.redact(text).findings}
    assert not found & LEXICON_TYPES, (text, found)


def _date_in(code: str, month: int, year: int) -> str:
    if code in CJK_DATES:
        return CJK_DATES[code].replace("1985", str(year)).replace("3", str(month), 1)
    return f"12 {MONTHS[code]['months'][month - 1][0]} {year}"


def _birth_words() -> list[Any]:
    cases = [
        pytest.param(
            f"{word}{separator}{_date_in(code, 3, 1985)}", _date_in(code, 3, 1985), id=f"{code}-{word}"
        )
        for code, language in BIRTHS.items()
        for word in language["words"]
        for separator in (" ", ": ")
    ]
    # Words that follow their date: "1997年7月26日生まれ", "am 11. Juli 1965 geboren".
    return cases + [
        pytest.param(f"{_date_in(code, 3, 1985)} {word}", _date_in(code, 3, 1985), id=f"{code}-date-{word}")
        for code, language in BIRTHS.items()
        for word in language.get("after_date", ())
    ]


def _month_forms() -> list[Any]:
    cases = []
    for code, language in MONTHS.items():
        word = BIRTHS[code]["words"][0]
        for number, forms in enumerate(language["months"], start=1):
            cases += [
                pytest.param(f"{word} 12 {form} 1985", f"12 {form} 1985", id=f"{code}-{number}-{form}")
                for form in forms
            ]
    return cases


def _dated(text: str, date: str) -> bool:
    result = ENGINE.redact(text)
    return "DATE_OF_BIRTH" in {finding.type for finding in result.findings} and date not in result.text


@pytest.mark.parametrize("cases", _by_language([*_birth_words(), *_month_forms()]))
def test_a_date_of_birth_after_each_birth_word_and_with_each_month_name_is_masked(
    cases: list[tuple[str, str]],
) -> None:
    assert [text for text, date in cases if not _dated(text, date)] == []


@pytest.mark.parametrize(
    ("text", "date"),
    [
        pytest.param("1985. március 12-én születtem", "1985. március 12", id="hu-year-month-day"),
        pytest.param("Születési dátum: 1985. márc. 12.", "1985. márc. 12", id="hu-abbreviated"),
        pytest.param("我出生于1968年7月26日", "1968年7月26日", id="zh-glued"),
        pytest.param("ich bin am 11. Juli 1965 geboren", "11. Juli 1965", id="de-verb-last"),
        pytest.param("저는 1999년 3월 5일에 태어났습니다", "1999년 3월 5일", id="ko-verb-last"),
        pytest.param("วันเกิด 12 มีนาคม 2528", "12 มีนาคม 2528", id="th-buddhist-era"),
    ],
)
def test_a_date_of_birth_in_each_word_order_is_masked(text: str, date: str) -> None:
    assert _dated(text, date), text


def _harmless() -> list[Any]:
    cases = [
        pytest.param(sample, id=f"{code}-{sample}")
        for code, entry in SAMPLES.items()
        for sample in entry["harmless"]
    ]
    cases += [
        pytest.param(entry["not_birth"].format(date=_date_in(code, 3, 2024)), id=f"{code}-not-birth")
        for code, entry in SAMPLES.items()
        if code in MONTHS
    ]
    for code, language in (*SECRETS.items(), *BIRTHS.items()):
        for key, words in language.items():
            if isinstance(words, list) and key not in ("connectors", "fillers"):
                cases += [
                    pytest.param(text, id=f"{code}-{text}") for word in words for text in (word, f"{word}:")
                ]
    return cases


@pytest.mark.parametrize("cases", _by_language(_harmless()))
def test_harmless_prose_in_each_language_is_left_alone(cases: list[tuple[str]]) -> None:
    found = [(text, {f.type for f in ENGINE.redact(text).findings} & LEXICON_TYPES) for (text,) in cases]
    assert [(text, types) for text, types in found if types] == []


def test_the_lexicons_cover_at_least_twenty_languages_each_with_its_samples() -> None:
    for lexicon in (SECRETS, BIRTHS, MONTHS):
        assert len(lexicon) >= 20
        assert set(lexicon) <= set(SAMPLES), set(lexicon) - set(SAMPLES)
    for code, language in SECRETS.items():
        assert all(language.get(concept) for concept in ("password", "pin", "secret", "token", "api_key")), (
            code
        )


@pytest.mark.parametrize("name", [SECRET_WORDS_FILE, BIRTH_WORDS_FILE, MONTHS_FILE, FLAGS_FILE])
def test_every_data_file_names_its_source(name: str) -> None:
    from importlib import resources

    head = (resources.files("kronii.redaction") / "data" / name).read_text(encoding="utf-8")[:1200]
    assert "Source" in head


# The CLI flag table: one command line per command, flag and form of each entry.


def _flag_value(entry: dict[str, Any]) -> str:
    value = CLI_SECRET
    if entry.get("prefix"):
        value = entry["prefix"] + value
    if entry.get("split"):
        value = "bob" + entry["split"] + value
    return value


def _flag_lines() -> list[Any]:
    cases = []
    for entry in FLAGS["flag"]:
        value, flag = _flag_value(entry), entry["flag"]
        for command in entry["commands"]:
            if entry.get("option_list"):
                cases.append(f"{command} -t cifs //srv/share /mnt -o user=bob,{flag}{value},vers=3.0")
                continue
            forms = {
                "attached": f"{command} {flag}{value} target",
                "separate": f"{command} {flag} {value} target",
                "equals": f"{command} {flag}={value} target",
                "after": f"{command} \\\\srv\\share {flag}bob {value}",
            }
            cases += [forms[form] for form in entry["forms"]]
    for entry in FLAGS["positional"]:
        for command in entry["commands"]:
            # Counted from the command's first plain argument, or (after_share) from the share itself.
            arguments = [f"arg{index}" for index in range(entry["index"])]
            if entry.get("after_share"):
                arguments = ["Z:", "\\\\srv\\share", *arguments[1:]]
            value = "bob" + entry["split"] + CLI_SECRET if entry.get("split") else CLI_SECRET
            options = f"-{entry['option']} " if entry.get("option") else ""
            cases.append(f"{command} {options}{' '.join([*arguments, value])}")
    for entry in FLAGS["env"]:
        cases += [f"{name}={CLI_SECRET} tool --verbose" for name in entry["names"]]
    return [pytest.param(line, id=line) for line in cases]


def _flag_line_problem(line: str) -> str | None:
    result = ENGINE.redact(line)
    if CLI_SECRET in result.text:
        return f"not masked: {result.text}"
    # The table's own detector finds it too, through the prefilter: its anchors hold whatever it reads.
    if CLI_SECRET in COMMANDS_ONLY.redact(line).text:
        return "not masked by command_secrets alone"
    for word in line.replace(CLI_SECRET, " ").split():
        if (
            len(word) > 2
            and word not in ("bob%", "bob:", "bob,", "bob/", "pass:")
            and word not in result.text
        ):
            return f"{word!r} masked too: {result.text}"
    return None


def _flag_commands() -> list[Any]:
    groups: dict[str, list[str]] = {}
    for param in _flag_lines():
        line = str(param.values[0])
        command = line.split("=", 1)[0] if line.split()[0].count("=") else line.split()[0]
        groups.setdefault(command, []).append(line)
    return [pytest.param(lines, id=command) for command, lines in groups.items()]


@pytest.mark.parametrize("lines", _flag_commands())
def test_each_cli_flag_of_the_table_masks_its_value_and_leaves_the_command_readable(lines: list[str]) -> None:
    problems = [(line, _flag_line_problem(line)) for line in lines]
    assert [(line, problem) for line, problem in problems if problem] == []


@pytest.mark.parametrize(
    "line",
    [
        "mysql -u root -p mydb",  # -p alone prompts; mydb is the database
        "curl -u alice https://api.example.org/v1",  # no password: curl prompts
        "openssl pkcs12 -in a.p12 -passin env:P12_PASS -passout file:/run/pass.txt",  # where, not what
        "sshpass -p $SSH_PASS ssh admin@host",  # a variable
        "zip -P - out.zip notes.txt",
        "git log -p --stat",
        "mount -o remount,rw /",
    ],
)
def test_cli_lines_without_a_literal_password_stay(line: str) -> None:
    found = [finding for finding in ENGINE.redact(line).findings if finding.detector == "command_secrets"]
    assert found == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("İstanbul'dayım. Şifre: Ankara06", "Ankara06"),
        ("İSTANBUL — ŞİFRE: Ankara06", "Ankara06"),
        ("İSTANBUL, DOĞUM TARİHİ 12 ŞUBAT 1985", "12 ŞUBAT 1985"),
        ("İzmir; ПАРОЛЬ: Сезам2024", "Сезам2024"),
    ],
)
def test_words_in_capitals_are_found_in_a_text_holding_a_dotted_capital_i(text: str, value: str) -> None:
    # "İ" lowers to two characters, so the engine's lower-case view falls back to ASCII for such a text.
    assert value not in ENGINE.redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        "        password: FilterOrBool = False,",  # a type annotation, then the default
        "        token: Optional[str] = None,",
        '"ARN": "arn:aws:secretsmanager:us-west-2:123456789012:secret:MyTestSecret-a1b2c3",',  # a name
        "# Module and documentation by Eric S. Raymond, 21 Dec 1998",
        'note_deprecation("x.AVAILABLE_PROVIDERS.",\n    since="2025-01-25",\n    has_codemod=False,\n)',
    ],
)
def test_lines_of_real_sources_that_looked_like_announcements_stay(text: str) -> None:
    found = {finding.type for finding in ENGINE.redact(text).findings}
    assert not found & LEXICON_TYPES, (text, found)


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ('PGPASSWORD="Pg secret9" psql -h db', "Pg secret9"),  # a quoted value of a variable
        (
            "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8vK3mW",
            "bPxRfiCYzq8vK3mW",
        ),
    ],
)
def test_cli_values_quoted_or_long_are_masked(line: str, secret: str) -> None:
    assert secret not in ENGINE.redact(line).text


@pytest.mark.parametrize(
    "line",
    [
        "\"PGPASSWORD='x' psql -U user -d db -c 'select 1;'\"]",  # one quoted string: not an assignment
        "$ aws configure set aws_secret_access_key default_secret_key",  # a name, not a key
    ],
)
def test_cli_lines_that_only_look_like_secrets_stay(line: str) -> None:
    found = [finding for finding in ENGINE.redact(line).findings if finding.detector == "command_secrets"]
    assert found == []
