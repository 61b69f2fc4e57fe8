"""The project's import graph: packages import one another only downward, and modules without a
circle (imports inside functions included).

The engine (`wasp`) is at the bottom and imports none of the tools; the tools import the engine
(`tuner` also plays games through `testing`); the dashboard, which shows the runs of all of
them, sits on top. `ALLOWED` states it, for imports at module level and inside functions alike.
"""

import ast

import pytest

from tests.conftest import ROOT

PACKAGES = ("wasp", "testing", "tuner", "dashboard")
ALLOWED = {  # package -> the other project packages its modules may import, anywhere
    "wasp": set(),  # the engine imports none of the tools
    "testing": {"wasp"},  # the match runner
    "tuner": {"wasp", "testing"},  # the Texel and SPSA tuners, data sets; SPSA plays matches
    "dashboard": {"wasp", "testing", "tuner"},  # shows the runs of all the tools
}
TOP_LEVEL = set(PACKAGES) | {"datasets"}  # `datasets/` holds data only: never imported


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


def _room(module):
    """The room of `tuner` that `module` belongs to (``tuner.texel.run`` -> ``texel``), or None
    for the package's own modules (``tuner.cli``)."""
    parts = module.split(".")
    if parts[0] != "tuner" or len(parts) < 2 or not (ROOT / "tuner" / parts[1]).is_dir():
        return None
    return parts[1]


def test_tuner_is_rooms_and_no_flat_tool_files():
    rooms = {p.parent.name for p in (ROOT / "tuner").glob("*/__init__.py")}
    assert rooms >= {"texel", "traces", "spsa", "datagen", "nnue", "formats", "sets", "loop"}
    flat = sorted(p.name for p in (ROOT / "tuner").glob("*.py")
                  if p.name.startswith(("spsa", "trace", "datagen", "bullet", "bf")))
    assert not flat, flat
    for room in rooms:
        face = (ROOT / "tuner" / room / "__init__.py").read_text(encoding="utf-8")
        assert ast.get_docstring(ast.parse(face)), f"tuner.{room} has no docstring"
        assert "__all__" in face, f"tuner.{room} has no public face (__all__)"


def test_tuner_rooms_import_each_other_only_through_their_faces():
    wrong = [f"{name} imports {dep}: import it from tuner.{_room(dep)}"
             for name, deps in sorted(import_graph().items()) if name.startswith("tuner.")
             for dep in sorted(deps)
             if _room(dep) and _room(dep) != _room(name) and dep != f"tuner.{_room(dep)}"]
    assert not wrong, "\n".join(wrong)


def test_the_face_rule_sees_an_import_past_a_face(tmp_path):
    assert _room("tuner.texel.run") == "texel" and _room("tuner.cli") is None
    assert _room("tuner.texel") == "texel" and _room("wasp.board") is None


def package_imports(path):
    """(package, line, where) of each import of a project package in the file at `path`:
    `import x.y`, `from x import y`, `importlib.import_module("x.y")`; `where` is "module"
    or "function" (inside a function or method, e.g. a lazy import)."""
    found = []

    def visit(node, where):
        for child in ast.iter_child_nodes(node):
            inner = "function" if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                     ast.Lambda)) else where
            names = []
            if isinstance(child, ast.Import):
                names = [alias.name for alias in child.names]
            elif isinstance(child, ast.ImportFrom) and not child.level and child.module:
                names = [child.module]
            elif isinstance(child, ast.Call) and child.args and \
                    isinstance(child.args[0], ast.Constant) and \
                    isinstance(child.args[0].value, str) and \
                    getattr(child.func, "attr", getattr(child.func, "id", None)) in (
                        "import_module", "__import__"):
                names = [child.args[0].value]
            for name in names:
                top = name.split(".")[0]
                if top in TOP_LEVEL:
                    found.append((top, child.lineno, where))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), "module")
    return found


def test_the_check_sees_imports_at_module_level_inside_functions_and_by_name(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import wasp.board\nfrom testing import sprt\n\n\n"
                      "class A:\n    def f(self):\n        from tuner.texel.run import Run\n\n\n"
                      "def g():\n    import importlib\n    importlib.import_module('dashboard')"
                      "\n    from . import near\n    import numpy\n    import datasets\n")
    assert package_imports(source) == [("wasp", 1, "module"), ("testing", 2, "module"),
                                       ("tuner", 7, "function"), ("dashboard", 12, "function"),
                                       ("datasets", 15, "function")]


@pytest.mark.parametrize("package", PACKAGES)
def test_packages_import_only_the_packages_below_them(package):
    wrong = [f"{path.relative_to(ROOT)}:{line}: imports {other} ({where} level)"
             if where == "module" else
             f"{path.relative_to(ROOT)}:{line}: imports {other} (inside a function)"
             for path in sorted((ROOT / package).rglob("*.py"))
             for other, line, where in package_imports(path)
             if other != package and other not in ALLOWED[package]]
    assert not wrong, (f"{package} may import {sorted(ALLOWED[package]) or 'no other package'}"
                       ":\n" + "\n".join(wrong))


def test_every_package_is_stated_and_datasets_holds_no_code():
    found = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests"}
    assert found == set(PACKAGES) == set(ALLOWED)
    assert not list((ROOT / "datasets").rglob("*.py"))


def test_the_drawing_of_the_house_is_the_code_s():
    """docs/img/house.svg (scripts/draw_house.py) lists the arrows the imports make."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("draw_house", ROOT / "scripts" / "draw_house.py")
    draw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(draw)
    drawn = draw.drawn_edges((ROOT / "docs" / "img" / "house.svg").read_text(encoding="utf-8"))
    assert drawn == draw.edges(), "run python3 scripts/draw_house.py"
    assert ("wasp", "testing") not in drawn and ("tuner.texel", "tuner.traces") not in drawn


PARSER = "testing.args"  # wasp-match's command-line parser
PARSER_USERS = {"testing", "testing.plan", "testing.cli"}  # the face, the planner, the CLI


def parser_imports(path) -> list[int]:
    """The lines of the file at `path` that import `PARSER`: ``import testing.args``, ``from
    testing.args import x``, ``from testing import args``, ``import_module("testing.args")``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            names = [str(node.args[0].value)]
        if any(n == PARSER or n.startswith(PARSER + ".") for n in names):
            lines.append(node.lineno)
    return lines


def test_the_parser_check_sees_every_way_of_importing_it(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import testing.args\nfrom testing import args\n"
                      "from testing.args import read\nimport importlib\n"
                      "importlib.import_module('testing.args')\nfrom testing import plan\n")
    assert parser_imports(source) == [1, 2, 3, 5]


def test_no_module_outside_testing_imports_the_match_runners_command_line_parser():
    """Other tools read the runner's flags through `testing`'s face (read_flags, read_engine,
    plan_match), never through its parser; inside `testing` only the face, the planner and
    the command line import it."""
    outside = [f"{path.relative_to(ROOT)}:{line}"
               for path in sorted(ROOT.rglob("*.py"))
               if not path.relative_to(ROOT).parts[0].startswith(".")
               and path.relative_to(ROOT).parts[:1] != ("testing",)
               and path.relative_to(ROOT).parts[:2] != ("tests", "testing")
               for line in parser_imports(path)]
    assert not outside, f"{PARSER} imported outside testing:\n" + "\n".join(outside)
    inside = {name for name, deps in import_graph().items() if PARSER in deps}
    assert inside <= PARSER_USERS, sorted(inside - PARSER_USERS)
