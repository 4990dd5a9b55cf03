"""What a window is about, from its WM_CLASS and title alone: the page of a browser, the file of
an IDE or editor, the meeting of a meeting app, the directory of a terminal.

Pure string work, no guessing beyond the title: a field that is not in the title stays empty and
the confidence says how much of the expected shape was found. Titles are raw here; redaction
happens later in the round (Redacting), as for every other piece of context.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType


class ContextKind(StrEnum):
    BROWSER = "browser"
    IDE = "ide"
    MEETING = "meeting"
    TERMINAL = "terminal"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class WindowContext:
    """`app` is a stable id ("firefox", "vscode", "zoom", ...); `artifact` the page title, file or
    meeting name; `detail` named extras (domain, project, path, language, cwd, command, editor)."""

    kind: ContextKind
    app: str
    artifact: str = ""
    detail: Mapping[str, str] = field(default_factory=dict)
    confidence: float = 0.0

    @property
    def has_artifact(self) -> bool:
        return bool(self.artifact)


LANGUAGES: Mapping[str, str] = MappingProxyType(
    {
        "py": "python", "pyi": "python", "rs": "rust", "go": "go", "kt": "kotlin", "kts": "kotlin",
        "java": "java", "js": "javascript", "mjs": "javascript", "ts": "typescript", "tsx": "typescript",
        "jsx": "javascript", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "hpp": "cpp", "cs": "csharp",
        "rb": "ruby", "php": "php", "swift": "swift", "scala": "scala", "sh": "shell", "bash": "shell",
        "zsh": "shell", "sql": "sql", "md": "markdown", "rst": "restructuredtext", "toml": "toml",
        "yaml": "yaml", "yml": "yaml", "json": "json", "html": "html", "css": "css", "lua": "lua",
        "proto": "protobuf", "tf": "terraform", "ex": "elixir", "exs": "elixir", "hs": "haskell",
        "ml": "ocaml", "dart": "dart", "vue": "vue", "svelte": "svelte", "zig": "zig", "nix": "nix",
    }
)  # fmt: skip

# Site names browsers show at the end of a page title, and the domain they stand for.
_SITES: Mapping[str, str] = MappingProxyType(
    {
        "github": "github.com", "gitlab": "gitlab.com", "stack overflow": "stackoverflow.com",
        "youtube": "youtube.com", "gmail": "mail.google.com", "google docs": "docs.google.com",
        "google sheets": "docs.google.com", "google calendar": "calendar.google.com",
        "jira": "atlassian.net", "confluence": "atlassian.net", "wikipedia": "wikipedia.org",
        "reddit": "reddit.com", "slack": "slack.com", "notion": "notion.so", "linear": "linear.app",
    }
)  # fmt: skip

_BROWSERS: Mapping[str, tuple[str, tuple[str, ...]]] = MappingProxyType(
    {
        # wm_class fragment -> (app id, title suffixes the browser appends)
        "firefox": ("firefox", ("Mozilla Firefox", "Firefox")),
        "librewolf": ("librewolf", ("LibreWolf",)),
        "google-chrome": ("chrome", ("Google Chrome",)),
        "chromium": ("chromium", ("Chromium",)),
        "brave": ("brave", ("Brave",)),
        "microsoft-edge": ("edge", ("Microsoft Edge", "Microsoft\u200b Edge")),
        "vivaldi": ("vivaldi", ("Vivaldi",)),
    }
)
_TERMINALS = (
    "gnome-terminal", "kitty", "alacritty", "xterm", "konsole", "foot", "wezterm", "tilix",
    "terminator", "urxvt", "xfce4-terminal", "ptyxis", "ghostty", "st-256color",
)  # fmt: skip

# Any separator a title uses between its parts: hyphen, em dash, en dash, bar or middle dot, spaced.
_SEP = r"\s[-\u2014\u2013|\u00b7]\s"
_DOMAIN = re.compile(
    r"\b((?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|app|edu|gov|co|de|uk|so|ai))\b", re.IGNORECASE
)
_REPO = re.compile(r"\b([\w.-]+/[\w.-]+)\b")
_REFERENCE = re.compile(r"(?<![\w&])#\d+\b")
_FILE = re.compile(r"^[\w.@+-]*\.(\w{1,6})$")
_DIRTY = re.compile(r"^[\u25cf*]\s*")  # VS Code's "● " and other editors' "*" unsaved markers


def _split(title: str) -> list[str]:
    return [part.strip() for part in re.split(_SEP, title) if part.strip()]


def _language(file_name: str) -> str:
    match = _FILE.match(file_name.rsplit("/", 1)[-1])
    return LANGUAGES.get(match.group(1).lower(), "") if match else ""


def _strip_suffix(title: str, suffixes: tuple[str, ...]) -> str:
    for suffix in suffixes:
        match = re.search(_SEP + re.escape(suffix) + r"$", title)
        if match:
            return title[: match.start()].strip()
    return title.strip()


# ---- meetings ---------------------------------------------------------------------------------


def _meeting(app: str, name: str, confidence: float) -> WindowContext:
    return WindowContext(ContextKind.MEETING, app, name, {}, confidence if name else 0.4)


def _google_meet(page: str) -> WindowContext | None:
    # "Meet - abc-defg-hij", "Meet \u2013 Weekly sync", "Weekly sync - Google Meet"
    match = re.match(r"^(?:Google\s)?Meet" + _SEP + r"(.+)$", page) or re.match(
        r"^(.+?)" + _SEP + r"Google Meet$", page
    )
    if match:
        return _meeting("google-meet", match.group(1).strip(), 0.8)
    if page in ("Meet", "Google Meet"):
        return _meeting("google-meet", "", 0.0)
    return None


def _jitsi(page: str) -> WindowContext | None:
    match = re.match(r"^(.+?)" + _SEP + r"Jitsi Meet$", page)
    if match:
        return _meeting("jitsi", match.group(1).strip(), 0.8)
    return _meeting("jitsi", "", 0.0) if page == "Jitsi Meet" else None


def _zoom(title: str) -> WindowContext:
    # Zoom names its windows "Zoom Meeting", "Zoom Workplace", "Zoom - Free Account" (no meeting name)
    # or, for a named webinar/meeting, "<topic> - Zoom".
    generic = re.match(r"^Zoom(\s(Meeting|Workplace|Webinar|Cloud Meetings))?(" + _SEP + r".*)?$", title)
    if generic:
        return _meeting("zoom", "", 0.0)
    match = re.match(r"^(.+?)" + _SEP + r"Zoom(\sMeeting)?$", title)
    return _meeting("zoom", match.group(1).strip() if match else title.strip(), 0.7 if match else 0.5)


def _teams(title: str) -> WindowContext:
    # "Meeting with Ana | Microsoft Teams", "Weekly sync | Meeting | Microsoft Teams", "Chat | Microsoft Teams"
    parts = _split(re.sub(r"\s[|\u2014-]\s(Microsoft Teams|Teams)(\s\(.*\))?$", "", title))
    meeting_like = bool(parts) and (
        any(part.lower() in ("meeting", "call") for part in parts) or parts[0].lower().startswith("meeting")
    )
    generic = {"chat", "calendar", "activity", "teams", "calls", "files", "microsoft teams"}
    name = next((p for p in parts if p.lower() not in generic | {"meeting", "call"}), "")
    if not meeting_like:
        return WindowContext(ContextKind.MEETING, "teams", "", {"view": parts[0] if parts else ""}, 0.3)
    return _meeting("teams", name, 0.8)


# ---- browsers ---------------------------------------------------------------------------------


def _browser(app: str, suffixes: tuple[str, ...], title: str) -> WindowContext:
    page = _strip_suffix(title, suffixes)
    meeting = _google_meet(page) or _jitsi(page)
    if meeting is not None:
        return WindowContext(
            meeting.kind, meeting.app, meeting.artifact, {"browser": app}, meeting.confidence
        )
    detail = _page_detail(page)
    if not page:
        return WindowContext(ContextKind.BROWSER, app, "", detail, 0.2)
    return WindowContext(
        ContextKind.BROWSER, app, page, detail, 0.9 if detail.keys() & {"domain", "repository"} else 0.7
    )


def _page_detail(page: str) -> dict[str, str]:
    """What a browser page's title tells: the site and its domain, a repository, an issue or PR reference."""
    detail: dict[str, str] = {}
    parts = _split(page)
    if len(parts) > 1 and parts[-1].lower() in _SITES:
        detail["site"] = parts[-1]
        detail["domain"] = _SITES[parts[-1].lower()]
    domain = _DOMAIN.search(page)
    if domain and "domain" not in detail:
        detail["domain"] = domain.group(1).lower()
    repo = _repository(parts, page, detail.get("domain"))
    if repo:
        detail["repository"] = repo
    reference = _REFERENCE.search(page)
    if reference:
        detail["reference"] = reference.group(0)
    return detail


