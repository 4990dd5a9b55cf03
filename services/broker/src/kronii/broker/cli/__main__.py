"""`python -m kronii.broker.cli control ...` and `python -m kronii.broker.cli broker ...`: the same
commands as `kronii control` and `kronii broker`; with neither word first, `control` is meant."""

import sys

from kronii.broker.cli import broker, control

run = broker.main if sys.argv[1:2] == ["broker"] else control.main
raise SystemExit(run())
