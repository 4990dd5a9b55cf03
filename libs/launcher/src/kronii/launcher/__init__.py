"""kronii.launcher: the `kronii` command and `kronii up`: the mesh on one machine, its embedded servers, its processes, `kronii status`, the CLI shell."""
