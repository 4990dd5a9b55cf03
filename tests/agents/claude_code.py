"""Claude Code (`@anthropic-ai/claude-code`, pinned in tests/agents/package.json) for the recipes of
tests/agents/tui_agents.py: its private config, its idle screen and its history reader.

What experiments with Claude Code 2.1.197 in tmux showed (tests/data/agents/README.md has the screens):

- Its config file is `$CLAUDE_CONFIG_DIR/.claude.json` (with CLAUDE_CONFIG_DIR set; `~/.claude.json`
  otherwise). With `hasCompletedOnboarding`, the dummy key's last 20 characters in
  `customApiKeyResponses.approved` and the project's `hasTrustDialogAccepted`, it goes straight to its
  idle input screen in about 1 s, offline. Without them it shows, in that order, the onboarding's theme
  picker (`Choose the text style ...`), the custom API key question (`Detected a custom API key in
  your environment`) and the folder trust question (`Accessing workspace:` / `Quick safety check`).
- Its onboarding starts with a connectivity check of api.anthropic.com when it would sign in with
  OAuth: offline that ends Claude Code (`Unable to connect to Anthropic services`, exit 1). With the
  API key approved it skips the check, so the theme picker shows offline too.
- With ANTHROPIC_BASE_URL on the refusing endpoint it retries the 401 ten times with a growing pause
  (`API error · Retrying in 5s · attempt 4/10`); CLAUDE_CODE_MAX_RETRIES=0 makes it end the turn at
  once (`Please run /login · API Error: 401 ...`), so the endpoint needs no change.
- It writes `$XDG_CONFIG_HOME/mimeapps.list` and `$XDG_DATA_HOME/applications/claude-code-url-handler.desktop`
  (a URL handler) at the first prompt, and `$TMPDIR/claude-<uid>`: all inside the private folder.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

from tests.agents.real_codex import DUMMY_API_KEY, plain

__all__ = [
    "CLAUDE_DIALOG_MARKERS",
    "CLAUDE_DROPPED_ENV",
    "CLAUDE_OWN_CONFIG",
    "CLAUDE_WORKING",
    "claude_history",
    "claude_idle",
    "prepare_claude_config",
]

CLAUDE_WORKING = "esc to interrupt"
PROMPT_GLYPH = "\u276f"  # U+276F, the input row's first character; also a selected choice's mark in a dialog
RULE = "\u2500" * 20  # the rules above and below the input row
CLAUDE_DIALOG_MARKERS = {
    "theme": "Choose the text style that looks best with your terminal",
    "api_key": "Detected a custom API key in your environment",
    "trust": "Is this a project you created or one you trust?",
}
# The person's own Claude Code settings, which would leak into a test's agent.
CLAUDE_DROPPED_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDECODE",
)
CLAUDE_OWN_CONFIG = (".claude", ".claude.json", ".config/mimeapps.list", ".local/share/applications")
_PASTED = re.compile(r"\[Pasted text #(\d+)(?: \+\d+ lines)?\]")


def prepare_claude_config(home: Path, project: Path, base_url: str, dialog: str | None) -> dict[str, str]:
    """Write `<home>/.claude/.claude.json` so that Claude Code starts on its idle input screen (or on
    the named first-start dialog: theme, api_key, trust); return its variables."""
    config = home / ".claude"
    config.mkdir(parents=True, exist_ok=True)
    settings: dict[str, object] = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "autoUpdates": False,
        "customApiKeyResponses": {"approved": [DUMMY_API_KEY[-20:]], "rejected": []},
        "projects": {
            str(project.resolve()): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}
        },
    }
    drop = {"theme": ("hasCompletedOnboarding", "theme"), "api_key": ("customApiKeyResponses",)}
    for key in drop.get(dialog or "", ()):
        del settings[key]
    if dialog == "trust":
        settings["projects"] = {}
    (config / ".claude.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return {
        "CLAUDE_CONFIG_DIR": str(config.resolve()),
        "ANTHROPIC_API_KEY": DUMMY_API_KEY,
        "ANTHROPIC_BASE_URL": base_url.removesuffix("/v1"),
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def claude_idle(screen: str) -> bool:
    """An empty input row (U+276F and Claude Code's drawn cursor only) between two rules, no turn
    running."""
    lines = plain(screen).splitlines()
    if CLAUDE_WORKING in plain(screen):
        return False
    for row in range(1, len(lines) - 1):
        text = lines[row].replace("\xa0", " ").strip()
        if text == PROMPT_GLYPH and lines[row - 1].startswith(RULE) and lines[row + 1].startswith(RULE):
            return True
    return False


def claude_history(config: Path) -> list[str]:
    """The prompts of `<CLAUDE_CONFIG_DIR>/history.jsonl`, oldest first, with each pasted text put back
    where the input box showed `[Pasted text #N +M lines]`."""
    path = config / "history.jsonl"
    if not path.exists():
        return []
    prompts: list[str] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        with contextlib.suppress(json.JSONDecodeError, KeyError, TypeError):
            entry = json.loads(line)
            pasted = entry.get("pastedContents") or {}

            def expand(match: re.Match[str], pasted: dict[str, dict[str, object]] = pasted) -> str:
                content = pasted.get(match.group(1), {})
                return str(content["content"]) if content.get("type") == "text" else match.group(0)

            prompts.append(_PASTED.sub(expand, str(entry["display"])))
    return prompts
