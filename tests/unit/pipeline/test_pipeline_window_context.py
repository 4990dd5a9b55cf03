"""Window-context extractors: real-looking WM_CLASS/title pairs per app family."""

from __future__ import annotations

import pytest
from kronii.pipeline.core.window_context import ContextKind, extract_window_context

B, IDE, M, T = ContextKind.BROWSER, ContextKind.IDE, ContextKind.MEETING, ContextKind.TERMINAL


@pytest.mark.parametrize(
    ("wm_class", "title", "app", "artifact", "detail"),
    [
        ("Navigator.firefox", "Pull request #12 · org/repo - Mozilla Firefox", "firefox", "Pull request #12 · org/repo", {"repository": "org/repo", "reference": "#12"}),
        ("google-chrome.Google-chrome", "Fix flaky test · Pull Request #431 · kronii/kronii · GitHub - Google Chrome", "chrome", "Fix flaky test · Pull Request #431 · kronii/kronii · GitHub", {"domain": "github.com", "repository": "kronii/kronii"}),
        ("firefox", "python - How to sort a dict - Stack Overflow \u2014 Mozilla Firefox", "firefox", "python - How to sort a dict - Stack Overflow", {"domain": "stackoverflow.com"}),
        ("chromium.Chromium", "docs.python.org/3/library/re.html - Chromium", "chromium", "docs.python.org/3/library/re.html", {"domain": "docs.python.org"}),
        ("brave-browser.Brave-browser", "Release notes - Brave", "brave", "Release notes", {}),
    ],
)  # fmt: skip
def test_browser_page_title_site_and_domain(
    wm_class: str, title: str, app: str, artifact: str, detail: dict[str, str]
) -> None:
    context = extract_window_context(wm_class, title)
    assert (context.kind, context.app, context.artifact) == (B, app, artifact)
    assert detail.items() <= context.detail.items()
    assert context.confidence > 0.5


@pytest.mark.parametrize(
    ("wm_class", "title", "app", "artifact", "detail"),
    [
        ("code.Code", "\u25cf main.py - kronii - Visual Studio Code", "vscode", "main.py", {"project": "kronii", "language": "python"}),
        ("code", "router.rs - engine [WSL: Ubuntu] - Visual Studio Code", "vscode", "router.rs", {"project": "engine", "language": "rust"}),
        ("jetbrains-idea", "kronii \u2013 Main.kt", "idea", "Main.kt", {"project": "kronii", "language": "kotlin"}),
        ("jetbrains-pycharm.jetbrains-pycharm", "kronii [~/src/kronii] \u2013 \u2026/core/machine.py", "pycharm", "machine.py", {"project": "kronii", "path": "core/machine.py"}),
        ("kitty", "nvim main.go", "nvim", "main.go", {"terminal": "kitty", "language": "go"}),
        ("gnome-terminal-server.Gnome-terminal", "app.ts + (~/src/web) - NVIM", "nvim", "app.ts", {"path": "~/src/web/app.ts", "language": "typescript"}),
        ("Alacritty", "vim ~/notes/todo.md", "vim", "todo.md", {"path": "~/notes/todo.md", "language": "markdown"}),
        ("sublime_text.Sublime_text", "main.py (kronii) - Sublime Text", "sublime", "main.py", {"project": "kronii"}),
    ],
)  # fmt: skip
def test_ide_and_editor_file_project_and_language(
    wm_class: str, title: str, app: str, artifact: str, detail: dict[str, str]
) -> None:
    context = extract_window_context(wm_class, title)
    assert (context.kind, context.app, context.artifact) == (IDE, app, artifact)
    assert detail.items() <= context.detail.items()


def test_ide_without_a_file_has_no_artifact_and_low_confidence() -> None:
    context = extract_window_context("code", "Welcome - Visual Studio Code")
    assert context.kind is IDE and context.artifact == "" and context.confidence < 0.5


@pytest.mark.parametrize(
    ("wm_class", "title", "app", "artifact"),
    [
        ("zoom", "Weekly sync - Zoom", "zoom", "Weekly sync"),
        ("zoom", "Zoom Meeting", "zoom", ""),
        ("teams-for-linux", "Weekly sync | Meeting | Microsoft Teams", "teams", "Weekly sync"),
        (
            "Navigator.firefox",
            "Meet \u2013 abc-defg-hij \u2014 Mozilla Firefox",
            "google-meet",
            "abc-defg-hij",
        ),
        ("google-chrome", "Design review - Google Meet - Google Chrome", "google-meet", "Design review"),
        ("firefox", "Standup | Jitsi Meet - Mozilla Firefox", "jitsi", "Standup"),
    ],
)
def test_meeting_name_from_meeting_apps(wm_class: str, title: str, app: str, artifact: str) -> None:
    context = extract_window_context(wm_class, title)
    assert (context.kind, context.app, context.artifact) == (M, app, artifact)


def test_teams_chat_view_is_not_a_named_meeting() -> None:
    context = extract_window_context("teams-for-linux", "Chat | Microsoft Teams")
    assert context.kind is M and context.artifact == "" and context.confidence < 0.5


@pytest.mark.parametrize(
    ("wm_class", "title", "cwd", "command"),
    [
        ("gnome-terminal-server", "ana@box: ~/src/kronii", "~/src/kronii", ""),
        ("konsole", "~/src/kronii : make test", "~/src/kronii", "make test"),
        ("xterm", "root@db1:/var/log", "/var/log", ""),
    ],
)
def test_terminal_cwd_and_command(wm_class: str, title: str, cwd: str, command: str) -> None:
    context = extract_window_context(wm_class, title)
    assert context.kind is T and context.artifact == cwd
    assert context.detail.get("command", "") == command


def test_unknown_app_is_other_without_artifact() -> None:
    context = extract_window_context("org.gnome.Calculator", "Calculator")
    assert context.kind is ContextKind.OTHER and not context.has_artifact and context.confidence == 0
