"""The package's layering holds: only the engine side reaches the store, and no class grows past ~30 methods."""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "hermes_bowerbird"
STORE = "hermes_bowerbird.store"
# Below the engine (they are handed the store by it) or the engine side itself; every other module is an edge
# (provider, tools, CLI, MCP, web, imports and exports) and goes through the engine's services.
MAY_USE_STORE = (
    "store",
    "curation",
    "retrieval",
    "maintenance",
    "embeddings",
    "llm",
    "engine",
    "inspection",
    "admin",
)
MAX_METHODS = 30

# Source files are parsed in a child process: in CPython 3.11.7, ast.parse in the test process can fail with
# "AST constructor recursion depth mismatch" while a thread left by an earlier test compiles a module.
_PARSE = (
    "import ast, pickle, sys\n"
    "trees = {p: ast.parse(open(p, encoding='utf-8').read()) for p in sys.argv[1:]}\n"
    "sys.stdout.buffer.write(pickle.dumps(trees))\n"
)
_TREES: dict[str, ast.Module] = {}


def _parse_all(paths: Iterable[Path]) -> None:
    missing = [str(p) for p in paths if str(p) not in _TREES]
    if missing:
        done = subprocess.run(
            [sys.executable, "-c", _PARSE, *missing], capture_output=True, check=True
        )
        _TREES.update(pickle.loads(done.stdout))


def _parse(path: Path) -> ast.Module:
    _parse_all([path])
    return _TREES[str(path)]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path) -> set[str]:
    """Absolute names of every module `path` imports (relative imports resolved, TYPE_CHECKING ones included)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(_parse(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _owner(path: Path) -> str:
    """The top-level module or subpackage of hermes_bowerbird that `path` belongs to."""
    return path.relative_to(PACKAGE).with_suffix("").parts[0]


def _modules() -> list[Path]:
    paths = sorted(PACKAGE.rglob("*.py"))
    _parse_all(paths)
    return paths


def _store_importers() -> list[str]:
    return [
        _module_name(path)
        for path in _modules()
        if _owner(path) not in MAY_USE_STORE
        and any(name == STORE or name.startswith(STORE + ".") for name in _imported(path))
    ]


def test_only_the_engine_side_imports_the_store() -> None:
    assert _store_importers() == []


# The engine's parts an edge must not reach through (it asks engine.inspect / engine.admin instead).
ENGINE_INTERNALS = frozenset({"store", "embeddings", "bulletins"})


def _internal_reaches() -> list[str]:
    """`module:line attribute` for every `x.store`, `x.embeddings` or `x.bulletins` in an edge module."""
    found = []
    for path in _modules():
        if _owner(path) in MAY_USE_STORE:
            continue
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.Attribute) and node.attr in ENGINE_INTERNALS:
                found.append(f"{_module_name(path)}:{node.lineno} {node.attr}")
    return found


def test_no_edge_reaches_into_the_engine_internals() -> None:
    assert _internal_reaches() == []


def test_a_reach_into_the_store_from_an_edge_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_package = tmp_path / "hermes_bowerbird"
    fake_package.mkdir()
    (fake_package / "cli.py").write_text(
        "def count(engine):\n    return engine.store.health.counts()\n", encoding="utf-8"
    )
    monkeypatch.setitem(globals(), "PACKAGE", fake_package)
    assert _internal_reaches() == ["hermes_bowerbird.cli:2 store"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from .store import Store\n", {"hermes_bowerbird.store", "hermes_bowerbird.store.Store"}),
        ("from . import store\n", {"hermes_bowerbird", "hermes_bowerbird.store"}),
        ("import hermes_bowerbird.store.memories\n", {"hermes_bowerbird.store.memories"}),
    ],
)
def test_the_import_reader_resolves_each_import_form(
    tmp_path: Path, source: str, expected: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_package = tmp_path / "hermes_bowerbird"
    fake_package.mkdir()
    edge = fake_package / "edge.py"
    edge.write_text(source, encoding="utf-8")
    monkeypatch.setitem(globals(), "PACKAGE", fake_package)
    assert _imported(edge) == expected


def test_a_store_import_from_an_edge_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_package = tmp_path / "hermes_bowerbird"
    (fake_package / "web").mkdir(parents=True)
    (fake_package / "web" / "views.py").write_text("from ..store import Store\n", encoding="utf-8")
    (fake_package / "engine.py").write_text("from .store import Store\n", encoding="utf-8")
    monkeypatch.setitem(globals(), "PACKAGE", fake_package)
    assert _store_importers() == ["hermes_bowerbird.web.views"]


def _method_counts() -> dict[str, int]:
    counts = {}
    for path in _modules():
        prefix = _module_name(path).removeprefix("hermes_bowerbird.")
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.ClassDef):
                methods = [
                    b for b in node.body if isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
                counts[f"{prefix}.{node.name}"] = len(methods)
    return counts


def test_no_class_has_more_than_thirty_methods() -> None:
    crowded = {name: n for name, n in _method_counts().items() if n > MAX_METHODS}
    assert crowded == {}


def test_the_method_count_sees_the_store() -> None:
    assert _method_counts()["store.database.Store"] > 10
