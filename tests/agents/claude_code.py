"""Claude Code (`@anthropic-ai/claude-code`) and opencode (`opencode-ai`), pinned in
tests/agents/package.json, for the recipes of tests/agents/tui_agents.py: their private config, their
idle screen and their history reader.

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
    "OPENCODE_DROPPED_ENV",
    "OPENCODE_OWN_CONFIG",
    "claude_history",
    "claude_idle",
    "opencode_history",
    "opencode_idle",
    "prepare_claude_config",
    "prepare_opencode_config",
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


# ---------------------------------------------------------------- opencode
#
# What experiments with opencode 1.18.33 in tmux showed: a full-screen TUI (alternate screen). Its
# config is `$XDG_CONFIG_HOME/opencode/opencode.json`; a provider of its own (`@ai-sdk/openai-compatible`,
# built in) on the refusing endpoint makes it start offline on its home screen (a logo, a box `┃` with a
# random placeholder `Ask anything… "Fix a TODO in the codebase"`, `Build · refuse kronii` under it,
# `tab agents  ctrl+p commands`) in 5-10 s, no dialog. At start it runs `npm install @opencode-ai/plugin`
# into its config folder in the background: with npm's registry set to a closed loopback port that
# fails at once (a warning in its log), and nothing is fetched. Keys typed before the TUI is up are lost.
# After a prompt it shows the session (the prompt, `esc interrupt` while it runs, then the endpoint's
# `kronii test endpoint: no model here`), the box empty at the bottom. Its prompt history is
# `$XDG_STATE_HOME/opencode/prompt-history.jsonl` ({"input": ..., "parts": [], "mode": "normal"}),
# written when a prompt is submitted.

OPENCODE_WORKING = "esc interrupt"
OPENCODE_READY = "ctrl+p commands"
OPENCODE_PLACEHOLDER = "Ask anything\u2026"
OPENCODE_DROPPED_ENV = (
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_DIR",
    "OPENCODE_CONFIG_CONTENT",
    "OPENCODE_API_KEY",
)
OPENCODE_OWN_CONFIG = (
    ".config/opencode",
    ".local/share/opencode",
    ".local/state/opencode",
    ".cache/opencode",
)


def prepare_opencode_config(config_home: Path, base_url: str) -> dict[str, str]:
    """Write `<XDG_CONFIG_HOME>/opencode/opencode.json` with a model on the refusing endpoint; return
    its variables (npm's registry closed, so its background plugin install fails at once)."""
    config = config_home / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    settings = {
        "autoupdate": False,
        "share": "disabled",
        "model": "kronii/refuse",
        "small_model": "kronii/refuse",
        "provider": {
            "kronii": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "kronii",
                "options": {"baseURL": base_url, "apiKey": DUMMY_API_KEY},
                "models": {"refuse": {"name": "refuse"}},
            }
        },
    }
    (config / "opencode.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return {
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_offline": "true",
    }


def opencode_idle(screen: str) -> bool:
    """Its footer (`ctrl+p commands`), no turn running, and its input box (the `┃` rows above
    `Build · <model>`) empty or showing the placeholder."""
    text = plain(screen)
    if OPENCODE_READY not in text or OPENCODE_WORKING in text:
        return False
    lines = text.splitlines()
    mode = next((n for n in range(len(lines) - 1, -1, -1) if "\u2503  Build \u00b7 " in lines[n]), None)
    if mode is None:
        return False
    row = mode - 1
    while row >= 0 and lines[row].strip().startswith("\u2503"):
        content = lines[row].strip().removeprefix("\u2503").strip()
        if content and not content.startswith(OPENCODE_PLACEHOLDER):
            return False
        row -= 1
    return True


def opencode_history(state_home: Path) -> list[str]:
    """The prompts of `<XDG_STATE_HOME>/opencode/prompt-history.jsonl`, oldest first."""
    path = state_home / "opencode" / "prompt-history.jsonl"
    if not path.exists():
        return []
    prompts: list[str] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        with contextlib.suppress(json.JSONDecodeError, KeyError, TypeError):
            prompts.append(str(json.loads(line)["input"]))
    return prompts
