"""`python -m kronii.supervisor.cli agents ...`: the same command as `kronii agents`."""

from kronii.supervisor.cli.agents import main

raise SystemExit(main())