def _repository(parts: list[str], page: str, domain: str | None) -> str | None:
    """The "owner/repo" a page title names: a part of its own ("Pull request #12 · org/repo"), or anywhere in
    the title of a GitHub or GitLab page."""
    repo = next((part for part in parts if _REPO.fullmatch(part)), None)
    if repo is None and domain in ("github.com", "gitlab.com"):
        found = _REPO.search(page)
        repo = found.group(1) if found else None
    return repo


# ---- IDEs, editors, terminals -----------------------------------------------------------------


def _file_context(app: str, file_part: str, project: str, confidence: float, **extra: str) -> WindowContext:
    file_part = _DIRTY.sub("", file_part).strip()
    file_name = file_part.rsplit("/", 1)[-1]
    detail = {key: value for key, value in extra.items() if value}
    if project:
        detail["project"] = project
    if "/" in file_part:
        detail["path"] = file_part
    language = _language(file_name)
    if language:
        detail["language"] = language
    if not _FILE.match(file_name):
        # "Welcome", "Settings", "Extension: Python": the editor shows no file.
        return WindowContext(ContextKind.IDE, app, "", {**detail, "view": file_part}, 0.3)
    return WindowContext(ContextKind.IDE, app, file_name, detail, confidence)


def _vscode(title: str) -> WindowContext:
    # "● main.py - kronii - Visual Studio Code", "main.py - kronii [WSL] - Visual Studio Code"
    parts = _split(_strip_suffix(title, ("Visual Studio Code", "Code - OSS", "VSCodium", "Cursor")))
    if not parts:
        return WindowContext(ContextKind.IDE, "vscode", "", {}, 0.2)
    project = re.sub(r"\s\[.*\]$", "", parts[1]) if len(parts) > 1 else ""
    return _file_context("vscode", parts[0], project, 0.9 if project else 0.7)


