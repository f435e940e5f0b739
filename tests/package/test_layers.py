"""The package's layers: every import (lazy ones inside functions included) points down, nothing but the CLI
imports click, and no modules import each other in a loop. Read from the source with ast, nothing imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "engine"

# Bottom to top; a module may import its own layer and the layers below. The three paper slices share one rank
# and never import each other; suite runs them together; serve and scale are other skins beside cli (cli may
# start them); the package root (the facade) and __main__ stand above everything.
RANK = {"core": 0, "sources": 1, "kinds": 2, "runs": 3, "analogies": 4, "senses": 4, "rare_words": 4, "suite": 5,
        "serve": 6, "scale": 6, "cli": 7}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, modules: set[str]) -> list[tuple[str, int]]:
    """(imported module inside the package, or an outside top-level name prefixed '!', line) for every import
    statement in ``path``, at any depth, except under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(), str(path))
    me = _module_name(path)
    package = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    package = [p for p in package if p]
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((f"!{a.name.split('.')[0]}", node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                found.append((f"!{(node.module or '').split('.')[0]}", node.lineno))
            else:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:  # `from . import x` may name a module
                    sub = f"{target}.{alias.name}" if target else alias.name
                    found.append((sub if sub in modules else target, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _graph() -> dict[str, list[tuple[str, int]]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): _imports(p, modules) for p in paths}


def _layer(module: str) -> str | None:
    head = module.split(".")[0]
    return head if head in RANK else None


GRAPH = _graph()


def test_every_module_belongs_to_a_layer():
    loose = [m for m in GRAPH if _layer(m) is None and m not in ("", "__main__")]
    assert not loose, f"modules outside the layer folders: {loose}"


def test_imports_point_down():
    upward = []
    for module, imports in GRAPH.items():
        mine = _layer(module)
        if mine is None:            # the facade and __main__ may use every layer
            continue
        for target, line in imports:
            if target.startswith("!"):
                continue
            theirs = _layer(target)
            if target == "" or theirs is None:
                upward.append(f"{module}:{line} imports the package facade ({target or 'lexprobe'})")
            elif RANK[theirs] > RANK[mine] or (RANK[theirs] == RANK[mine] and theirs != mine):
                upward.append(f"{module}:{line} ({mine}) imports {target} ({theirs})")
    assert not upward, "imports that point up or sideways:\n" + "\n".join(upward)


def test_only_the_cli_imports_click():
    offenders = [f"{m}:{line}" for m, imports in GRAPH.items() for t, line in imports
                 if t == "!click" and _layer(m) != "cli"]
    assert not offenders, f"click imported outside cli/: {offenders}"


SLICES = ("analogies", "senses", "rare_words")


def _role(module: str) -> str:
    """A slice module's role from its name: ``run_*`` writes run folders, ``bench_*`` records benchmarks, every
    other module is a computation."""
    name = module.split(".")[-1]
    return "run" if name.startswith("run_") else "bench" if name.startswith("bench_") else "computation"


def test_computations_do_not_plot():
    offenders = [f"{m}:{line} imports {t[1:]}" for m, imports in GRAPH.items() for t, line in imports
                 if t == "!matplotlib" and (_layer(m) in ("core", "sources", "kinds")
                                            or (_layer(m) in SLICES and _role(m) == "computation"))]
    assert not offenders, f"plotting below the run layer: {offenders}"


def test_slice_computations_write_nothing():
    """Inside a paper slice only ``run_*`` modules use the run layer (run folders, report, plots) and only
    ``bench_*`` modules its benchmark recorder; computations use neither."""
    offenders = []
    for module, imports in GRAPH.items():
        if _layer(module) not in SLICES:
            continue
        role = _role(module)
        for target, line in imports:
            if _layer(target) != "runs":
                continue
            allowed = role == "run" or (role == "bench" and target == "runs.bench_record")
            if not allowed:
                offenders.append(f"{module}:{line} ({role}) imports {target}")
    assert not offenders, "slice modules writing outside their role:\n" + "\n".join(offenders)


def test_file_names_are_unique():
    names: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            names.setdefault(path.name, []).append(str(path.relative_to(PACKAGE)))
    assert not {n: p for n, p in names.items() if len(p) > 1}, "file names used twice in the package"


def test_no_import_cycles():
    edges = {m: sorted({t for t, _ in imports if t in GRAPH and t != m}) for m, imports in GRAPH.items()}
    # Tarjan's strongly connected components
    index, low, stack, on_stack, cycles, counter = {}, {}, [], set(), [], [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in edges:
        if v not in index:
            strong(v)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("source, expected", [
    ("from ..suite import main_job\n", "upward"),
    ("def f():\n    from ..cli.root import cli\n", "upward"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..suite.main_job import run_all\n", "ok"),
    ("from ..core.store import Store\n", "ok"),
])
def test_the_walker_sees_lazy_and_skips_type_checking_imports(tmp_path, source, expected):
    """The check itself: a lazy import inside a function counts, one under TYPE_CHECKING does not."""
    folder = tmp_path / "engine" / "rare_words"
    folder.mkdir(parents=True)
    path = folder / "probe.py"
    path.write_text(source)
    modules = set(GRAPH) | {"rare_words.probe"}
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "engine"
    try:
        imports = [t for t, _ in _imports(path, modules) if not t.startswith("!")]
    finally:
        PACKAGE = saved
    up = [t for t in imports if _layer(t) and RANK[_layer(t)] > RANK["rare_words"]]
    assert ("upward" if up else "ok") == expected
