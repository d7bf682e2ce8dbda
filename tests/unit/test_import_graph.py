"""Imports go down only (docs/architecture.md), checked on the package's own import statements.

The graph is built from every ``import`` in ``src/judgelab`` (lazy imports inside functions count:
they run when a judge runs; ``if TYPE_CHECKING:`` blocks do not). Two rules:

- nothing in the run-time layers (``LOWER``) imports a module of the fitting / running / showing
  layers (``UPPER``);
- no circle of imports between modules of different folders (a circle inside one folder is that
  folder's business).

``KNOWN_UPWARD`` lists edges still to be removed (none now: the trained judge's fine-tuning moved to
``judgelab.train.fit``); a listed edge that no longer exists fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

SRC = Path(__file__).resolve().parents[2] / "src"
#: Folders (and top-level modules) a judge needs at run time, and what sits below them.
LOWER = {"judges", "prompts", "data", "llm", "metrics", "strategy", "parse", "embed", "files", "errors", "redact",
         "limits", "printable", "csv_cells", "lazy", "version", "tools"}
#: Folders that fit, search, run in batches, evaluate systems, label, audit, show, or make the front door and the
#: command line.
UPPER = {"optimize", "train", "runner", "report", "commands", "cli", "evaluate", "annotate", "audit", "api", "testing"}
KNOWN_UPWARD: set[tuple[str, str]] = set()


def module_graph(src: Path) -> dict[str, set[str]]:
    """``{module: modules of judgelab it imports}`` for every module under ``src/judgelab``."""
    modules = {_module_name(path, src): path for path in (src / "judgelab").rglob("*.py")}
    return {name: {target for target in _imports(path, name) if target in modules}
            for name, path in modules.items()}


def folder_of(module: str) -> str:
    """``judgelab.judges.prompted`` -> ``judges``; ``judgelab.parse`` -> ``parse``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(source, target) for source, targets in graph.items() for target in targets
            if folder_of(source) in LOWER and folder_of(target) in UPPER}


def circles_across_folders(graph: dict[str, set[str]], ignore: set[tuple[str, str]] = frozenset()) -> list[list[str]]:
    """Strongly connected sets of modules spanning more than one folder."""
    names = sorted(graph)
    index = {name: i for i, name in enumerate(names)}
    edges = [(index[s], index[t]) for s, targets in graph.items() for t in targets if (s, t) not in ignore and s != t]
    rows, cols = (np.array(side, dtype=int) for side in zip(*edges, strict=True)) if edges else (np.array([], int),) * 2
    matrix = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(names), len(names)))
    _, labels = connected_components(matrix, directed=True, connection="strong")
    groups: dict[int, list[str]] = {}
    for name, label in zip(names, labels, strict=True):
        groups.setdefault(int(label), []).append(name)
    return [group for group in groups.values() if len({folder_of(m) for m in group}) > 1]


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = {id(node) for block in ast.walk(tree) if _is_type_checking(block)
               for statement in block.body for node in ast.walk(statement)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, path.name == "__init__.py")
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}  # a submodule imported by name
    # Importing judgelab.judges.strategy runs judgelab/judges/__init__.py first: that is an edge too.
    found |= {".".join(name.split(".")[:depth]) for name in found for depth in range(2, name.count(".") + 1)}
    return {name for name in found if name == "judgelab" or name.startswith("judgelab.")}


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


# -- the rules, on the real package -------------------------------------------------------------------


def test_run_time_layers_never_import_upward():
    upward = upward_imports(module_graph(SRC))
    assert upward - KNOWN_UPWARD == set(), "imports from a run-time layer up into " + ", ".join(sorted(UPPER))
    assert KNOWN_UPWARD - upward == set(), "an edge in KNOWN_UPWARD is gone: remove it from the list"


def test_no_module_imports_the_command_line_entry_point():
    """Commands print through ``commands._common``'s consoles; none imports back the ``cli`` that registers it."""
    graph = module_graph(SRC)
    assert sorted(source for source, targets in graph.items() if "judgelab.cli" in targets) == []


def test_no_module_imports_the_front_door():
    """``judgelab/__init__.py`` re-exports the verbs from above every folder: a module that imports it (for
    ``__version__``, say: ``judgelab.version`` has it) runs back up to the top. The command line reads the
    version for ``--version`` only. A submodule is imported by its full name (``import judgelab.limits as
    limits``), which reads as what it is."""
    graph = module_graph(SRC)
    assert sorted(source for source, targets in graph.items() if "judgelab" in targets
                  and source not in ("judgelab", "judgelab.cli")) == []