def _jetbrains(product: str, title: str) -> WindowContext:
    # JetBrains separates with an en dash: "kronii \u2013 main.kt", "kronii [~/src/kronii] \u2013 \u2026/core/Main.kt"
    parts = _split(title)
    project = re.sub(r"\s\[.*\]$", "", parts[0]) if parts else ""
    if len(parts) < 2:
        return WindowContext(ContextKind.IDE, product, "", {"project": project} if project else {}, 0.4)
    file_part = re.sub(r"\s\[.*\]$", "", parts[-1]).lstrip("\u2026.")
    return _file_context(product, file_part.lstrip("/"), project, 0.9)


def _sublime(title: str) -> WindowContext:
    # "main.py (kronii) - Sublime Text", "~/src/kronii/main.py • - Sublime Text"
    page = re.sub(r"\s\u2022$", "", _strip_suffix(title, ("Sublime Text",)))
    match = re.match(r"^(.+?)\s\((.+)\)$", page)
    file_part, project = (match.group(1), match.group(2)) if match else (page, "")
    return _file_context("sublime", file_part, project, 0.85 if project else 0.7)


_VIM = (
    # "main.py + (~/src/kronii) - NVIM", "main.py (~/src/kronii) - VIM"
    re.compile(r"^(?P<file>\S+?)(?:\s[+=-]+)?\s\((?P<dir>[^)]*)\)" + _SEP + r"(?P<editor>N?VIM)\d*$"),
    # "nvim main.py", "vim ~/src/kronii/main.py", "vi notes.md"
    re.compile(r"^(?P<editor>n?vim?|hx|helix|nano|micro|emacs\s-nw)\s+(?P<file>\S+)$"),
)
_USER_AT_HOST = re.compile(r"^(?:[\w.-]+@[\w.-]+)\s?:\s?(?P<cwd>[~/][^\s]*)(?:\s*[$#%]?\s*(?P<command>.*))?$")
_CWD_COMMAND = re.compile(r"^(?P<cwd>[~/][^\s:]*)\s?:\s?(?P<command>.+)$")


