"""The input broker's commands, mounted by `kronii` through the ``kronii.commands`` entry points:
`kronii control` (`control`: the desktop user's grants and three choices) and `kronii broker`
(`broker`: agents' keys, the automation audit, the xdotool shadow directory).

Empty on purpose: `kronii --help` and shell completion import each command's module, and those need
click alone."""
