"""The sensor's commands, mounted by `kronii` through the ``kronii.commands`` entry points:
`kronii activity` (`activity`: report, export, import-aw, delete).

Empty on purpose: `kronii --help` and shell completion import each command's module, and those need
click alone."""