def _terminal(app: str, title: str) -> WindowContext:
    for pattern in _VIM:
        match = pattern.match(title.strip())
        if match:
            groups = match.groupdict()
            editor = groups["editor"].lower().split()[0]
            file_part = groups["file"]
            directory = groups.get("dir") or ""
            path = f"{directory.rstrip('/')}/{file_part}" if directory and "/" not in file_part else ""
            context = _file_context(editor, file_part, "", 0.85, terminal=app)
            if path and context.has_artifact:
                return WindowContext(
                    context.kind, context.app, context.artifact, {**context.detail, "path": path}, 0.85
                )
            return context
    match = _USER_AT_HOST.match(title.strip()) or _CWD_COMMAND.match(title.strip())
    if match:
        cwd, command = match.group("cwd"), (match.group("command") or "").strip()
        detail = {"cwd": cwd, **({"command": command} if command else {})}
        return WindowContext(ContextKind.TERMINAL, app, cwd, detail, 0.8)
    return WindowContext(
        ContextKind.TERMINAL, app, "", {"command": title.strip()} if title.strip() else {}, 0.3
    )


def _emacs(title: str) -> WindowContext:
    # "main.py - GNU Emacs at host", "main.py"
    page = re.sub(r"\s-\sGNU Emacs(\sat\s\S+)?$", "", title).strip()
    return _file_context("emacs", page, "", 0.75)


_IDE_CLASSES: Mapping[str, Callable[[str], WindowContext]] = MappingProxyType(
    {
        "code": _vscode,
        "code-oss": _vscode,
        "vscodium": _vscode,
        "cursor": _vscode,
        "sublime_text": _sublime,
        "emacs": _emacs,
    }
)


def _normalize_class(wm_class: str) -> str:
    # X11 WM_CLASS comes as "instance.Class" or just one of the two, in any case.
    return wm_class.strip().lower().replace(" ", "-")


def extract_window_context(wm_class: str, title: str) -> WindowContext:
    """The context of a window, from its WM_CLASS (instance or class name) and title."""
    cls = _normalize_class(wm_class)
    title = title.strip()
    names = set(cls.split("."))
    for fragment, (app, suffixes) in _BROWSERS.items():
        if fragment in cls:
            return _browser(app, suffixes, title)
    if cls.startswith("jetbrains-"):
        return _jetbrains(cls.removeprefix("jetbrains-").split(".")[0], title)
    for name, extractor in _IDE_CLASSES.items():
        if name in names:
            return extractor(title)
    if "zoom" in cls:
        return _zoom(title)
    if "teams" in cls:
        return _teams(title)
    if "jitsi" in cls:
        return _jitsi(title) or _meeting("jitsi", "", 0.0)
    terminal = next((name for name in _TERMINALS if name in cls), None)
    if terminal is not None:
        return _terminal(terminal, title)
    return WindowContext(ContextKind.OTHER, cls.split(".")[-1], "", {}, 0.0)
