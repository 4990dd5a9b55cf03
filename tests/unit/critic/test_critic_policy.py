"""The critic's policy: the seed's keys in either spelling, errors that name the key, and the
policy file that follows its edits and keeps the mute apart from the TOML."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from kronii.critic.adapters.policy_file import PolicyFile
from kronii.critic.core.model import Trigger
from kronii.critic.core.policy import Policy, PolicyError, Verbosity, parse_duration, parse_policy


def test_defaults_follow_the_seed() -> None:
    policy = parse_policy({})
    assert policy == Policy()
    assert (policy.use_ai, policy.verbosity, policy.retention_days) == (False, Verbosity.NORMAL, 30)
    assert all(policy.enabled(kind) for kind in Trigger if kind is not Trigger.OK)
    assert not policy.silent_at(0)


def test_seed_names_and_snake_case_both_work() -> None:
    seed = parse_policy({"UseAI": True, "Verbosity": "Quiet", "RetentionDays": 7,
                         "Triggers": {"Error": False, "CommandNotFound": False}, "DoNotDisturb": True})  # fmt: skip
    snake = parse_policy({"use_ai": True, "verbosity": "quiet", "retention_days": 7,
                          "triggers": {"error": False, "command_not_found": False}, "do_not_disturb": True})  # fmt: skip
    assert seed == snake
    assert seed.verbosity is Verbosity.QUIET and seed.retention_days == 7 and seed.use_ai
    assert not seed.enabled(Trigger.ERROR) and not seed.enabled(Trigger.COMMAND_NOT_FOUND)
    assert seed.enabled(Trigger.DANGEROUS) and seed.silent_at(0)


@pytest.mark.parametrize(
    ("document", "named"),
    [
        ({"verbose": "loud"}, "'verbose' is not a critic setting; did you mean 'verbosity'?"),
        ({"Verbosity": "loud"}, "Verbosity must be Quiet, Normal or Verbose"),
        ({"RetentionDays": 0}, "RetentionDays must be a whole number"),
        ({"RetentionDays": True}, "RetentionDays must be a whole number"),
        ({"UseAI": "yes"}, "UseAI must be true or false"),
        (
            {"Triggers": {"danger": False}},
            "Triggers: 'danger' is not a critic setting; did you mean 'dangerous'?",
        ),
        ({"Triggers": {"secret": 1}}, "Triggers.secret must be true or false"),
        ({"Triggers": True}, "Triggers must be a table"),
        ({"MuteUntil": dt.datetime(2025, 1, 1)}, "MuteUntil must be a time with its offset"),
    ],
)
def test_errors_name_the_key(document: dict[str, object], named: str) -> None:
    with pytest.raises(PolicyError, match="^" + named.replace("?", r"\?").replace(".", r"\.")):
        parse_policy(document)


def test_mute_until_reads_an_aware_time_and_silences_until_then() -> None:
    until = dt.datetime(2025, 1, 1, 12, tzinfo=dt.UTC)
    policy = parse_policy({"mute_until": until})
    stamp = int(until.timestamp() * 1000)
    assert policy.mute_until_ms == stamp
    assert policy.silent_at(stamp - 1) and not policy.silent_at(stamp)


@pytest.mark.parametrize(("text", "ms"), [("1h", 3_600_000), ("90m", 5_400_000), ("2h30m", 9_000_000),
                                          ("1d", 86_400_000), ("45s", 45_000), ("15", 900_000)])  # fmt: skip
def test_durations(text: str, ms: int) -> None:
    assert parse_duration(text) == ms


@pytest.mark.parametrize("text", ["", "1x", "h", "1h-", "soon"])
def test_bad_durations_say_how_to_write_one(text: str) -> None:
    with pytest.raises(PolicyError, match="is not a duration"):
        parse_duration(text)


def _touch_later(path: Path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_policy_file_reads_critic_toml_over_the_shared_table(tmp_path: Path) -> None:
    own = tmp_path / "critic.toml"
    shared = tmp_path / "config.toml"
    shared.write_text('[critic]\nhttp_port = 9999\nverbosity = "verbose"\nretention_days = 9\n'
                      "[critic.triggers]\nerror = false\nsecret = false\n")  # fmt: skip
    own.write_text('Verbosity = "Quiet"\n[Triggers]\nsecret = true\n')
    policy = PolicyFile(tmp_path / "mute.json", own, shared).current()
    assert policy.verbosity is Verbosity.QUIET and policy.retention_days == 9
    assert not policy.enabled(Trigger.ERROR) and policy.enabled(Trigger.SECRET)


def test_policy_file_follows_edits_and_keeps_the_last_good_policy(tmp_path: Path) -> None:
    own = tmp_path / "critic.toml"
    own.write_text('verbosity = "quiet"\n')
    source = PolicyFile(tmp_path / "mute.json", own, tmp_path / "absent.toml")
    assert source.current().verbosity is Verbosity.QUIET
    own.write_text('verbosity = "verbose"\n')
    _touch_later(own)
    assert source.current().verbosity is Verbosity.VERBOSE
    own.write_text('verbosity = "loud"\n')
    _touch_later(own)
    assert source.current().verbosity is Verbosity.VERBOSE
    assert source.problem is not None and str(own) in source.problem and "Verbosity" in source.problem
    with pytest.raises(PolicyError):
        source.load()


def test_mute_is_a_state_file_of_its_own(tmp_path: Path) -> None:
    own = tmp_path / "critic.toml"
    text = '# my comment\nverbosity = "verbose"\n'
    own.write_text(text)
    mute = tmp_path / "state" / "mute.json"
    source = PolicyFile(mute, own, tmp_path / "absent.toml")
    assert source.current().mute_until_ms == 0
    source.write_mute(1_700_000_000_000)
    policy = source.current()
    assert policy.mute_until_ms == 1_700_000_000_000 and policy.silent_at(1_699_999_999_999)
    assert own.read_text() == text
    assert mute.stat().st_mode & 0o777 == 0o600
    source.write_mute(0)
    assert source.current().mute_until_ms == 0


def test_a_missing_file_is_the_defaults(tmp_path: Path) -> None:
    source = PolicyFile(tmp_path / "mute.json", tmp_path / "critic.toml", tmp_path / "config.toml")
    assert source.current() == Policy() and source.problem is None
