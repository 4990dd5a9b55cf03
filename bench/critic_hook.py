"""What the critic's shell hooks cost per prompt (issue 15; goal: < 2 ms added), in bash, zsh and
fish, next to bash-preexec's own cost.

Each shell runs interactively on a pseudo-terminal with a private HOME (tests/integration/critic/
shell_pty.py): its prompt carries a counter, so one sample is the wall time from writing a line and
Enter to the next prompt being read. The variants of a shell run in the same process, interleaved
over rounds so that a busy moment of the machine hits them alike:

- plain: no hook;
- kronii: `eval "$(kronii shell-init SHELL)"`, no critic running (the lines wait in the spool);
- bash-preexec (bash only): bench/data/bash-preexec.sh 0.6.0 (MIT, rcaloras/bash-preexec; not on the
  npm registry, so it is kept here with its licence) with an empty preexec and precmd, the anchor the
  issue names; it runs `$(history 1)` per command, a fork.

Commands: `true` (a command that does nothing, the hooks' whole path: the spool line is written) and
`false` (the failure path: without a running critic the hook must not wait for a hint). The added
cost is the variant's p50 minus plain's p50 (and the same for means).

Usage: python bench/critic_hook.py [--commands 200] [--rounds 3] [--shells bash,zsh,fish]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, machine, save, summary_ms

from tests.integration.critic.shell_pty import ShellPty, shell_setup

BASH_PREEXEC = ROOT / "bench" / "data" / "bash-preexec.sh"
_WARMUP = 10


def _variants(shell: str) -> dict[str, dict[str, Any]]:
    variants: dict[str, dict[str, Any]] = {"plain": {"hooked": False}, "kronii": {"hooked": True}}
    if shell == "bash":
        preexec = f"source '{BASH_PREEXEC}'\npreexec() {{ :; }}\nprecmd() {{ :; }}"
        variants["bash-preexec"] = {"hooked": False, "after": preexec}
    return variants


def _samples(pty: ShellPty, command: str, count: int) -> list[float]:
    for _ in range(_WARMUP):
        pty.run(command)
    times = []
    for _ in range(count):
        started = time.perf_counter()
        pty.run(command)
        times.append(time.perf_counter() - started)
    return times


def measure_shell(shell: str, commands: int, rounds: int, work: Path) -> dict[str, Any]:
    per_round = max(1, commands // rounds)
    collected: dict[str, dict[str, list[float]]] = {}
    for round_index in range(rounds):
        for name, options in _variants(shell).items():
            home = work / f"{shell}-{name}-{round_index}"
            with ShellPty(shell_setup(shell, home, **options)) as pty:
                for command in ("true", "false"):
                    collected.setdefault(command, {}).setdefault(name, []).extend(
                        _samples(pty, command, per_round)
                    )
    figures: dict[str, Any] = {}
    for command, by_variant in collected.items():
        summaries = {name: summary_ms(values) for name, values in by_variant.items()}
        plain = summaries["plain"]
        added = {
            name: {
                "p50_ms": round(summary["p50_ms"] - plain["p50_ms"], 3),
                "mean_ms": round(summary["mean_ms"] - plain["mean_ms"], 3),
            }
            for name, summary in summaries.items()
            if name != "plain"
        }
        figures[command] = {"per_prompt": summaries, "added": added}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=200, help="samples per shell, variant and command")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shells", default="bash,zsh,fish")
    arguments = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kronii-hook-") as folder:
        for shell in arguments.shells.split(","):
            if shutil.which(shell) is None:
                results[shell] = {"skipped": f"{shell} is not installed"}
                continue
            results[shell] = measure_shell(shell, arguments.commands, arguments.rounds, Path(folder))
    goal_met = all(
        added["mean_ms"] < 2.0
        for figures in results.values()
        for command in figures.values()
        if isinstance(command, dict)
        for name, added in command.get("added", {}).items()
        if name == "kronii"
    )
    save(
        "critic_hook",
        {
            "machine": machine(),
            "commands": arguments.commands,
            "rounds": arguments.rounds,
            "goal": "kronii hook adds < 2 ms per prompt (mean)",
            "goal_met": goal_met,
            "shells": results,
        },
    )


if __name__ == "__main__":
    main()
