"""The click group every `kronii` command group is: a mistyped command is answered with the closest
one. Its own module, so that the groups (`kronii`, `kronii config`, `kronii service`) import it and
not each other."""

from __future__ import annotations

import click

__all__ = ["SuggestingGroup"]


class SuggestingGroup(click.Group):
    """A group that answers a mistyped command with the closest one."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """A mistyped command is answered with the closest one: `kronii stauts` -> did you mean 'status'?"""
        name = args[0] if args else ""
        if (
            name
            and not ctx.resilient_parsing
            and not name.startswith("-")
            and self.get_command(ctx, name) is None
        ):
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{hint}", ctx)
        return super().resolve_command(ctx, args)
