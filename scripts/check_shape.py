"""The shape of the code (issue "One shape for every service"), checked in `make lint`:

- no module over 500 lines, no function over 60 lines, no function of cyclomatic complexity over 15
  (counted as radon does: boolean operators and comprehensions count) in services/ and libs/,
  generated code aside;
- the rooms of a service (docs/architecture.md): `core` imports no I/O library and nothing of the
  project outside its own core but pure library modules; `ports` imports only its core and no wire
  type; a use case imports no adapter, no api and no wire type (`*_pb2`); `api` imports no adapter;
  no module lies loose at a service's root; no service imports another service;
- no import cycle among the project's modules, wherever the checkout is.

What was already over a limit when the check arrived is listed in scripts/shape_debt.txt, with its size
then. The check fails for anything new, and for a listed item that grew; an item that is fixed must
leave the list (the check says so), so the list only shrinks.

Usage: python scripts/check_shape.py [--write-debt]
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEBT_FILE = ROOT / "scripts" / "shape_debt.txt"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_COMPLEXITY = 15
# The rooms of a service (docs/architecture.md): anything else at a service's root is a loose module.
ROOMS = frozenset(
    {
        "core",
        "ports",
        "adapters",
        "usecases",
        "api",
        "cli",
        "v1",
        "app",
        "service",
        "settings",
        "metrics",
        "__main__",
        # The console's pages are discovered: what every page is given at start is one shared contract
        # (deps), and each page's part of the composition root (its build: adapters -> use cases) is
        # compose/<page>.py, so a page's api module never imports an adapter.
        "deps",
        "compose",
    }
)
# What a core may name beyond its own core: library modules that do no I/O.
PURE_LIBS = (
    "kronii.foundation.errors", "kronii.foundation.clock", "kronii.foundation.audit_trail", "kronii.desktop.prompt_windows",
    "kronii.edge.peers", "kronii.desktop.hold", "kronii.redaction",
)  # fmt: skip
SERVICES = ("sensor", "capture", "pipeline", "scheduler", "supervisor", "broker", "critic", "vision", "console")  # fmt: skip
# A core decides; it does not reach the world. These are the modules that would let it.
IO_MODULES = frozenset(
    {
        "asyncio", "socket", "subprocess", "httpx", "requests", "redis", "psycopg", "sqlalchemy", "nats",
        "grpc", "fastapi", "starlette", "uvicorn", "Xlib", "dbus_fast", "mss", "PIL", "pytesseract",
    }
)  # fmt: skip


def source_files() -> Iterator[Path]:
    for top in ("services", "libs"):
        for path in sorted((ROOT / top).glob("*/src/kronii/**/*.py")):
            if path.name.endswith(("_pb2.py", "_pb2_grpc.py", "_pb2.pyi")) or "/v1/" in path.as_posix():
                continue
            yield path


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def module_name(path: Path) -> str:
    # The package path starts below the project's own `src`, wherever the checkout is (a clone in a
    # folder named `kronii` must not be read as the package).
    parts = path.relative_to(ROOT).with_suffix("").parts
    name = ".".join(parts[parts.index("src") + 1 :])
    return name.removesuffix(".__init__")


def size_findings(path: Path, tree: ast.Module, text: str) -> Iterator[tuple[str, int]]:
    lines = text.count("\n") + 1
    if lines > MAX_MODULE_LINES:
        yield f"{relative(path)} module-lines", lines
    for node, qualname in functions(tree):
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length > MAX_FUNCTION_LINES:
            yield f"{relative(path)}:{qualname} function-lines", length


def functions(
    tree: ast.AST, prefix: str = ""
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, f"{prefix}{node.name}"
            yield from functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")


def imported_modules(tree: ast.Module) -> Iterator[str]:
    """Every module a file names in an import, wherever the import stands (a function, a
    TYPE_CHECKING block): a room rule holds for them all."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def room_of(name: str) -> tuple[str | None, str | None]:
    """(service, room) of a module: room is `core`, `adapters`, `usecases`, `api`, `cli`, `v1`, or the
    root module's own name (`app`, `ports`, ...)."""
    parts = name.split(".")
    if len(parts) < 3 or parts[1] not in SERVICES:
        return (parts[1] if len(parts) > 1 and parts[1] in SERVICES else None), None
    return parts[1], parts[2]


def _is_wire(imported: str) -> bool:
    parts = imported.split(".")
    return parts[0] == "kronii" and (
        "v1" in parts[1:3] or any(part.endswith(("_pb2", "_pb2_grpc")) for part in parts)
    )


def _own(imported: str, service: str, *rooms: str) -> bool:
    return any(imported == f"kronii.{service}.{room}" or imported.startswith(f"kronii.{service}.{room}.")
               for room in rooms)  # fmt: skip


def room_finding(service: str, room: str, imported: str) -> str | None:
    """What the rules of docs/architecture.md ("The rooms of a service") say of one import."""
    top = imported.split(".")[0]
    if room == "core":
        if top in IO_MODULES:
            return f"core imports {top}"
        if top == "kronii" and not _own(imported, service, "core") and not imported.startswith(PURE_LIBS):
            return f"core imports {_short(imported)}"
    elif room == "ports":
        if _is_wire(imported):
            return f"ports import {_short(imported)}"
        if imported.startswith(f"kronii.{service}.") and not _own(imported, service, "core"):
            return f"ports import {_short(imported)}"
    elif room == "usecases":
        if _is_wire(imported) or _own(imported, service, "adapters", "api"):
            return f"use case imports {_short(imported)}"
    elif room == "api" and _own(imported, service, "adapters"):
        return f"api imports {_short(imported)}"
    return None