def test_every_folder_and_module_is_placed_in_a_layer():
    """A new folder or top-level module must be put in LOWER or UPPER (and in docs/architecture.md), or the
    rules above would not look at it."""
    places = {folder_of(module) for module in module_graph(SRC)} - {"judgelab"}
    assert places - LOWER - UPPER == set()
    drawn = (SRC.parents[0] / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = {place for place in places if f"{place}/" in drawn or f"{place}.py" in drawn or f"`{place}`" in drawn}
    assert places - named == set(), "docs/architecture.md does not place these"


def test_only_the_command_line_imports_the_commands():
    graph = module_graph(SRC)
    assert sorted(source for source, targets in graph.items() if any(t.startswith("judgelab.commands") for t in targets)
                  and folder_of(source) not in ("commands", "cli")) == []


def test_no_circle_between_folders():
    assert circles_across_folders(module_graph(SRC), ignore=KNOWN_UPWARD) == []


def circles_inside(graph: dict[str, set[str]], package: str) -> list[list[str]]:
    """Circles between the modules of ``package``, its ``__init__`` left out (each of them runs it first, so
    every module would be in a circle with it)."""
    prefix = package + "."
    inside = {m: {t for t in targets if t.startswith(prefix)} for m, targets in graph.items() if m.startswith(prefix)}
    names = sorted(inside)
    index = {name: i for i, name in enumerate(names)}
    edges = [(index[s], index[t]) for s, targets in inside.items() for t in targets if t in index and s != t]
    rows, cols = (np.array(side, dtype=int) for side in zip(*edges, strict=True))
    matrix = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(names), len(names)))
    _, labels = connected_components(matrix, directed=True, connection="strong")
    return [[name for name, own in zip(names, labels, strict=True) if own == label]
            for label in np.unique(labels) if (labels == label).sum() > 1]


def test_no_circle_between_the_modules_of_evaluate():
    """The leaderboards of items (systems.py) and of comparisons (preferences.py) and the modules under them
    (comparisons.py, bradley_terry.py, board.py's SystemsReport) import downward only: in a circle (once
    preferences.py and systems.py, over SystemsReport) the module imported first is half-made when the other
    reads it."""
    assert circles_inside(module_graph(SRC), "judgelab.evaluate") == []


# -- the check itself fails on a planted import (a copy of the package, one line added) ----------------------


def _planted(tmp_path: Path, module: Path, line: str) -> dict[str, set[str]]:
    copy = tmp_path / "src"
    shutil.copytree(SRC / "judgelab", copy / "judgelab", ignore=shutil.ignore_patterns("__pycache__", "*.j2", "*.js"))
    target = copy / "judgelab" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n\ndef _planted():\n    {line}\n", encoding="utf-8")
    return module_graph(copy)


def test_a_planted_upward_import_is_found(tmp_path):
    graph = _planted(tmp_path, Path("metrics/correlation.py"), "from judgelab.runner.run import run_judge")
    assert upward_imports(graph) - KNOWN_UPWARD == {("judgelab.metrics.correlation", "judgelab.runner"),
                                                    ("judgelab.metrics.correlation", "judgelab.runner.run")}


def test_a_planted_import_of_the_front_door_is_found(tmp_path):
    graph = _planted(tmp_path, Path("report/meta.py"), "from judgelab import __version__")
    assert [source for source, targets in graph.items() if "judgelab" in targets
            and source not in ("judgelab", "judgelab.cli")] == ["judgelab.report.meta"]


def test_a_planted_circle_between_folders_is_found(tmp_path):
    # optimize/hpss.py imports judgelab.strategy; strategy importing optimize back closes a circle.
    graph = _planted(tmp_path, Path("strategy.py"), "import judgelab.optimize.hpss")
    circles = circles_across_folders(graph, ignore=KNOWN_UPWARD)
    assert any({"judgelab.strategy", "judgelab.optimize.hpss"} <= set(circle) for circle in circles)


def test_a_planted_circle_inside_evaluate_is_found(tmp_path):
    # systems.py reads comparisons through comparison_items.py, which imports preferences.py: preferences.py
    # taking SystemsReport from systems.py again (it is board.py's now) closes the circle issue 47 found.
    graph = _planted(tmp_path, Path("evaluate/preferences.py"), "from judgelab.evaluate.systems import SystemsReport")
    circles = circles_inside(graph, "judgelab.evaluate")
    assert [sorted(circle) for circle in circles] == [["judgelab.evaluate.comparison_items",
                                                       "judgelab.evaluate.preferences", "judgelab.evaluate.systems"]]


def test_type_checking_imports_and_relative_imports_are_read_right(tmp_path):
    source = tmp_path / "src" / "judgelab"
    (source / "judges").mkdir(parents=True)
    (source / "optimize").mkdir()
    for path in ("__init__.py", "judges/__init__.py", "optimize/__init__.py", "optimize/icl.py", "judges/other.py"):
        (source / path).write_text("")
    (source / "judges" / "one.py").write_text(
        "from typing import TYPE_CHECKING\nfrom . import other\nif TYPE_CHECKING:\n    from judgelab.optimize import icl\n")
    graph = module_graph(tmp_path / "src")
    assert graph["judgelab.judges.one"] == {"judgelab.judges", "judgelab.judges.other"}
    (source / "prompts").mkdir()
    (source / "prompts" / "__init__.py").write_text("")
    (source / "prompts" / "render.py").write_text("from judgelab.judges.other import x\n")
    assert module_graph(tmp_path / "src")["judgelab.prompts.render"] == {"judgelab.judges", "judgelab.judges.other"}
