"""The shape of the code (issue "One shape for every service"), checked in `make lint`:

- no module over 500 lines, no function over 60 lines, no function of cyclomatic complexity over 15
  (ruff's C901) in services/ and libs/, generated code aside;
- import boundaries: a service's `core` imports no I/O library, its `api` imports none of its adapters,
  and no service imports another service.

What was already over a limit when the check arrived is listed in scripts/shape_debt.txt, with its size
then. The check fails for anything new, and for a listed item that grew; an item that is fixed must
leave the list (the check says so), so the list only shrinks.

Usage: python scripts/check_shape.py [--write-debt]
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEBT_FILE = ROOT / "scripts" / "shape_debt.txt"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_COMPLEXITY = 15
SERVICES = ("sensor", "capture", "pipeline", "scheduler", "supervisor", "broker", "critic", "vision")
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
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def boundary_findings(path: Path, tree: ast.Module) -> Iterator[tuple[str, int]]:
    name = module_name(path)
    parts = name.split(".")
    service = parts[1] if len(parts) > 1 and parts[1] in SERVICES else None
    room = parts[2] if service and len(parts) > 2 else None
    seen: set[str] = set()
    for imported in imported_modules(tree):
        top = imported.split(".")[0]
        imported_parts = imported.split(".")
        finding = None
        if room == "core" and top in IO_MODULES:
            finding = f"core imports {top}"
        elif room == "api" and imported.startswith(f"kronii.{service}.adapters"):
            finding = f"api imports {'.'.join(imported_parts[:4])}"
        elif (
            top == "kronii"
            and len(imported_parts) > 1
            and imported_parts[1] in SERVICES
            and imported_parts[1] != service
            and (len(imported_parts) < 3 or imported_parts[2] != "v1")  # generated API messages are shared
        ):
            finding = f"imports service {imported_parts[1]}"
        if finding and finding not in seen:
            seen.add(finding)
            yield f"{relative(path)} boundary: {finding}", 1


def complexity_findings(paths: list[Path]) -> Iterator[tuple[str, int]]:
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "C901", "--output-format", "json",
         "--config", f"lint.mccabe.max-complexity = {MAX_COMPLEXITY}", *map(str, paths)],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    for item in json.loads(done.stdout or "[]"):
        # "`name` is too complex (17 > 15)"
        message = item["message"]
        function = message.split("`")[1]
        value = int(message.rsplit("(", 1)[1].split(" ")[0])
        yield f"{relative(Path(item['filename']))}:{function} complexity", value


def findings() -> dict[str, int]:
    found: dict[str, int] = {}
    paths = list(source_files())
    for path in paths:
        text = path.read_text()
        tree = ast.parse(text, str(path))
        found.update(size_findings(path, tree, text))
        found.update(boundary_findings(path, tree))
    found.update(complexity_findings(paths))
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