def _short(imported: str) -> str:
    return ".".join(imported.split(".")[:5])


def boundary_findings(path: Path, tree: ast.Module) -> Iterator[tuple[str, int]]:
    name = module_name(path)
    service, room = room_of(name)
    seen: set[str] = set()
    if service and room and room not in ROOMS and path.name != "__init__.py":
        seen.add("loose")
        yield f"{relative(path)} boundary: a loose module at the service's root (it belongs in a room)", 1
    for imported in imported_modules(tree):
        imported_parts = imported.split(".")
        finding = room_finding(service, room, imported) if service and room else None
        if (
            finding is None
            and imported_parts[0] == "kronii"
            and len(imported_parts) > 1
            and imported_parts[1] in SERVICES
            and imported_parts[1] != service
            and not _is_wire(imported)  # generated API messages are shared
        ):
            finding = f"imports service {imported_parts[1]}"
        if finding and finding not in seen:
            seen.add(finding)
            yield f"{relative(path)} boundary: {finding}", 1


def module_imports(tree: ast.Module, known: set[str]) -> set[str]:
    """The project's modules a file imports, wherever the import stands (a function, a TYPE_CHECKING
    block: an import deferred to break a cycle is still a tie), each resolved to the module it names."""
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                     for alias in node.names]  # fmt: skip
        found.update(name for name in names if name in known)
    return found


def cycle_findings(trees: dict[str, tuple[Path, ast.Module]]) -> Iterator[tuple[str, int]]:
    """Every import cycle among the project's modules (a package's face, its __init__, counts as
    the package): one finding per strongly connected group, named by its members."""
    known = set(trees)
    graph = {name: module_imports(tree, known) - {name} for name, (_, tree) in trees.items()}
    for group in strongly_connected(graph):
        if len(group) > 1:
            yield f"cycle: {' <-> '.join(sorted(group))}", len(group)
    # The library packages (kronii.foundation, kronii.stores, ...) stand in layers too: no two of them
    # may need each other, even through different modules.
    packages: dict[str, set[str]] = {}
    for name, imports in graph.items():
        package = ".".join(name.split(".")[:2])
        packages.setdefault(package, set()).update(".".join(i.split(".")[:2]) for i in imports)
    for group in strongly_connected({name: deps - {name} for name, deps in packages.items()}):
        if len(group) > 1:
            yield f"package cycle: {' <-> '.join(sorted(group))}", len(group)


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iterative (the graph has a few thousand modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                groups.append(group)
    return groups


def complexity(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Cyclomatic complexity as radon counts it: 1, plus one per branch (if, loop, except, case,
    conditional expression, comprehension filter, assert) and one per extra operand of a boolean
    operator (`a and b or c` is two decisions). Nested functions count on their own."""
    count = 1
    for child in _own_nodes(node):
        if isinstance(child, ast.For | ast.AsyncFor | ast.While):
            count += 1 + bool(child.orelse)
        elif isinstance(child, ast.If | ast.IfExp | ast.ExceptHandler | ast.Assert | ast.match_case):
            count += 1
        elif isinstance(child, ast.BoolOp):
            count += len(child.values) - 1
        elif isinstance(child, ast.comprehension):
            count += 1 + len(child.ifs)
    return count


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        yield child
        yield from _own_nodes(child)


def complexity_findings(path: Path, tree: ast.Module) -> Iterator[tuple[str, int]]:
    for node, qualname in functions(tree):
        value = complexity(node)
        if value > MAX_COMPLEXITY:
            yield f"{relative(path)}:{qualname} complexity", value


def findings() -> dict[str, int]:
    found: dict[str, int] = {}
    trees: dict[str, tuple[Path, ast.Module]] = {}
    for path in source_files():
        text = path.read_text()
        tree = ast.parse(text, str(path))
        trees[module_name(path)] = (path, tree)
        found.update(size_findings(path, tree, text))
        found.update(boundary_findings(path, tree))
        found.update(complexity_findings(path, tree))
    found.update(cycle_findings(trees))
    return found


def read_debt() -> dict[str, int]:
    debt: dict[str, int] = {}
    if DEBT_FILE.exists():
        for line in DEBT_FILE.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, value = line.rpartition(" = ")
                debt[key] = int(value)
    return debt


def write_debt(found: dict[str, int]) -> None:
    header = "# Over a limit of scripts/check_shape.py when the check arrived: may shrink, never grow.\n"
    DEBT_FILE.write_text(header + "".join(f"{key} = {found[key]}\n" for key in sorted(found)))


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write-debt", action="store_true", help="record today's findings as the debt")
    args = parser.parse_args()
    found = findings()
    if args.write_debt:
        write_debt(found)
        print(f"check_shape: {len(found)} items recorded in {relative(DEBT_FILE)}")
        return 0
    debt = read_debt()
    problems = [
        f"{key}: {value} (limit exceeded)"
        if key not in debt
        else f"{key}: {value}, was {debt[key]} (it grew)"
        for key, value in sorted(found.items())
        if key not in debt or value > debt[key]
    ]
    problems += [
        f"{key}: fixed; remove it from {relative(DEBT_FILE)}" for key in sorted(debt) if key not in found
    ]
    for problem in problems:
        print(f"check_shape: {problem}", file=sys.stderr)
    print(f"check_shape: {len(problems)} problems; {len(debt)} items of recorded debt left")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
