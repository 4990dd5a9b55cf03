"""From a failing command in a real bash to its hint at the prompt, on a real critic process
(embedded NATS, Redis, PostgreSQL with pgvector): bash with `kronii shell-init` on a pseudo-terminal
runs the same failing command again and again; each run after the first has a hint.

Printed: the critic's own histogram, a command read off the spool to its hint handed to the shell
(kronii_critic_event_to_hint_seconds), and from outside, the wall time of a failing command with
its hint at the prompt next to the same command with no critic running (the hook then never
waits), in the same run.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import httpx
from _common import machine, save, summary_ms
from kronii.stores.db import migrate_up

from tests.infra import create_database, start_test_infra
from tests.integration.critic.shell_pty import ShellPty, shell_setup
from tests.integration.critic.test_critic_service import start_critic

_COMMAND = "cat /nonexistent-kronii-bench-file"


def _histogram(url: str) -> dict[str, float]:
    buckets: dict[str, float] = {}
    for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
        if line.startswith("kronii_critic_event_to_hint_seconds_bucket"):
            bound = line.split('le="', 1)[1].split('"', 1)[0]
            buckets[bound] = float(line.rsplit(" ", 1)[1])
    return buckets


def _quantile(buckets: dict[str, float], share: float) -> str:
    total = buckets.get("+Inf", 0.0)
    for bound, count in sorted(
        ((b, c) for b, c in buckets.items() if b != "+Inf"), key=lambda item: float(item[0])
    ):
        if total and count >= share * total:
            return f"<= {float(bound) * 1000:g} ms"
    return "above the largest bucket"


def _runs(pty: ShellPty, count: int) -> tuple[list[float], int]:
    pty.run(_COMMAND)  # the first failure has nothing to recall
    seconds, hinted = [], 0
    for _ in range(count):
        started = time.perf_counter()
        shown = pty.run(_COMMAND)
        seconds.append(time.perf_counter() - started)
        hinted += "kronii:" in shown
    return seconds, hinted


def run(count: int) -> None:
    with start_test_infra() as infra, tempfile.TemporaryDirectory() as tmp:
        database = create_database(infra.database, "bench_critic")
        migrate_up(database)
        home = Path(tmp)
        with start_critic(infra, database, home) as critic:
            with ShellPty(shell_setup("bash", home, hooked=True)) as pty:
                with_critic, hinted = _runs(pty, count)
            buckets = _histogram(critic.url)
            critic.proc.terminate()
            with ShellPty(shell_setup("bash", home, hooked=True)) as pty:
                without_critic, _ = _runs(pty, count)
    save(
        "critic_hint",
        {
            "machine": machine(),
            "commands": count,
            "hints_shown": hinted,
            "critic_event_to_hint_p50": _quantile(buckets, 0.5),
            "critic_event_to_hint_p95": _quantile(buckets, 0.95),
            "failing_command_with_its_hint_wall": summary_ms(with_critic),
            "failing_command_no_critic_wall": summary_ms(without_critic),
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--commands", type=int, default=100)
    args = parser.parse_args()
    print(f"critic_hint: {args.commands} failing commands in bash, with and without the critic")
    run(args.commands)


if __name__ == "__main__":
    main()
