"""The package's shape: no import loop, no import hidden in a string, and the tests
laid out like the code.

import-linter's contracts (pyproject.toml) say which layer may import which;
these tests add what a contract cannot say: no two modules import each other,
directly or round a longer loop, and no roost module is imported by a name in a
string, where neither import-linter nor a reader can see the edge. The last
tests hold the layout CONTRIBUTING.md describes: each module's tests in the file
named after it, where a newcomer looks for them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import networkx as nx
import pytest

ROOST = Path(__file__).resolve().parents[1] / "roost"


@pytest.fixture(scope="module")
def imports() -> nx.DiGraph:
    """Every import between roost's modules (lazy ones in functions and type-only ones too)."""
    graph = grimp.build_graph("roost", cache_dir=None)
    edges = nx.DiGraph()
    for module in graph.modules:
        edges.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            edges.add_edge(module, imported)
    return edges


def loops(graph: nx.DiGraph) -> list[list[str]]:
    """The groups of modules that reach each other through imports, each sorted."""
    return sorted(
        sorted(group) for group in nx.strongly_connected_components(graph) if len(group) > 1
    )


def test_no_module_imports_itself_through_others(imports: nx.DiGraph) -> None:
    assert loops(imports) == []


def test_no_subpackage_imports_itself_through_others(imports: nx.DiGraph) -> None:
    # roost.nodes.agent -> roost.engine.state and roost.engine.x -> roost.nodes.y make a
    # loop between the two packages even when no module loop exists.
    packages = nx.DiGraph()
    for source, target in imports.edges:
        top_source, top_target = _top(source), _top(target)
        if top_source != top_target:
            packages.add_edge(top_source, top_target)
    assert loops(packages) == []


def test_loops_are_found() -> None:
    graph = nx.DiGraph([("roost.a", "roost.b"), ("roost.b", "roost.c"), ("roost.c", "roost.a")])
    graph.add_edge("roost.c", "roost.d")
    assert loops(graph) == [["roost.a", "roost.b", "roost.c"]]


def test_no_roost_module_is_imported_by_a_name_in_a_string() -> None:
    found = [
        f"{path.relative_to(ROOST.parent)}:{line}"
        for path in sorted(ROOST.rglob("*.py"))
        for line in _imports_by_name(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_imports_by_name_are_found() -> None:
    source = (
        "import importlib\n"
        'importlib.import_module("roost.engine.subflow")\n'
        'import_module(f"roost.providers.{kind}")\n'
        '__import__("roost.tools")\n'
        "importlib.import_module(name)  # a user's tool module: not roost's\n"
    )
    assert _imports_by_name(source) == [2, 3, 4]


def test_no_source_names_import_module_of_roost() -> None:
    text = 'import_module("roost.'
    assert [p for p in ROOST.rglob("*.py") if text in p.read_text(encoding="utf-8")] == []


def _imports_by_name(source: str) -> list[int]:
    """Lines that import a roost module through ``import_module`` or ``__import__``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else None
        name = node.func.id if isinstance(node.func, ast.Name) else name
        if name in ("import_module", "__import__") and _names_roost(node.args[0]):
            lines.append(node.lineno)
    return lines


def _names_roost(argument: ast.expr) -> bool:
    if isinstance(argument, ast.JoinedStr) and argument.values:
        argument = argument.values[0]
    return isinstance(argument, ast.Constant) and str(argument.value).startswith("roost")


def _top(module: str) -> str:
    return ".".join(module.split(".")[:2])


TESTS = ROOST.parent / "tests"

# Modules with no behaviour of their own, so no test file of their own: why, each.
NO_TEST_FILE = {
    "__init__.py": "lazy re-exports of the front door; tests/test_api.py uses them",
    "__main__.py": "calls roost.entry.main; tests/cli/test_app.py runs python -m roost",
    "cli/server_options.py": "typer option declarations shared by serve and studio",
    "engine/__init__.py": "loads Runner, ChildRuns and Sources on first use, nothing else",
    "events/__init__.py": "re-exports the event models",
    "flow/models/__init__.py": "re-exports the language's models",
    "providers/base.py": "the Provider interfaces; each provider's tests test them",
    "runstate/__init__.py": "re-exports the run state and its fold",
    "tools/__init__.py": "toolbox_for makes a Toolbox; tests/tools/test_toolbox.py uses it",
    "tools/refused.py": "one exception class, raised and tested by the built-in tools",
}


def mirror_files(module: Path) -> list[Path]:
    """Where the tests of ``module`` (a path below roost/) are: ``tests/<path>/test_<name>.py``
    or ``test_<name>_<side>.py``; a package's ``__init__`` is ``test_<package>`` beside it."""
    relative = module.relative_to(ROOST)
    if module.name == "__init__.py":
        folder, name = TESTS / relative.parent.parent, relative.parent.name
    else:
        folder, name = TESTS / relative.parent, module.stem.lstrip("_")
    return [*folder.glob(f"test_{name}.py"), *folder.glob(f"test_{name}_*.py")]


def _has_code(module: Path) -> bool:
    """Whether a package's ``__init__`` does more than gather names (a def or a class)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.FunctionDef | ast.ClassDef) for node in tree.body)


def test_every_module_has_its_test_file_where_the_layout_puts_it() -> None:
    missing = [
        str(module.relative_to(ROOST))
        for module in sorted(ROOST.rglob("*.py"))
        if (module.name != "__init__.py" or _has_code(module))
        and str(module.relative_to(ROOST)) not in NO_TEST_FILE
        and not mirror_files(module)
    ]
    assert missing == []


def test_a_module_said_to_need_no_test_file_is_still_there_and_still_has_none() -> None:
    stale = [name for name in NO_TEST_FILE if not (ROOST / name).exists()]
    tested = [
        name for name in NO_TEST_FILE if (ROOST / name).exists() and mirror_files(ROOST / name)
    ]
    assert (stale, tested) == ([], [])


def test_the_layout_finds_a_module_s_test_files_and_a_package_s() -> None:
    found = {path.name for path in mirror_files(ROOST / "store" / "forks.py")}
    assert {"test_forks.py", "test_forks_file.py"} <= found
    assert [p.name for p in mirror_files(ROOST / "pricing" / "__init__.py")] == ["test_pricing.py"]
    assert mirror_files(ROOST / "engine" / "no_such_module.py") == []
