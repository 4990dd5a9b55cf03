"""The capture service's commands, mounted by `kronii` through the ``kronii.commands`` entry points:
`kronii capture` (`capture`, with `clients`) and `kronii keys` (`keys`).

Empty on purpose: `kronii --help` and shell completion import each command's module, and those need
click alone."""
