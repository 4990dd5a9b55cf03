"""The console critic as a person meets it: a real critic process against the run's NATS, Redis
and PostgreSQL (pgvector), real bash, zsh and fish with `kronii shell-init` on a pseudo-terminal,
and the commands a person types. What the hooks report is kept redacted, on disk and in the
database; a hint for a repeated error shows at the next prompt; `kronii critic` finds it again."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.desktop import wait_until
from tests.infra import InfraUrls
from tests.integration.critic.shell_pty import ShellPty, shell_setup
from tests.mesh import Proc, service_ports, start_service

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


@dataclass
class Critic:
    proc: Proc
    url: str
    home: Path
    database: str
    env: dict[str, str]

    def get(self, path: str, **params: Any) -> Any:
        response = httpx.get(f"{self.url}{path}", params=params, timeout=20)
        response.raise_for_status()
        return response.json()

    def day_files(self) -> str:
        root = self.home / "data" / "critic"
        return "\n".join(path.read_text(errors="replace") for path in sorted(root.glob("critic-*.tsv")))

    def rows(self) -> list[tuple[str, str]]:
        with psycopg.connect(self.database) as conn:
            return [
                (str(line), str(error))
                for line, error in conn.execute(
                    "SELECT command_line, error_message FROM critic_records"
                ).fetchall()
            ]


@contextlib.contextmanager
def start_critic(
    infra: InfraUrls, database: str, home: Path, extra_env: dict[str, str] | None = None
) -> Iterator[Critic]:
    env = dict(os.environ)
    env.update(infra.env())
    env.update(
        KRONII_DATABASE_URL=database,
        KRONII_DATA_DIR=str(home / "data"),
        XDG_RUNTIME_DIR=str(home / "run"),
        XDG_CONFIG_HOME=str(home / ".config"),
        KRONII_LOG_FORMAT="json",
    )
    env.update(extra_env or {})
    env = service_ports("critic", env)
    (home / "run").mkdir(mode=0o700, parents=True, exist_ok=True)
    with start_service("critic", env, timeout=60) as critic:
        yield Critic(critic.proc, critic.url, home, database, env)


@pytest.fixture(scope="module")
def critic(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Critic]:
    """One critic for the module: every test types commands of its own, so they never meet."""
    with start_critic(infra, migrated_database, tmp_path_factory.mktemp("critic")) as running:
        yield running


def _shell(shell: str, critic: Critic) -> ShellPty:
    setup = shell_setup(shell, critic.home, hooked=True)
    assert setup.runtime_dir == critic.home / "run"
    return ShellPty(setup)  # started by `with`


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_hook_records_each_command_with_its_status_and_duration(critic: Critic, shell: str) -> None:
    with _shell(shell, critic) as pty:
        pty.run("sleep 0.3")
        pty.run("ls /nonexistent-kronii-dir")
    wait_until(lambda: critic.get("/v1/critic/search", text="nonexistent-kronii-dir")["hits"],
               timeout_s=15, what="the failing command kept")  # fmt: skip
    hit = critic.get("/v1/critic/search", text="nonexistent-kronii-dir")["hits"][0]
    assert hit["record"]["command_line"] == "ls /nonexistent-kronii-dir"
    assert hit["record"]["exit_status"] == 2 and hit["record"]["shell"] == shell
    slept = critic.get("/v1/critic/search", text="sleep 0.3")["hits"][0]
    assert slept["record"]["command_line"] == "sleep 0.3"
    assert 250 <= int(slept["record"]["duration_ms"]) <= 3000


def test_a_secret_typed_in_a_command_is_redacted_on_disk_and_in_the_database(critic: Critic) -> None:
    with _shell("bash", critic) as pty:
        shown = pty.run(f"curl -s -H 'Authorization: token {SECRET}' http://127.0.0.1:9/ || true")
    wait_until(lambda: any("Authorization" in line for line, _ in critic.rows()), timeout_s=15,
               what="the command in PostgreSQL")  # fmt: skip
    assert SECRET not in critic.day_files() and "Authorization" in critic.day_files()
    assert all(SECRET not in line for line, _ in critic.rows())
    hit = critic.get("/v1/critic/search", text="Authorization")["hits"][0]
    assert SECRET not in hit["record"]["command_line"] and int(hit["record"]["redactions"]) >= 1
    assert "secret" in shown.lower() or hit["record"]["trigger"] == "secret"
    spool = critic.home / "run" / "kronii" / "critic" / "spool"
    assert SECRET not in spool.read_text(errors="replace")  # read and truncated at once


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_hint_for_a_repeated_error_shows_at_the_next_prompt(
    infra: InfraUrls, migrated_database: str, tmp_path: Path, shell: str
) -> None:
    # A critic of its own: a repeated failure is said once an hour, whatever the shell.
    with start_critic(infra, migrated_database, tmp_path) as critic, _shell(shell, critic) as pty:
        missing = f"/nonexistent-kronii-file-{shell}"
        shown = [pty.run(f"cat {missing}") for _ in range(3)]
        # The hint goes out before the record is kept: once the third is kept, the hint waits in
        # the FIFO for the next prompt (under load it may miss the 20 ms the failing prompt waits).
        wait_until(lambda: len(critic.get("/v1/critic/search", text=missing, take=10)["hits"]) >= 3,
                   timeout_s=15, what="the three failures kept")  # fmt: skip
        shown.append(pty.run("true"))
    assert "kronii:" not in shown[0]
    # The third time it is a repeated failure, said once. The shell waits 20 ms for a hint after a
    # failure: on a loaded machine it may come later and show at the prompt after.
    hinted = [text for text in shown[2:] if "kronii:" in text]
    assert hinted and "same failure 3x" in hinted[0], shown


def _runs_of(critic: Critic, missing: str) -> list[dict[str, Any]]:
    """The records of `cat <missing>`, and of the hook's `kronii run` line if it were kept (the
    search also finds similar commands of other tests)."""
    hits = critic.get("/v1/critic/search", text=missing, take=20)["hits"]
    return [
        h for h in hits if h["record"]["command_line"] in (f"cat {missing}", f"kronii run -- cat {missing}")
    ]


def test_kronii_run_in_a_hooked_shell_is_recorded_once_and_its_hint_shows_at_that_shells_prompt(
    infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> None:
    # The hooks export the shell's session (KRONII_CRITIC_SESSION): `kronii run` reports to it,
    # and the hook does not record the `kronii run` line a second time.
    with start_critic(infra, migrated_database, tmp_path) as critic:
        before = (
            f"export PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH "
            f"KRONII_CRITIC_URL={shlex.quote(critic.url)}"
        )
        with ShellPty(shell_setup("bash", critic.home, hooked=True, before=before)) as pty:
            missing = "/nonexistent-kronii-run-file"
            shown = [pty.run(f"kronii run -- cat {missing}") for _ in range(3)]
            wait_until(lambda: len(_runs_of(critic, missing)) >= 3, timeout_s=15, what="the three runs kept")
            shown.append(pty.run("true"))
        runs = _runs_of(critic, missing)
    assert len(runs) == 3, runs  # once each, not once more for the hook's own line
    hinted = [text for text in shown[2:] if "kronii:" in text]
    assert hinted and "same failure 3x" in hinted[0], shown


def test_kronii_critic_finds_the_failure_again_and_the_doctor_sees_the_hooks(critic: Critic) -> None:
    with _shell("bash", critic) as pty:
        pty.run("python3 -c 'import nonexistent_kronii_module'")
    wait_until(lambda: critic.get("/v1/critic/search", text="nonexistent_kronii_module")["hits"], timeout_s=15,
               what="the failure kept")  # fmt: skip
    env = {**critic.env, "KRONII_CRITIC_URL": critic.url}
    search = subprocess.run(
        [sys.executable, "-m", "kronii.critic.cli", "critic", "search", "nonexistent_kronii_module", "--json"],
        env=env, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert search.returncode == 0, search.stderr
    assert "nonexistent_kronii_module" in search.stdout
    doctor = subprocess.run(
        [sys.executable, "-m", "kronii.critic.cli", "critic", "doctor", "--json"],
        env=env, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    report = json.loads(doctor.stdout)
    assert any(hook["shell"] == "bash" and hook["events"] >= 1 for hook in report["hooks"]), report
    assert report["model"]["available"] is True


def test_kronii_run_reports_the_error_text_of_a_failing_command(critic: Critic) -> None:
    env = {**critic.env, "KRONII_CRITIC_URL": critic.url}
    done = subprocess.run(
        [sys.executable, "-m", "kronii.critic.cli", "run", "--", "sh", "-c",
         "echo 'fatal: not a git repository (or any of the parent directories): .git' >&2; exit 128"],
        env=env, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 128 and "not a git repository" in done.stderr
    wait_until(lambda: critic.get("/v1/critic/search", text="not a git repository")["hits"], timeout_s=15,
               what="the run kept with its error")  # fmt: skip
    hit = critic.get("/v1/critic/search", text="not a git repository")["hits"][0]
    assert hit["record"]["shell"] == "run" and "not a git repository" in hit["record"]["error_message"]


def test_with_the_critic_stopped_the_shell_does_not_wait(
    infra: InfraUrls, migrated_database: str, tmp_path: Path
) -> None:
    with start_critic(infra, migrated_database, tmp_path) as critic:
        critic.proc.process.kill()  # as a crash leaves it: its critic.pid names a dead process
        critic.proc.process.wait(10)
        assert (tmp_path / "run" / "kronii" / "critic" / "critic.pid").exists()
    with _shell("bash", critic) as pty:
        started = time.perf_counter()
        for _ in range(20):
            pty.run("false")
        per_prompt = (time.perf_counter() - started) / 20
    assert per_prompt < 0.05, f"{per_prompt * 1000:.1f} ms per prompt with the critic stopped"


def _cli(critic: Critic, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {**critic.env, "KRONII_CRITIC_URL": critic.url}
    return subprocess.run(
        [sys.executable, "-m", "kronii.critic.cli", "critic", *arguments],
        env=env, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip


def test_the_doctor_fails_on_an_unknown_key_in_critic_toml(critic: Critic) -> None:
    toml = critic.home / ".config" / "kronii" / "critic.toml"
    toml.parent.mkdir(parents=True, exist_ok=True)
    toml.write_text("Verbosity = 'quiet'\nRetentoinDays = 7\n")
    try:
        wrong = _cli(critic, "doctor", "--json")
    finally:
        toml.unlink()
    fixed = json.loads(_cli(critic, "doctor", "--json").stdout)
    assert wrong.returncode == 1, wrong.stderr
    problems = json.loads(wrong.stdout)["problems"]
    assert any(
        "'RetentoinDays' is not a critic setting" in line and "critic.toml" in line for line in problems
    )
    assert not any("critic.toml" in line for line in fixed["problems"])


def test_kronii_critic_export_masks_paths_by_default(critic: Critic) -> None:
    place = critic.home / "clients" / "acme-payroll-kx"
    place.mkdir(parents=True)
    with _shell("bash", critic) as pty:
        pty.run(f"cd {place}")
        pty.run("cat ./ledger-kx.csv")
    wait_until(lambda: critic.get("/v1/critic/search", text="ledger-kx")["hits"], timeout_s=15,
               what="the commands kept")  # fmt: skip
    shared = _cli(critic, "export")
    raw = _cli(critic, "export", "--no-redact")
    assert shared.returncode == 0 and raw.returncode == 0, shared.stderr + raw.stderr
    assert "acme-payroll-kx" in raw.stdout and "ledger-kx" in raw.stdout
    assert "acme-payroll-kx" not in shared.stdout and "ledger-kx" not in shared.stdout
    assert str(critic.home) not in shared.stdout
    assert "[PATH_" in shared.stdout


def test_kronii_critic_similar_lists_only_failures(critic: Critic) -> None:
    with _shell("bash", critic) as pty:
        pty.run("ls /nonexistent-kx-similar/a")
        pty.run("ls /tmp/kx-similar-ok >/dev/null 2>&1; ls / >/dev/null")
        pty.run("ls /")
        pty.run("ls /nonexistent-kx-similar/b")
    wait_until(lambda: critic.get("/v1/critic/search", text="kx-similar/b")["hits"], timeout_s=15,
               what="the commands kept")  # fmt: skip
    anchor = critic.get("/v1/critic/search", text="kx-similar/b")["hits"][0]["record"]["record_id"]
    done = _cli(critic, "similar", anchor, "--json", "--k", "20")
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert hits and all(int(hit["record"]["exit_status"]) != 0 for hit in hits), hits
    assert any("kx-similar/a" in hit["record"]["command_line"] for hit in hits)


def test_readyz_says_where_similar_records_are_searched(critic: Critic) -> None:
    """The in-process index is loaded from PostgreSQL at start; /readyz says so once it is (with its
    size), and that PostgreSQL answers while it loads."""

    def detail() -> str:
        body = httpx.get(f"{critic.url}/readyz", timeout=10).json()
        return str(body["dependencies"]["similar_search"]["detail"])

    wait_until(lambda: detail().startswith("in process: "), timeout_s=30, what="the index loaded")
    assert "records, loaded in " in detail()
