"""`python -m kronii.critic.cli critic ...`, `... run -- CMD` and `... shell-init SHELL`: the same
commands as `kronii critic`, `kronii run` and `kronii shell-init` (through `kronii`'s own entry, so
the errors and exit codes are the same); with none of those words first, `critic` is meant."""

import sys

from kronii.launcher.cli.main import main

arguments = sys.argv[1:]
if arguments[:1] not in (["critic"], ["run"], ["shell-init"]):
    arguments = ["critic", *arguments]
raise SystemExit(main(arguments))
