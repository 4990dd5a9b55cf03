"""The supervisor's command, `kronii agents` (`agents`, with `http` for reaching the service), mounted
by `kronii` through the ``kronii.commands`` entry point ``agents``.

Empty on purpose: `kronii --help` and shell completion import the command's module, which needs
click alone."""
