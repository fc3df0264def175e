"""Issue 35: the package's layers, checked from its own imports.

Every module of ``jitctx`` is imported (each package imports cleanly on its
own), and its imports are read from its source: module level, inside
functions (the lazy ones) and under ``TYPE_CHECKING`` alike. The layers run
one way, bottom to top, as ``LAYERS`` lists them (docs/design.md, "Map of the
code"): a module imports only from its own layer or below, never a layer
above; there is no cycle between modules; and no module-level mutable object
(one that its module changes after import) is reached from another layer,
nor does any module assign to another module's attributes (no
``sys.stdout = ...``, no ``other.NAME = ...``).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import jitctx

PACKAGE = Path(jitctx.__file__).resolve().parent

# bottom to top; a top-level module or a package (all its modules) per entry
LAYERS: list[set[str]] = [
    {"errors", "refs", "cancel", "call", "procs"},  # values and process plumbing: stdlib only
    {"text", "cache"},  # lines, globs, redaction, a hint's call syntax; the cache folder and its SQLite files
    {"query", "render", "tokens"},  # checked input, output, token counts
    {"repo"},  # git, listing, the universe, the policy
    {"primitives"},  # glob, grep, head/tail and their engines
    {"code"},  # tree-sitter, the on-disk index, a workspace's index and its build
    {"preload"},  # governing files, the prefix, just-in-time delivery, rule formats
    {"locate"},  # a task's files and regions
    {"session"},  # the Workspace facade, ledger, re-reads, notes, watching
    {"window"},  # sources, assemble, compact, a window for a task
    {"adapters"},  # tools, MCP, the CLI
    {"server"},  # the warm server: protocol, serve, the kept listing, every server of the user
    {"tools", "client", "__main__"},  # faces: the public tools module, the console entry
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()  # "" is the package itself, the public face (its names load lazily)


def _layer(module: str) -> int:
    top = module.split(".", 1)[0]
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"jitctx.{module} is on no layer: add it to LAYERS (and to docs/design.md's map)")


def _imports(module: str) -> list[tuple[str, int]]:
    """The jitctx modules ``module`` imports, with the line of each import."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                base = ".".join([*parts[: len(parts) - node.level + 1], *([node.module] if node.module else [])])
            elif node.module and (node.module == "jitctx" or node.module.startswith("jitctx.")):
                base = node.module[len("jitctx.") :] if node.module != "jitctx" else ""
            else:
                continue
            for alias in node.names:
                name = f"{base}.{alias.name}".lstrip(".")
                out.append((name if name in MODULES else base, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name[len("jitctx.") :], node.lineno) for a in node.names if a.name.startswith("jitctx.")]
    return [(m, line) for m, line in out if m != module]


GRAPH = {m: _imports(m) for m in MODULES}


@pytest.mark.parametrize("package", sorted({m.split(".", 1)[0] for m in MODULES if m and m != "__main__"}))  # __main__ runs the CLI
def test_issue_35_each_package_imports_on_its_own(package):
    for name in sorted(m for m in MODULES if m == package or m.startswith(package + ".")):
        importlib.import_module(f"jitctx.{name}")


def test_issue_35_imports_never_run_back_up_the_layers():
    up = [
        f"jitctx.{m} (layer {_layer(m)}) imports jitctx.{d} (layer {_layer(d)}) at line {line}" for m, deps in GRAPH.items() if m for d, line in deps if d and _layer(d) > _layer(m)
    ]
    assert up == []


def test_issue_35_no_cycles():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w, _ in GRAPH[v]:
            if not w:
                continue  # the package face: every module's parent
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in GRAPH:
        if v and v not in index:
            visit(v)
    assert cycles == []


_MUTATORS = {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add", "discard", "set", "move_to_end"}


def _state(module: str) -> set[str]:
    """Module-level names of ``module`` bound to an object its module changes after import
    (an item assigned, a mutating method called, or the name rebound through ``global``)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    changed = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                changed |= set(node.names) & names
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                for t in node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in names:
                        changed.add(t.value.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                if node.func.value.id in names and node.func.attr in _MUTATORS:
                    changed.add(node.func.value.id)
    return changed


def test_issue_35_no_mutable_module_state_shared_between_layers():
    state = {m: _state(m) for m in MODULES}
    shared = []
    for m, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported: dict[str, str] = {}  # local name -> module, for `from x import mod`
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for d, _ in _imports_of(m, node):
                    for alias in node.names:
                        if d.endswith("." + alias.name) or d == alias.name:
                            imported[alias.asname or alias.name] = d
                        elif alias.name in state.get(d, ()) and _layer_or_none(d) != _layer_or_none(m):
                            shared.append(f"jitctx.{m} imports {alias.name} of jitctx.{d}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported:
                d = imported[node.value.id]
                if node.attr in state.get(d, ()) and _layer_or_none(d) != _layer_or_none(m):
                    shared.append(f"jitctx.{m} reads {node.attr} of jitctx.{d}")
    assert shared == []


def test_issue_35_no_module_assigns_another_modules_attributes():
    """No process-wide swap (``sys.stdout = ...``) and no global set by one module for another."""
    found = []
    for m, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = {"sys", "os"}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    if isinstance(node, ast.Import) or f"{_base(m, node)}.{alias.name}".lstrip(".") in MODULES:
                        modules.add(local)
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in modules:
                    found.append(f"jitctx.{m} line {t.lineno}: {t.value.id}.{t.attr} = ...")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Name) and first.id in modules:
                    found.append(f"jitctx.{m} line {node.lineno}: setattr({first.id}, ...)")
    assert found == []


def _base(module: str, node: ast.ImportFrom) -> str:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if not node.level:
        return (node.module or "")[len("jitctx.") :] if (node.module or "").startswith("jitctx.") else "\0"
    parts = package.split(".") if package else []
    return ".".join([*parts[: len(parts) - node.level + 1], *([node.module] if node.module else [])])


def _imports_of(module: str, node: ast.ImportFrom) -> list[tuple[str, int]]:
    base = _base(module, node)
    if base == "\0":
        return []
    out = []
    for alias in node.names:
        name = f"{base}.{alias.name}".lstrip(".")
        out.append((name if name in MODULES else base, node.lineno))
    return out


def _layer_or_none(module: str) -> int | None:
    return _layer(module) if module else None
