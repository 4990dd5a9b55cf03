"""The HintBox as the use cases see it: ports.HintSink (a write to a FIFO held open: it never
blocks) and ports.GoneShells (an unusable directory is ports.ShellFilesUnusable)."""

from __future__ import annotations

from kronii.critic.adapters.spool import HintBox
from kronii.critic.ports import ShellFilesUnusable

__all__ = ["PromptHints"]


class PromptHints:
    def __init__(self, box: HintBox) -> None:
        self._box = box

    async def send(self, session: str, line: str) -> None:
        self._box.send(session, line)

    def forget_gone(self) -> list[str]:
        try:
            return self._box.forget_gone()
        except OSError as error:
            raise ShellFilesUnusable(error.strerror or str(error)) from error
