"""The user's policy file: allow and deny lists, custom patterns, red apps and thresholds."""

from __future__ import annotations

from pathlib import Path

import pytest
from kronii.redaction import HintSpan, Level, PolicyError, RedactionEngine, RedactionPolicy

POLICY = """
red_share_threshold = 0.6
red_share_min_chars = 100
max_masked_area = 0.25
phone_regions = ["DE"]
disabled_detectors = ["ip_address"]
red_types = ["PRIVATE_KEY", "PASSWORD", "TICKET_ID"]

[allow]
values = ["ci-bot@exemple.com"]
patterns = ['.*@corp\\.example']

[deny]
terms = ["Project Nightingale", "ACME merger"]

[apps]
red = ["*banking*", "org.gnome.Evolution"]

[[custom_patterns]]
type = "TICKET_ID"
pattern = 'ACME-\\d{6}'

[[custom_patterns]]
type = "EMPLOYEE_ID"
pattern = 'E\\d{7}'
confidence = 0.8
"""


@pytest.fixture
def policy(tmp_path: Path) -> RedactionPolicy:
    path = tmp_path / "redaction.toml"
    path.write_text(POLICY, encoding="utf-8")
    return RedactionPolicy.load(path)


def test_settings_are_read(policy: RedactionPolicy) -> None:
    assert policy.red_share_threshold == 0.6
    assert policy.red_share_min_chars == 100
    assert policy.max_masked_area == 0.25
    assert policy.phone_regions == ("DE",)
    assert policy.disabled_detectors == frozenset({"ip_address"})
    assert [p.type for p in policy.custom_patterns] == ["TICKET_ID", "EMPLOYEE_ID"]


def test_allow_list_values_and_patterns_are_never_masked(policy: RedactionPolicy) -> None:
    engine = RedactionEngine(policy)
    result = engine.redact("from ci-bot@exemple.com and lead@corp.example to carol@exemple.com")
    assert result.text == "from ci-bot@exemple.com and lead@corp.example to [EMAIL_1]"


def test_deny_terms_are_always_masked_in_any_case(policy: RedactionPolicy) -> None:
    result = RedactionEngine(policy).redact("notes on project nightingale and the ACME Merger")
    assert result.text == "notes on [DENIED_1] and the [DENIED_2]"


def test_custom_patterns_and_red_types(policy: RedactionPolicy) -> None:
    engine = RedactionEngine(policy)
    result = engine.redact("employee E1234567 filed a report")
    assert (result.text, result.level) == ("employee [EMPLOYEE_ID_1] filed a report", Level.AMBER)
    red = engine.redact("see ACME-123456")
    assert red.level is Level.RED and "TICKET_ID" in red.reason


def test_disabled_detector_and_red_apps(policy: RedactionPolicy) -> None:
    engine = RedactionEngine(policy)
    assert engine.redact("host 8.8.8.8").level is Level.GREEN
    assert engine.redact("statement", app="com.example.BankingApp").level is Level.RED
    assert engine.redact("inbox", app="org.gnome.Evolution").level is Level.RED
    assert engine.redact("inbox", app="org.gnome.Terminal").level is Level.GREEN


def test_defaults_mark_password_managers_red() -> None:
    engine = RedactionEngine()
    for app in ("KeePassXC", "1Password", "Bitwarden"):
        assert engine.redact("entries", app=app).level is Level.RED


def test_from_mapping_matches_the_defaults() -> None:
    assert RedactionPolicy.from_mapping({}) == RedactionPolicy()


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("red_share_treshold = 0.5", "unknown policy setting"),
        ("red_share_threshold = 2", "between 0 and 1"),
        ("[allow]\nvalue = ['x']", r"unknown setting\(s\) in \[allow\]"),
        ("[[custom_patterns]]\ntype = 'lower'\npattern = 'x'", "upper snake case"),
        ("[[custom_patterns]]\ntype = 'BAD'\npattern = '('", "invalid regex"),
        ("[deny]\nterms = 'not a list'", "list of strings"),
        ("red_share_threshold = ", "not valid TOML"),
    ],
)
def test_invalid_policies_are_rejected(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(PolicyError, match=message):
        RedactionPolicy.load(path)


def test_hint_spans_are_validated() -> None:
    with pytest.raises(PolicyError, match="upper snake case"):
        HintSpan(0, 4, "pin")
    with pytest.raises(PolicyError, match="end before"):
        HintSpan(5, 4)
