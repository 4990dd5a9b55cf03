"""The recommender's gates: verbosity picks the prompt line, Do-Not-Disturb and the mute silence
everything, toggles drop a kind, and only repeated failures and dangerous commands notify, once an
hour each."""

from __future__ import annotations

from dataclasses import replace

from kronii.critic.core.model import Trigger
from kronii.critic.core.policy import Policy, Verbosity
from kronii.critic.core.recommend import ActionRecommender
from kronii.critic.core.triggers import Critique, Severity

NOW = 1_700_000_000_000
HOUR = 3_600_000

ERROR_FIX = Critique(Trigger.ERROR, "what worked then: make deps", "long", Severity.NOTICE, "e1")
ERROR_SEEN = Critique(Trigger.ERROR, "failed 2x before", "long", Severity.INFO, "e2")
SECRET = Critique(Trigger.SECRET, "a secret was typed", "long", Severity.WARNING, "s1")
DANGER = Critique(Trigger.DANGEROUS, "dangerous: rm -rf /", "long text", Severity.CRITICAL, "d1")
REPEAT = Critique(Trigger.REPEATED_FAILURE, "3x: ask the agent", "long", Severity.WARNING, "r1")
NOT_FOUND = Critique(Trigger.COMMAND_NOT_FOUND, "did you mean git", "long", Severity.NOTICE, "c1")


DEFAULTS = Policy()


def line(critiques: list[Critique], policy: Policy = DEFAULTS) -> str | None:
    return ActionRecommender().recommend(critiques, policy, NOW).prompt_line


def test_normal_shows_the_most_severe_and_leaves_info_out() -> None:
    assert line([ERROR_FIX, SECRET, NOT_FOUND]) == SECRET.line
    assert line([ERROR_SEEN]) is None
    assert line([ERROR_FIX, NOT_FOUND]) == NOT_FOUND.line  # same severity: the kind that matters more


def test_quiet_shows_only_dangerous_and_secret() -> None:
    quiet = Policy(verbosity=Verbosity.QUIET)
    assert line([ERROR_FIX, REPEAT, NOT_FOUND], quiet) is None
    assert line([ERROR_FIX, SECRET], quiet) == SECRET.line
    assert line([SECRET, DANGER], quiet) == DANGER.line


def test_verbose_shows_info_too() -> None:
    assert line([ERROR_SEEN], Policy(verbosity=Verbosity.VERBOSE)) == ERROR_SEEN.line


def test_do_not_disturb_and_mute_silence_line_and_notification() -> None:
    for policy in (Policy(do_not_disturb=True), Policy(mute_until_ms=NOW + 1)):
        recommendation = ActionRecommender().recommend([DANGER, REPEAT], policy, NOW)
        assert recommendation.prompt_line is None and recommendation.notification is None
    after_mute = ActionRecommender().recommend([DANGER], Policy(mute_until_ms=NOW), NOW)
    assert after_mute.prompt_line == DANGER.line and after_mute.notification is not None


def test_toggles_drop_a_kind() -> None:
    no_danger = Policy(triggers=Policy().triggers - {Trigger.DANGEROUS})
    recommendation = ActionRecommender().recommend([DANGER, ERROR_FIX], no_danger, NOW)
    assert recommendation.prompt_line == ERROR_FIX.line and recommendation.notification is None


def test_only_repeated_failures_and_dangerous_commands_notify() -> None:
    recommender = ActionRecommender()
    assert recommender.recommend([SECRET, ERROR_FIX, NOT_FOUND], Policy(), NOW).notification is None
    repeated = recommender.recommend([REPEAT, ERROR_FIX], Policy(), NOW).notification
    assert repeated is not None and repeated.kind is Trigger.REPEATED_FAILURE and repeated.body == "long"
    assert repeated.title == "kronii critic: the same failure again"
    danger = recommender.recommend([DANGER], Policy(), NOW).notification
    assert danger is not None and danger.title == "kronii critic: a dangerous command ran"
    assert danger.at_ms == NOW


def test_the_same_notification_waits_an_hour() -> None:
    recommender = ActionRecommender()
    assert recommender.recommend([REPEAT], Policy(), NOW).notification is not None
    again = recommender.recommend([REPEAT], Policy(), NOW + HOUR - 1)
    assert again.notification is None and again.prompt_line == REPEAT.line
    assert (
        recommender.recommend([replace(REPEAT, dedup_key="r2")], Policy(), NOW + 1).notification is not None
    )
    assert recommender.recommend([REPEAT], Policy(), NOW + HOUR).notification is not None
