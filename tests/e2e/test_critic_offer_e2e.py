"""The critic-to-agent path on real programs (issue 29, "sources of work besides agents"): a real bash
with the critic's hooks runs `kronii run -- CMD` three times, CMD failing the same way with a token
and an email on its command line and in its error; the real critic offers the failure to the
supervisor, the real supervisor chooses the agent working in that directory (a line-reading agent in
a real tmux pane, tests/agents/thread_agent.py) and asks the person through the real pipeline, whose
bubble real dunst shows (Xvfb, a private session bus) with the yes button. The person's yes is
dunst's own action on the bubble (`dunstctl action 0`: dunst sends ActionInvoked, the pipeline's
click path takes it); then the agent's thread holds the handed-over failure, redacted, and the
orchestrator woke the agent in its pane. The second test says yes with `kronii agents hand` instead.
Nowhere (thread, pane, bubble, audit) is the token or the email in clear."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from kronii.foundation.urls import libpq_url

from tests.agents.harness import private_socket
from tests.desktop import stop_process, wait_until
from tests.infra import InfraUrls
from tests.integration.critic.shell_pty import ShellPty, shell_setup
from tests.integration.critic.test_critic_service import Critic, start_critic
from tests.integration.pipeline.pipeline_support import pipeline_database, pipeline_env, start_pipeline
from tests.integration.supervisor.conftest import SECRET as SUPERVISOR_SECRET
from tests.integration.supervisor.conftest import SETTINGS, Supervisor, eventually, start_supervisor
from tests.integration.supervisor.test_orchestrator_pilot import Pilot

pytestmark = pytest.mark.e2e

AGENT = "codex1"
TOKEN = "ghp_" + "Zq7Rt2Lm9Xc4Vb8Nw3Ks6Hd1Jf5Gp0Ay2Ue"  # a GitHub token's shape, made up
EMAIL = "dana.secret@exemple.com"
FAST = {
    **SETTINGS,
    "KRONII_SUPERVISOR_ORCHESTRATOR_SWEEP_SECS": "0.5",
    "KRONII_SUPERVISOR_MAX_DEFER_SECS": "30",
    "KRONII_SUPERVISOR_ACK_TIMEOUT_SECS": "10",
}


def _dunstctl(env: dict[str, str], *args: str) -> str | None:
    done = subprocess.run(
        ["dunstctl", *args], env=env, capture_output=True, text=True, timeout=10, check=False
    )
    return done.stdout if done.returncode == 0 else None


def _history(env: dict[str, str]) -> list[dict[str, str]]:
    """The bubbles dunst closed (its history), as the person saw them."""
    history: dict[str, Any] = json.loads(_dunstctl(env, "history") or "{}")
    return [
        {name: str(item[name]["data"]) for name in ("appname", "summary", "body", "default_action_name")}
        for item in (history.get("data") or [[]])[0]
    ]


def _displayed(env: dict[str, str]) -> int:
    counts = dict(line.split(":") for line in (_dunstctl(env, "count") or "").splitlines() if ":" in line)
    return int(counts.get("  Currently displayed", counts.get("Currently displayed", "0")).strip() or 0)


@dataclass
class Mesh:
    dunst: dict[str, str]
    critic: Critic
    supervisor: Supervisor
    pilot: Pilot
    pipeline_database: str
    work: Path

    def shell(self, folder: Path) -> ShellPty:
        """The person's bash, hooked, in the agent's project, with `kronii` on its PATH."""
        before = (
            f"export PATH={shlex.quote(str(Path(sys.executable).parent))}:$PATH "
            f"KRONII_CRITIC_URL={shlex.quote(self.critic.url)}\ncd {shlex.quote(str(self.work))}"
        )
        return ShellPty(shell_setup("bash", folder, hooked=True, before=before))

    def offer_rows(self, marker: str) -> list[tuple[str, str, str]]:
        """(offer id, agent, accepted?) of the offers whose command holds `marker`."""
        with psycopg.connect(libpq_url(self.supervisor.database)) as conn:
            rows = conn.execute(
                "SELECT offer_id, agent_id, accepted_at IS NOT NULL FROM supervisor_failure_offers "
                "WHERE command_line LIKE %s",
                (f"%{marker}%",),
            ).fetchall()
        return [(str(row[0]), str(row[1]), str(row[2])) for row in rows]

    def buttons(self, marker: str) -> list[list[tuple[str, str]]]:
        """The (key, label) buttons of each notification the pipeline showed about `marker`."""
        with psycopg.connect(libpq_url(self.pipeline_database)) as conn:
            rows = conn.execute(
                "SELECT actions FROM pipeline_notifications WHERE body LIKE %s", (f"%{marker}%",)
            ).fetchall()
        return [[(str(a["key"]), str(a["label"])) for a in row[0]] for row in rows]

    def audit(self, offer_id: str) -> tuple[list[str], str]:
        """The actions audited about the offer (the supervisor's and the pipeline's), and every audit
        row of both databases as text."""
        actions, texts = [], []
        for database in (self.supervisor.database, self.pipeline_database):
            with psycopg.connect(libpq_url(database)) as conn:
                rows = conn.execute("SELECT action, subject, detail::text FROM audit_log").fetchall()
            actions += [str(action) for action, subject, _ in rows if subject == offer_id]
            texts += [f"{action} {subject} {detail}" for action, subject, detail in rows]
        return actions, "\n".join(texts)


@pytest.fixture(scope="module")
def mesh(
    infra: InfraUrls, migrated_database: str, xdisplay: str, session_bus: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Mesh]:  # fmt: skip
    if shutil.which("dunst") is None:
        pytest.fail("dunst is not installed: run scripts/install_system_deps.sh")
    folder = tmp_path_factory.mktemp("critic-offer")
    work = folder / "shop"
    work.mkdir()
    dunst_env = {
        **os.environ,
        "DISPLAY": xdisplay,
        "DBUS_SESSION_BUS_ADDRESS": session_bus,
        "HOME": str(folder),
    }
    daemon = subprocess.Popen(
        ["dunst"], env=dunst_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    database = pipeline_database(infra, "critic_offer")
    env = pipeline_env(infra, database, folder / "pipeline", KRONII_PIPELINE_DESKTOP_NOTIFICATIONS="true",
                       DBUS_SESSION_BUS_ADDRESS=session_bus)  # fmt: skip
    try:
        wait_until(lambda: _dunstctl(dunst_env, "count") is not None, timeout_s=10, what="dunst on the bus")
        with (
            private_socket() as socket,
            start_supervisor(infra, migrated_database, folder / "supervisor", socket, settings=FAST) as sup,
            start_pipeline(env),
            start_critic(infra, migrated_database, folder / "critic") as critic,
        ):
            pilot = Pilot(sup, f"offer{uuid.uuid4().hex[:6]}")
            runtime = sup.spawn(
                AGENT, kind="generic", workspace=pilot.workspace, role=AGENT, cwd=str(work),
                command=[sys.executable, str(Path(__file__).parents[1] / "agents" / "thread_agent.py"),
                         "executioner", AGENT],
            )["runtime"]  # fmt: skip
            pilot.runtimes[AGENT] = runtime["runtime_id"]
            wait_until(lambda: "executioner> " in pilot.pane(AGENT), timeout_s=15, what="the agent's prompt")
            yield Mesh(dunst_env, critic, sup, pilot, database, work)
    finally:
        stop_process(daemon)


def _fail_three_times(mesh: Mesh, folder: Path, what: str) -> list[str]:
    error = f"fatal: {what}: authentication failed for {EMAIL} with {TOKEN}"
    command = f"kronii run -- sh -c {shlex.quote(f'echo {shlex.quote(error)} >&2; exit 3')}"
    with mesh.shell(folder) as bash:
        return [bash.run(command) for _ in range(3)]


def _handoff(mesh: Mesh, what: str) -> list[dict[str, Any]]:
    return [
        m for m in mesh.pilot.messages(f"handoff-{AGENT}") if m.get("kind") == "handoff" and what in m["body"]
    ]


WAKE = f"[kronii] thread handoff-{AGENT}:"


def _wakes(mesh: Mesh) -> list[str]:
    return [line for line in mesh.pilot.pane(AGENT).splitlines() if WAKE in line]


def _assert_handed_over_redacted(mesh: Mesh, what: str, woken_before: int) -> None:
    [message] = eventually(lambda: _handoff(mesh, what), 15, "the failure in the agent's thread")
    body = message["body"]
    assert message["author"] == "person" and message["to"] == [AGENT]
    assert "failed 3 times" in body and "exit status 3" in body
    assert f"fatal: {what}: authentication failed for [EMAIL" in body and "[GITHUB_TOKEN" in body
    assert TOKEN not in body and EMAIL not in body
    # The orchestrator woke the agent with one line naming the thread, typed at its prompt, once;
    # the agent read the thread with `kronii thread read`.
    eventually(lambda: len(_wakes(mesh)) > woken_before, 20, "the agent woken")
    eventually(lambda: mesh.pilot.pane(AGENT).count(f"new on handoff-{AGENT}") > woken_before, 20,
               "the agent reading its thread")  # fmt: skip
    woken = _wakes(mesh)
    assert len(woken) == woken_before + 1 and woken[-1].startswith(f"executioner> {WAKE}"), woken
    pane = mesh.pilot.pane(AGENT)
    assert TOKEN not in pane and EMAIL not in pane


def test_the_persons_yes_on_the_bubble_hands_the_redacted_failure_to_the_agent_who_is_woken(
    mesh: Mesh, tmp_path: Path
) -> None:
    what = f"bubble{uuid.uuid4().hex[:6]}"
    woken_before = len(_wakes(mesh))
    shown = _fail_three_times(mesh, tmp_path, what)
    assert TOKEN in shown[0]  # the person's own terminal shows what the command printed, as it is
    eventually(lambda: _displayed(mesh.dunst) >= 1, 20, "the offer's bubble on the desktop")
    assert _handoff(mesh, what) == []  # nothing is sent before the yes

    assert _dunstctl(mesh.dunst, "action", "0") is not None  # the person's yes, on dunst's bubble

    _assert_handed_over_redacted(mesh, what, woken_before)
    # The bubble as the person saw it (dunst keeps it in its history once closed), and its buttons
    # as the pipeline gave them.
    _dunstctl(mesh.dunst, "close-all")
    [bubble] = [b for b in _history(mesh.dunst) if what in b["body"]]
    assert bubble["summary"] == f"hand this failure to {AGENT}?" and bubble["appname"] == "kronii"
    assert bubble["default_action_name"] == "default"
    assert "failed 3 times the same way (exit 3)" in bubble["body"] and "[GITHUB_TOKEN" in bubble["body"]
    [buttons] = mesh.buttons(what)
    assert buttons[0] == ("default", f"Hand to {AGENT}") and ("snooze", "Snooze") in buttons
    [(offer_id, agent, accepted)] = mesh.offer_rows(what)
    assert (agent, accepted) == (AGENT, "True")
    actions, audit = mesh.audit(offer_id)
    assert {"supervisor.offer", "pipeline.offer_accept", "supervisor.offer_accept"} <= set(actions), actions
    assert TOKEN not in audit and EMAIL not in audit
    history = json.dumps(_history(mesh.dunst))
    assert TOKEN not in history and EMAIL not in history


def test_kronii_agents_hand_is_the_same_yes_and_a_second_one_hands_nothing_more(
    mesh: Mesh, tmp_path: Path
) -> None:
    what = f"cli{uuid.uuid4().hex[:6]}"
    woken_before = len(_wakes(mesh))
    _fail_three_times(mesh, tmp_path, what)
    [(offer_id, agent, accepted)] = eventually(lambda: mesh.offer_rows(what), 20, "the offer kept")
    assert (agent, accepted) == (AGENT, "False")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KRONII_")}
    env.update(KRONII_SUPERVISOR_URL=mesh.supervisor.url, KRONII_SUPERVISOR_TOKEN_SECRET=SUPERVISOR_SECRET)
    hand = [sys.executable, "-m", "kronii.supervisor.cli", "agents", "hand", offer_id, "--json"]
    first = subprocess.run(hand, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["thread_id"] == f"handoff-{AGENT}"
    _assert_handed_over_redacted(mesh, what, woken_before)
    again = subprocess.run(hand, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert again.returncode == 0 and json.loads(again.stdout)["duplicate"] is True
    assert len(_handoff(mesh, what)) == 1
