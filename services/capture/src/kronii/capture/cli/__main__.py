"""`python -m kronii.capture.cli capture ...` and `python -m kronii.capture.cli keys ...`: the same
commands as `kronii capture` and `kronii keys`; with neither word first, `capture` is meant."""

import sys

from kronii.capture.cli import capture, keys

run = keys.main if sys.argv[1:2] == ["keys"] else capture.main
raise SystemExit(run())
