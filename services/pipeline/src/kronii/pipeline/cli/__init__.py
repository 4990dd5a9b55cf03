"""The pipeline's commands, mounted by `kronii` through the ``kronii.commands`` entry points:
`kronii replay` (`replay`) and `kronii record` (`record`).

Empty on purpose: `kronii --help` and shell completion import each command's module, and those need
click alone."""
