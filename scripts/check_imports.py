"""The import rules ``make lint`` enforces, which ruff's banned-api cannot express.

- ``adk-private``: a private ``google.adk`` name (a module path segment or an imported name
  that starts with ``_``) is imported only in ``services/common/adk/``, the one shim that the
  pinned ADK version is checked against. Everywhere else (services, tests, bench, scripts)
  imports it from there.
- ``cross-service``: a module of ``services/<x>/`` imports another service's package only
  through what that service publishes (:data:`PUBLISHED`): its gRPC client
  (``services/<y>/client.py``) and the sessions service's ADK session adapter.
  ``services/common`` is importable by every service. Tests and benchmarks may import any
  module.

Ruff's ``flake8-tidy-imports.banned-api`` bans fixed names for the whole tree: it has neither
patterns (every private ADK module would have to be listed, and a new one would pass) nor
per-package rules (``services.sessions`` is the sessions service's own package and banned for
everyone else). This script reads each file's imports with ``ast``, so a violation is found
without importing anything.

Usage: ``python scripts/check_imports.py [--root DIR] [PATH ...]``; the paths (files or
folders, relative to the root) default to :data:`DEFAULT_PATHS`. It prints one line per
violation, ``path:line: rule: message``, and exits with status 1 when there is any.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_PATHS = ("services", "tests", "bench", "scripts")
SKIPPED_PARTS = {".venv", "__pycache__", "node_modules"}

ADK = "google.adk"
ADK_SHIM = "services.common.adk"
SHARED = "common"
# What a service publishes to the others, besides its gRPC client (services.<name>.client).
PUBLISHED = {
    "services.sessions.remote_session_service",  # ADK's BaseSessionService over sessions gRPC
}
# Cross-service imports that are allowed anyway: (importing module, imported module) -> why.
# Empty: every import that crossed a service boundary now goes through a client or common.
EXCEPTIONS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True, slots=True)
class Violation:
    path: str
    line: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.message}"


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_name(path: pathlib.Path, root: pathlib.Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[int, str, str]]:
    """``(line, module, name)`` for each imported module (name empty) or imported name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ""
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, base] if base else package)
            for alias in node.names:
                yield node.lineno, base, alias.name


def _service_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "services" else None


def _adk_private(target: str) -> bool:
    parts = target.split(".")
    return parts[:2] == ["google", "adk"] and any(_is_private(part) for part in parts)


def _cross_service(source_service: str, imported: str, name: str, module: str) -> str | None:
    """The message for an import of another service's unpublished module, else None."""
    # ``from services.sessions import client`` imports the module services.sessions.client.
    if name and imported in ("services", f"services.{_service_of(imported)}"):
        imported = f"{imported}.{name}"
    target_service = _service_of(imported)
    if target_service in (None, SHARED, source_service):
        return None
    client = f"services.{target_service}.client"
    if imported == client or imported in PUBLISHED or (module, imported) in EXCEPTIONS:
        return None
    allowed = ", ".join(
        sorted({client} | {p for p in PUBLISHED if _service_of(p) == target_service})
    )
    return (
        f"services.{source_service} imports {imported}; another service's package is "
        f"reachable only through what it publishes ({allowed}) or services.common"
    )


def check_file(path: pathlib.Path, root: pathlib.Path) -> list[Violation]:
    rel = path.relative_to(root).as_posix()
    module = _module_name(path, root)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    in_shim = module == ADK_SHIM or module.startswith(ADK_SHIM + ".")
    source_service = _service_of(module)
    found: list[Violation] = []
    for line, imported, name in _imports(tree, module, path.name == "__init__.py"):
        target = f"{imported}.{name}" if name else imported
        if not in_shim and _adk_private(target):
            message = (
                f"{target} is private to google-adk; import its public path if ADK has one, "
                f"else add it to {ADK_SHIM} and import it from there"
            )
            found.append(Violation(rel, line, "adk-private", message))
        if source_service not in (None, SHARED):
            crossing = _cross_service(source_service, imported, name, module)
            if crossing:
                found.append(Violation(rel, line, "cross-service", crossing))
    return list(dict.fromkeys(found))  # one line per import, not per name imported


def python_files(paths: Iterable[pathlib.Path]) -> Iterator[pathlib.Path]:
    for path in paths:
        if path.is_file() and path.suffix == ".py":
            yield path
        elif path.is_dir():
            for file in sorted(path.rglob("*.py")):
                if not SKIPPED_PARTS & set(file.relative_to(path).parts[:-1]):
                    yield file


def check(paths: Iterable[pathlib.Path], root: pathlib.Path) -> list[Violation]:
    return [v for file in python_files(paths) for v in check_file(file, root)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("paths", nargs="*", help=f"default: {' '.join(DEFAULT_PATHS)}")
    parser.add_argument("--root", type=pathlib.Path, default=ROOT, help="the repository root")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    paths = [root / p for p in (args.paths or DEFAULT_PATHS)]
    violations = check(paths, root)
    for violation in violations:
        sys.stderr.write(f"{violation}\n")
    if violations:
        sys.stderr.write(f"import rules: {len(violations)} violation(s)\n")
        return 1
    sys.stdout.write("import rules: ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
