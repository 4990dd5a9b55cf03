"""What a person probably meant when a command was not found: a close name among the programs they
use and the ones on PATH (edit distance), and the Debian package of a well-known tool."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["PACKAGES", "Package", "close_command", "debian_package", "edit_distance"]


@dataclass(frozen=True)
class Package:
    name: str
    binary: str  # what Debian calls the command, when it renamed it (fd -> fdfind)


def _same(*names: str) -> dict[str, Package]:
    return {name: Package(name, name) for name in names}


# Commands people type, and the Debian package that has them.
PACKAGES: dict[str, Package] = {
    "rg": Package("ripgrep", "rg"),
    "fd": Package("fd-find", "fdfind"),
    "fdfind": Package("fd-find", "fdfind"),
    "bat": Package("bat", "batcat"),
    "ag": Package("silversearcher-ag", "ag"),
    "http": Package("httpie", "http"),
    "pip": Package("python3-pip", "pip"),
    "pip3": Package("python3-pip", "pip3"),
    "python": Package("python-is-python3", "python"),
    "node": Package("nodejs", "node"),
    "go": Package("golang-go", "go"),
    "javac": Package("default-jdk", "javac"),
    "java": Package("default-jre", "java"),
    "convert": Package("imagemagick", "convert"),
    "7z": Package("p7zip-full", "7z"),
    "nc": Package("netcat-openbsd", "nc"),
    "ifconfig": Package("net-tools", "ifconfig"),
    "netstat": Package("net-tools", "netstat"),
    "dig": Package("dnsutils", "dig"),
    "nslookup": Package("dnsutils", "nslookup"),
    "ping": Package("iputils-ping", "ping"),
    "ip": Package("iproute2", "ip"),
    "ss": Package("iproute2", "ss"),
    "docker": Package("docker.io", "docker"),
    "psql": Package("postgresql-client", "psql"),
    "mysql": Package("default-mysql-client", "mysql"),
    "redis-cli": Package("redis-tools", "redis-cli"),
    "nvim": Package("neovim", "nvim"),
    "gcc": Package("build-essential", "gcc"),
    "make": Package("build-essential", "make"),
    "g++": Package("build-essential", "g++"),
    "cargo": Package("cargo", "cargo"),
    "rustc": Package("rustc", "rustc"),
    **_same(
        "jq",
        "tree",
        "htop",
        "tmux",
        "curl",
        "wget",
        "git",
        "unzip",
        "zip",
        "ffmpeg",
        "sqlite3",
        "shellcheck",
        "fzf",
        "ncdu",
        "vim",
        "rsync",
        "strace",
        "lsof",
        "pv",
        "xclip",
        "xdotool",
        "whois",
        "traceroute",
        "npm",
        "gh",
        "yq",
        "cmake",
        "zsh",
        "fish",
        "tldr",
    ),
}


def debian_package(command: str) -> Package | None:
    return PACKAGES.get(command)


def edit_distance(first: str, second: str) -> int:
    """Levenshtein distance, with a swap of two neighbours counted as one edit (`gti` -> `git`)."""
    rows = [list(range(len(second) + 1))]
    for i, left in enumerate(first, 1):
        row = [i]
        for j, right in enumerate(second, 1):
            cost = 0 if left == right else 1
            best = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and left == second[j - 2] and first[i - 2] == right:
                best = min(best, rows[-2][j - 2] + 1)
            row.append(best)
        rows.append(row)
    return rows[-1][-1]


def close_command(missing: str, used: Iterable[str], on_path: Iterable[str]) -> str | None:
    """The closest name within reach (one edit for short names, two for longer ones); at equal
    distance the one the person ran successfully more often wins, then a-z."""
    reach = 1 if len(missing) <= 4 else 2
    uses: dict[str, int] = {}
    for name in used:
        uses[name] = uses.get(name, 0) + 1
    candidates = set(uses) | set(on_path)
    candidates.discard(missing)
    best: tuple[int, int, str] | None = None
    for name in candidates:
        if abs(len(name) - len(missing)) > reach:
            continue
        distance = edit_distance(missing, name)
        if distance > reach:
            continue
        rank = (distance, -uses.get(name, 0), name)
        if best is None or rank < best:
            best = rank
    return best[2] if best else None
