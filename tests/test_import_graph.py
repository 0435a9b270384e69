"""No module imports, even lazily or only for type checking, a module that imports it back."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("server", "protocol", "matchmaker", "load_tests")


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    deps: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                deps.add(full if full in modules else base)
        elif isinstance(node, ast.Import):
            deps.update(alias.name for alias in node.names)
    return {d for d in deps if d in modules and d != name}


def test_there_is_no_import_cycle() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                cycles.append([*path[path.index(dep) :], dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, " ; ".join(" -> ".join(c) for c in cycles)
    assert graph.get("server.net.connection")  # the scan saw imports


# The pure core does no I/O: it takes time as an argument and never touches a socket or a store.
IO_PACKAGES = ("asyncio", "redis", "starlette", "uvicorn", "websockets", "socket", "threading")


def _all_imports(path: Path) -> set[str]:
    """Every module ``path`` names in an import statement (lazy and type-checking ones too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_core_reaches_no_io_and_no_shell() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    core = {name for name in modules if name == "server.core" or name.startswith("server.core.")}
    assert "server.core.rules.hand" in core  # the scan saw the core
    reached: set[str] = set()
    todo = list(core)
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(graph[name])
    shell = sorted(n for n in reached if n.startswith("server.") and n not in core)
    assert not shell, f"the core reaches the shell: {shell}"
    bad = sorted(
        f"{name} imports {imported}"
        for name in reached
        for imported in _all_imports(modules[name])
        if imported.split(".")[0] in IO_PACKAGES
    )
    assert not bad, "; ".join(bad)
