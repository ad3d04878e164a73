"""The shape of the house (DESIGN.md, "The house"), held against the code: the layers and
what each may import, no circle of imports, each capability package entered by its face,
few rooms directly in ``ops/``, and file bytes read in ``storage/`` alone.

Read from the sources' own imports (every one: at the top, in a function, under
``TYPE_CHECKING``), so a new import that breaks the map fails here, with the names.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from kmeta.face import declared

ROOT = Path(__file__).resolve().parents[1]
KMETA = ROOT / "kmeta"

#: The layers, bottom up: a module imports its own layer's (within its own package) and
#: those below, never one above.  DESIGN.md draws the same.
LAYERS: list[tuple[str, ...]] = [
    ("kmeta", "kmeta.findings", "kmeta.face"),
    ("kmeta.errors",),
    ("kmeta.formats", "kmeta.environment"),
    ("kmeta.storage", "kmeta.core", "kmeta.output_schema"),
    ("kmeta.ops",),
    ("kmeta.spark",),
    ("kmeta.render",),
    ("kmeta.shell",),
    ("kmeta.cli",),
    ("kmeta.__main__",),
]
#: The packages entered by their face (kmeta.face) alone from outside.
CAPABILITIES = ("kmeta.ops.compact", "kmeta.ops.export", "kmeta.ops.repair",
                "kmeta.ops.replay", "kmeta.ops.replica", "kmeta.ops.report",
                "kmeta.ops.startup", "kmeta.ops.verify", "kmeta.render.report")
#: At most this many modules directly in ops/: the rest live in capability packages.
MOST_OPS_MODULES = 15
#: What reads a file's bytes or maps it: storage's business alone.
READS_BYTES = ("os.pread", "os.preadv", "mmap", "os.open",
               "read_bytes", "read_text")


def _name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_name(p): p for p in KMETA.rglob("*.py")}


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(_modules()[name].read_text())


def _imports(name: str) -> Iterator[tuple[str, int]]:
    """(kmeta module imported, line) of every import in module ``name``: a name taken
    from a package is the submodule of that name where there is one."""
    modules = _modules()
    package = name if _modules()[name].name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            if not base.startswith("kmeta"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield (sub if sub in modules else base), node.lineno


def _layer(name: str) -> tuple[int, str]:
    """(rank, the layer's package) of a module: the longest prefix the table names."""
    best = (-1, "", "")
    for rank, layer in enumerate(LAYERS):
        for prefix in layer:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > len(best[2]):
                best = (rank, prefix, prefix)
    assert best[0] >= 0, f"{name} is in no layer of LAYERS"
    return best[0], best[1]


def test_every_module_is_in_a_layer() -> None:
    for name in _modules():
        _layer(name)


def test_no_import_runs_up_a_layer_or_across_one() -> None:
    wrong = []
    for name in _modules():
        rank, home = _layer(name)
        for target, line in _imports(name):
            their_rank, theirs = _layer(target)
            if their_rank > rank or (their_rank == rank and theirs != home
                                     and theirs != "kmeta"):
                wrong.append(f"{_modules()[name].relative_to(ROOT)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_circle_of_imports() -> None:
    """Tarjan's strongly connected components over every import."""
    graph = {name: sorted({t for t, _ in _imports(name) if t != name}) for name in _modules()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
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
                circles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert not circles, circles


def test_capability_packages_are_entered_by_their_face() -> None:
    wrong = []
    for name in _modules():
        for target, line in _imports(name):
            for package in CAPABILITIES:
                inside = name == package or name.startswith(package + ".")
                if target.startswith(package + ".") and not inside:
                    wrong.append(f"{_modules()[name].relative_to(ROOT)}:{line} imports "
                                 f"{target}: take it from {package}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package", CAPABILITIES)
def test_a_face_names_what_it_hands_on(package: str) -> None:
    """Every name a face declares is there, in the module its import names."""
    import importlib

    face = importlib.import_module(package)
    names = declared(_modules()[package].read_text())
    assert names and sorted(names) == face.__all__ == dir(face)
    for name in names:
        assert getattr(face, name) is getattr(importlib.import_module(names[name]), name)


def test_a_face_loads_nothing_before_it_is_asked() -> None:
    """``kmeta verify`` starts its workers before the metadata log's checks are imported:
    asking the face for ``verify`` loads the paths module, not the pass."""
    probe = ("import sys, kmeta.ops.verify as v; v.verify; "
             "print(sorted(m for m in sys.modules if m.startswith('kmeta.ops.')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, cwd=ROOT).stdout
    assert "kmeta.ops.verify.paths" in loaded
    assert "kmeta.ops.verify.run" not in loaded and "kmeta.ops.replay" not in loaded


def test_ops_holds_a_handful_of_modules() -> None:
    direct = sorted(p.name for p in (KMETA / "ops").glob("*.py") if p.name != "__init__.py")
    assert len(direct) <= MOST_OPS_MODULES, direct


@pytest.mark.parametrize("layer", ["kmeta.core", "kmeta.ops", "kmeta.render"])
def test_only_storage_reads_file_bytes(layer: str) -> None:
    """The use cases, the model and the renderers read no file's bytes themselves (map,
    pread, open): they ask ``storage/`` (pipes between kmeta's own processes are no
    files)."""
    wrong = []
    for name, path in _modules().items():
        if not name.startswith(layer + "."):
            continue
        for node in ast.walk(_tree(name)):
            text = None
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                text = f"{node.value.id}.{node.attr}"
            elif isinstance(node, ast.Name):
                text = node.id
            elif isinstance(node, ast.alias):
                text = node.name
            if text is not None and (text in READS_BYTES or text.split(".")[-1] in
                                     ("read_bytes", "read_text", "pread")):
                wrong.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')} {text}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id == "open":
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} open()")
    assert not wrong, "\n".join(wrong)


def test_a_face_works_from_a_zip(tmp_path: Path) -> None:
    """spark-submit ships kmeta to its executors as a zip (``--py-files``): a face reads
    its names through its loader, not from a file on disk."""
    import zipfile

    archive = tmp_path / "kmeta.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in KMETA.rglob("*.py"):
            z.write(path, path.relative_to(ROOT))
    probe = "import kmeta.ops.export as e; print(e.__file__, len(e.TABLES))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(archive),
                                             "KMETA_PURE_PYTHON": "1"})
    assert done.returncode == 0, done.stderr
    assert str(archive) in done.stdout
