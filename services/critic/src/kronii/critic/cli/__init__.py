"""The console critic's commands, mounted by `kronii` through the ``kronii.commands`` entry points:
`kronii critic` (`critic`: search, similar, export, doctor, mute), `kronii run` (`run`: run a command
and report it) and `kronii shell-init` (`shell_init`: the shells' hooks).

Empty on purpose: `kronii --help` and shell completion import each command's module, and those need
click alone."""
