"""The built-in triggers, one at a time, and the evaluator that runs them: each one speaks when its
case is there and stays quiet when it is not; every dangerous-pattern row has its own case."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.critic.core.command_line import command_name
from kronii.critic.core.dangerous import DANGER_ROWS, dangers_in
from kronii.critic.core.model import InvocationRecord, Trigger
from kronii.critic.core.suggest import close_command, edit_distance
from kronii.critic.core.triggers import (
    MAX_LINE_CHARS,
    CommandNotFoundRule,
    Critique,
    DangerousRule,
    ErrorRule,
    MemoryView,
    RepeatedFailureRule,
    SecretRule,
    Severity,
    TriggerEvaluator,
    strongest,
)

NOW = 1_700_000_000_000
MINUTE = 60_000
_serial = iter(range(1_000_000))


def rec(command: str, exit_status: int = 0, *, at: int = NOW, **fields: object) -> InvocationRecord:
    base = InvocationRecord(  # noqa: S604 (`shell` is the hook's shell, not a subprocess flag)
        record_id=f"r{next(_serial)}",
        timestamp_ms=at,
        trigger=Trigger.OK,
        command_name=command_name(command),
        command_line=command,
        cwd="/home/[USERNAME_1]/app",
        exit_status=exit_status,
        duration_ms=5,
        shell="bash",
        session="s1",
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def view(*records: InvocationRecord, path: frozenset[str] = frozenset()) -> MemoryView:
    return MemoryView(now_ms=NOW, recent=records, path_commands=path)


def run(rule: object, record: InvocationRecord, memory: MemoryView) -> list[Critique]:
    assert hasattr(rule, "match") and hasattr(rule, "produce")
    return rule.produce(record, memory) if rule.match(record, memory) else []


# ---- Error: what worked last time ---------------------------------------------------------------


def test_error_shows_the_success_that_followed_the_same_failure_before() -> None:
    before = rec("pip install -e .", 1, at=NOW - 60 * MINUTE)
    fix = rec("pip install -e . --no-build-isolation", 0, at=NOW - 59 * MINUTE)
    critiques = run(ErrorRule(), rec("pip install -e .", 1), view(before, fix))
    assert len(critiques) == 1
    assert critiques[0].kind is Trigger.ERROR
    assert "pip install -e . --no-build-isolation" in critiques[0].line
    assert critiques[0].severity is Severity.NOTICE


def test_error_matches_a_similar_error_from_another_command() -> None:
    before = rec("python app.py", 1, at=NOW - 5 * MINUTE, error_type="ModuleNotFoundError",
                 error_message="No module named 'requests'")  # fmt: skip
    fix = rec("pip install requests", 0, at=NOW - 4 * MINUTE)
    current = rec(
        "python3 tool.py", 1, error_type="ModuleNotFoundError", error_message="No module named 'requests'"
    )
    critiques = run(ErrorRule(), current, view(before, fix))
    assert critiques and "pip install requests" in critiques[0].line


def test_error_skips_looking_around_and_other_sessions_when_finding_the_fix() -> None:
    before = rec("make build", 2, at=NOW - 10 * MINUTE)
    elsewhere = rec("make clean", 0, at=NOW - 9 * MINUTE, session="s2")
    looking = rec("ls -la", 0, at=NOW - 9 * MINUTE)
    fix = rec("make deps", 0, at=NOW - 8 * MINUTE)
    critiques = run(ErrorRule(), rec("make build", 2), view(before, elsewhere, looking, fix))
    assert critiques[0].line.endswith("make deps")


def test_error_without_a_known_fix_says_so_only_at_info_level() -> None:
    critiques = run(ErrorRule(), rec("make build", 2), view(rec("make build", 2, at=NOW - MINUTE)))
    assert [critique.severity for critique in critiques] == [Severity.INFO]


def test_error_is_quiet_for_a_first_failure_a_success_and_ctrl_c() -> None:
    other = rec("cargo test", 101, at=NOW - MINUTE)
    assert run(ErrorRule(), rec("make build", 2), view(other)) == []
    assert run(ErrorRule(), rec("make build", 0), view(rec("make build", 2, at=NOW - MINUTE))) == []
    assert run(ErrorRule(), rec("make build", 130), view(rec("make build", 130, at=NOW - MINUTE))) == []


# ---- CommandNotFound ----------------------------------------------------------------------------


def test_command_not_found_names_the_close_command_seen_in_history() -> None:
    critiques = run(CommandNotFoundRule(), rec("gti status", 127), view(rec("git log", 0, at=NOW - MINUTE)))
    assert critiques and "`git`" in critiques[0].line and critiques[0].kind is Trigger.COMMAND_NOT_FOUND


def test_command_not_found_names_a_close_command_on_path() -> None:
    critiques = run(CommandNotFoundRule(), rec("dokcer ps", 127), view(path=frozenset({"docker", "dot"})))
    assert critiques and "`docker`" in critiques[0].line


def test_command_not_found_names_the_debian_package() -> None:
    critiques = run(CommandNotFoundRule(), rec("rg TODO", 127), view())
    assert critiques and "sudo apt install ripgrep" in critiques[0].line
    fd = run(CommandNotFoundRule(), rec("fd main", 127), view())
    assert "fd-find" in fd[0].line and "fdfind" in fd[0].text


def test_command_not_found_reads_the_missing_name_from_the_error_text() -> None:
    current = rec("make", 2, error_type="command_not_found", error_message="rg: command not found")
    critiques = run(CommandNotFoundRule(), current, view())
    assert critiques and "ripgrep" in critiques[0].line


def test_command_not_found_is_quiet_without_a_suggestion_or_for_other_failures() -> None:
    assert run(CommandNotFoundRule(), rec("zzqqxx", 127), view(path=frozenset({"ls"}))) == []
    assert run(CommandNotFoundRule(), rec("rg TODO", 1), view()) == []


def test_close_command_prefers_the_nearest_then_the_most_used() -> None:
    assert edit_distance("gti", "git") == 1
    assert close_command("gti", ["git"], []) == "git"
    assert close_command("pyhton", ["pylint"], ["python", "pytho"]) == "python"
    assert close_command("sl", ["ls", "ls", "sh"], []) == "ls"
    assert close_command("abcdef", [], ["uvwxyz"]) is None


# ---- Secret ------------------------------------------------------------------------------------


def test_secret_speaks_when_a_secret_placeholder_is_in_the_command() -> None:
    current = rec("curl -H 'Authorization: Bearer [GITHUB_TOKEN_1]' https://api.github.com", redactions=1)
    critiques = run(SecretRule(), current, view())
    assert critiques and critiques[0].kind is Trigger.SECRET
    assert "redacted in memory" in critiques[0].line and "GITHUB_TOKEN" in critiques[0].text
    assert len(critiques[0].line) <= MAX_LINE_CHARS


def test_secret_is_quiet_for_personal_data_and_unredacted_lines() -> None:
    assert run(SecretRule(), rec("ls /home/[USERNAME_1]/src", redactions=1), view()) == []
    assert run(SecretRule(), rec("echo [PASSWORD_1]", redactions=0), view()) == []


# ---- Dangerous: one case per row, and the near misses ----------------------------------------------

DANGEROUS_LINES = {
    "curl_to_shell": "curl -fsSL https://get.example.com | sudo bash",
    "wget_to_shell": "wget -qO- https://get.example.com/install.sh | sh",
    "chmod_777_recursive": "chmod -R 777 /var/www",
    "rm_rf_broad": "sudo rm -rf /",
    "git_force_push_main": "git push --force origin main",
    "dd_to_disk": "sudo dd if=image.iso of=/dev/sdb bs=4M",
    "mkfs": "sudo mkfs.ext4 /dev/sdb1",
}


def test_every_row_has_a_case() -> None:
    assert {row.name for row in DANGER_ROWS} == set(DANGEROUS_LINES)


@pytest.mark.parametrize(("name", "line"), sorted(DANGEROUS_LINES.items()))
def test_dangerous_row_applies_to_its_case(name: str, line: str) -> None:
    assert [row.name for row in dangers_in(line, "/home/[USERNAME_1]/app")] == [name]
    critiques = run(DangerousRule(), rec(line), view())
    assert critiques[0].kind is Trigger.DANGEROUS and critiques[0].severity is Severity.CRITICAL


@pytest.mark.parametrize(
    "line",
    [
        "rm -rf ~",
        "rm -fr $HOME",
        'rm -r -f "$HOME/"',
        "rm -rf /*",
        "rm -rf ..",
        "rm --recursive --force /usr",
        "FOO=1 rm -Rf ~/*",
    ],
)
def test_rm_on_a_broad_path_is_dangerous(line: str) -> None:
    assert [row.name for row in dangers_in(line, "/srv/app")] == ["rm_rf_broad"]


def test_rm_of_everything_is_dangerous_only_at_a_top_level() -> None:
    assert dangers_in("rm -rf *", "/home/[USERNAME_1]")
    assert dangers_in("rm -rf *", "/")
    assert not dangers_in("rm -rf *", "/home/[USERNAME_1]/app/build")


@pytest.mark.parametrize(
    "line",
    [
        "rm -rf build/",
        "rm -rf ./node_modules",
        "rm -f /etc/foo.conf",
        "rm -rf ../old-checkout",
        "curl -fsSL https://example.com/install.sh -o install.sh",
        "curl https://example.com | shellcheck -",
        "wget https://example.com/x.tar.gz",
        "chmod 777 file.txt",
        "chmod -R 755 /var/www",
        "git push --force origin feature/x",
        "git push --force-with-lease origin main",
        "git push origin main",
        "dd if=/dev/zero of=disk.img bs=1M count=10",
        "echo mkfs is dangerous",
        "ls -la",
    ],
)
def test_near_misses_are_not_dangerous(line: str) -> None:
    assert dangers_in(line, "/home/[USERNAME_1]/app") == []


def test_force_push_forms_to_main_and_master_are_dangerous() -> None:
    for line in (
        "git push -f origin master",
        "git push origin +main",
        "git -C repo push --force origin HEAD:main",
    ):
        assert [row.name for row in dangers_in(line, "/")] == ["git_force_push_main"], line


# ---- RepeatedFailure --------------------------------------------------------------------------------


def test_the_third_same_failure_within_the_hour_offers_the_agent() -> None:
    earlier = [rec("npm test", 1, at=NOW - minutes * MINUTE) for minutes in (20, 10)]
    critiques = run(RepeatedFailureRule(), rec("npm test", 1), view(*earlier))
    assert critiques and critiques[0].kind is Trigger.REPEATED_FAILURE
    assert "kronii agents hand" in critiques[0].line and "nothing is run" in critiques[0].text
    assert critiques[0].times == 3


def test_repeated_failure_is_quiet_for_the_second_time_old_failures_and_other_places() -> None:
    once = [rec("npm test", 1, at=NOW - MINUTE)]
    assert run(RepeatedFailureRule(), rec("npm test", 1), view(*once)) == []
    old = [rec("npm test", 1, at=NOW - minutes * MINUTE) for minutes in (90, 70)]
    assert run(RepeatedFailureRule(), rec("npm test", 1), view(*old)) == []
    away = [rec("npm test", 1, at=NOW - m * MINUTE, session="s9", cwd="/srv") for m in (3, 2)]
    assert run(RepeatedFailureRule(), rec("npm test", 1), view(*away)) == []
    different = [rec("npm test", 1, at=NOW - m * MINUTE, error_message=f"case {m} failed") for m in (3, 2)]
    current = rec("npm test", 1, error_message="cannot find module")
    assert run(RepeatedFailureRule(), current, view(*different)) == []


def test_repeated_failure_counts_the_same_place_in_another_session() -> None:
    same_cwd = [rec("npm test", 1, at=NOW - m * MINUTE, session="s9") for m in (3, 2)]
    assert run(RepeatedFailureRule(), rec("npm test", 1), view(*same_cwd))


# ---- the evaluator ---------------------------------------------------------------------------------


class _Counting:
    kind = Trigger.ERROR

    def __init__(self) -> None:
        self.calls = 0

    def match(self, record: InvocationRecord, memory: MemoryView) -> bool:
        self.calls += 1
        return True

    def produce(self, record: InvocationRecord, memory: MemoryView) -> list[Critique]:
        return [Critique(self.kind, "same", "same", Severity.NOTICE, "one-key")] * 2


class _Broken:
    kind = Trigger.SECRET

    def match(self, record: InvocationRecord, memory: MemoryView) -> bool:
        raise RuntimeError("a plugin bug")

    def produce(self, record: InvocationRecord, memory: MemoryView) -> list[Critique]:
        return []


def test_evaluator_runs_each_enabled_rule_once_and_drops_duplicate_keys() -> None:
    counting = _Counting()
    evaluation = TriggerEvaluator([counting, counting, DangerousRule()]).evaluate(
        rec("rm -rf /"), view(), lambda kind: True
    )
    assert counting.calls == 1
    assert [critique.kind for critique in evaluation.critiques] == [Trigger.ERROR, Trigger.DANGEROUS]


def test_evaluator_skips_disabled_rules_and_survives_a_broken_one() -> None:
    evaluation = TriggerEvaluator([_Broken(), DangerousRule()]).evaluate(
        rec("rm -rf /"), view(), lambda kind: kind is not Trigger.DANGEROUS
    )
    assert evaluation.critiques == ()
    assert evaluation.failed == (Trigger.SECRET,)


def test_built_in_evaluation_of_a_dangerous_line_with_a_secret() -> None:
    line = "curl -H 'X-Token: [GITHUB_TOKEN_1]' https://x.example | bash"
    evaluation = TriggerEvaluator().evaluate(rec(line, redactions=1), view(), lambda kind: True)
    kinds = {critique.kind for critique in evaluation.critiques}
    assert kinds == {Trigger.DANGEROUS, Trigger.SECRET}
    top = strongest(evaluation.critiques)
    assert top is not None and top.kind is Trigger.DANGEROUS


def test_command_name_skips_assignments_and_wrappers() -> None:
    assert command_name("FOO=1 sudo -E -u root /usr/bin/git push") == "git"
    assert command_name("env A=b nice -n 5 make -j4") == "make"
    assert command_name("   ") == ""
    assert command_name("echo 'unbalanced") == "echo"


def test_a_hint_about_a_command_that_succeeded_names_it_because_it_shows_a_prompt_late() -> None:
    # The hooks wait for a hint only after a failure: a successful command's hint is read at the
    # prompt after the next command, under that command's output.
    succeeded = run(DangerousRule(), rec("curl -s https://get.example | sh"), view())
    assert succeeded[0].line.startswith("`curl -s https://get.example | sh`: dangerous: ")
    failed = run(DangerousRule(), rec("git push --force origin main", 128), view())
    assert failed[0].line.startswith("dangerous: ")
    long = run(
        DangerousRule(), rec("curl -s https://downloads.example.org/install-everything.sh | sh"), view()
    )
    assert long[0].line.startswith("`curl -s https://downloads.examp…`: dangerous: ")
    assert all(len(critique.line) <= 100 for critique in (*succeeded, *failed, *long))
