"""The `kronii` command."""
