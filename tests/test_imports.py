"""The project's modules import one another without a circle (lazy imports included)."""

import ast

from tests.conftest import ROOT

PACKAGES = ("wasp", "tuner", "testing", "datasets")


def _modules():
    """Module name -> path of every module of the packages."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(name, path, modules):
    """The project modules that module `name` imports anywhere in its file."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:  # relative: from . import x, from ..y import z
                base = package[:len(package) - node.level + 1]
                source = ".".join([*base, source]) if source else ".".join(base)
            for alias in node.names:  # `from wasp import board`: the submodule wasp.board
                sub = f"{source}.{alias.name}"
                found.add(sub if sub in modules else source)
    return {m for m in found if m in modules and m != name}


def import_graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def find_cycles(graph):
    """One cycle (a list of modules, first == last) for each strongly connected component."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def connect(v):  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    cycles = []
    for component in components:  # the shortest way round from the first module back to it
        start = min(component)
        paths, seen, cycle = [[start]], {start}, None
        while cycle is None:
            path = paths.pop(0)
            for w in sorted(graph[path[-1]] & component):
                if w == start:
                    cycle = [*path, start]
                    break
                if w not in seen:
                    seen.add(w)
                    paths.append([*path, w])
        cycles.append(cycle)
    return cycles


def test_find_cycles_names_each_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert sorted(find_cycles(graph)) == [["a", "b", "c", "a"], ["d", "e", "d"]]


def test_the_graph_sees_lazy_relative_and_submodule_imports():
    graph = import_graph()
    assert "wasp.board" in graph["wasp"]  # inside __getattr__
    assert "testing.store" in graph["testing"]  # from .store import ... inside a function
    assert "wasp.params" in graph["wasp.evaluate"]  # from wasp import params as P
    assert "wasp" not in graph["wasp.types"]  # no edge to a parent package's __init__


def test_no_import_circle():
    cycles = find_cycles(import_graph())
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)
