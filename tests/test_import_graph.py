"""The modules' imports, read from their source: no import circle between the modules of
bunzai_codecs, pipeline and jobs, and no module of the codec library importing the pipeline or the
jobs (the library stands alone: ``bunzai_codecs`` has no Beam in it).

Every import counts, at any depth (one inside a function is a dependency too, only a later one),
except those under ``if TYPE_CHECKING:``, which never run. ``from package import name`` is an
edge to ``package.name`` when that is a module, else to the package itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bunzai_codecs", "pipeline", "jobs")


def _modules() -> dict[str, Path]:
    found = {}
    for top in PACKAGES:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield from _imports(other)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _imports(child)


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for imp in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(imp, ast.Import):
            out.update(alias.name for alias in imp.names)
            continue
        base = imp.module or ""
        if imp.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - (imp.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in imp.names:
            sub = f"{base}.{alias.name}"
            out.add(sub if sub in modules else base)
    return {m for m in out if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _edges(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_is_read() -> None:
    graph = _graph()
    assert "pipeline.normalize.graph" in graph and "bunzai_codecs.cli" in graph
    assert "pipeline.runtime.storage" in graph["pipeline.normalize.read"]
    assert "bunzai_codecs.fidelity.rows" in graph["bunzai_codecs.fidelity.checks"]


def test_no_import_circle() -> None:
    cycles = _cycles(_graph())
    assert not cycles, "import circles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_codec_library_imports_neither_the_pipeline_nor_the_jobs() -> None:
    graph = _graph()
    bad = sorted(
        (m, dep)
        for m, deps in graph.items()
        if m.split(".")[0] == "bunzai_codecs"
        for dep in deps
        if dep.split(".")[0] in ("pipeline", "jobs")
    )
    assert not bad, bad


def test_a_circle_is_found() -> None:
    """The check itself: a circle of three and a self-contained pair are reported, a chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
