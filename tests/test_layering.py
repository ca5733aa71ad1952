"""Architecture rules, checked on the source (docs/architecture.md, "What the tests enforce"):

* nothing under graveler/ imports an orchestrator, Spark, or a provider package;
* only backends import SQLAlchemy/Alembic (graveler/storage/refs), boto3/botocore
  (graveler/storage/objectstore/s3.py) or rocksdict (graveler/storage/sstable/writer.py);
* no module of graveler/ or of a provider package takes part in an import cycle (every import
  counts: module level, inside functions, and under ``TYPE_CHECKING``);
* every engine module imports only modules of its own folder or of the folders below it
  (FOLDERS, top to bottom); inside graveler/, nothing imports the public re-export modules at
  the package root (code imports the module that defines a name);
* no interface of the server (ui, s3, catalog, lakefs) imports another, and the server's
  common part imports none of them but where it assembles them (app.py);
* providers and examples use the public API only: the names of ``graveler.__all__`` and the
  modules listed in PUBLIC_MODULES.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import graveler

TOP = Path(__file__).resolve().parent.parent
ROOT = TOP / "graveler"
PROVIDERS = TOP / "providers"
FORBIDDEN = {
    "airflow",
    "dagster",
    "pyspark",
    "graveler_airflow",
    "graveler_dagster",
    "graveler_spark",
    "graveler_fsspec",
}
BACKEND_ONLY: dict[str, str | tuple[str, ...]] = {
    "sqlalchemy": "storage/refs/",
    "alembic": "storage/refs/",
    "psycopg": "storage/refs/",
    "boto3": "storage/objectstore/s3.py",
    "botocore": ("storage/objectstore/s3.py", "storage/objectstore/s3_body.py"),
    "rocksdict": "storage/sstable/writer.py",
    # the web UI's stack (the ``ui`` extra) stays inside graveler/server/ui/; the server's
    # (``server`` extra) inside graveler/server/; the Iceberg REST catalog
    # (graveler/server/catalog/) routes with Starlette
    "fastapi": "server/ui/",
    "starlette": ("server/ui/", "server/catalog/"),
    "jinja2": "server/ui/",
    "uvicorn": "server/",
    # Parquet: the web UI, Delta checkpoints (graveler/tables/delta), and the sample table
    # of a repository created through lakeFS's API with sample data
    "pyarrow": ("server/ui/", "tables/delta/", "server/lakefs/sample.py"),
    "anyio": "server/s3/",
    "cryptography": "server/",
    "awscrt": "server/s3/",
}
#: The public modules at the package root, each re-exporting the module that defines it.
PUBLIC_FACES = {
    "graveler.config": "graveler.core.config",
    "graveler.database": "graveler.storage.database",
    "graveler.errors": "graveler.core.errors",
    "graveler.extras": "graveler.core.extras",
    "graveler.gc": "graveler.maintenance.gc",
    "graveler.objectstore": "graveler.storage.objectstore",
    "graveler.runs": "graveler.versioning.runs",
    "graveler.uri": "graveler.core.uri",
}
#: The engine modules that providers may import, besides the top-level ``graveler`` names.
PUBLIC_MODULES = {
    *PUBLIC_FACES,
    "graveler.tables.iceberg",
    "graveler.server.ui",
    "graveler.server.ui.links",
}
#: Known reaches past the facade, each to be removed by the change named beside it.
PENDING: dict[tuple[str, str], str] = {}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


SOURCES = sorted(ROOT.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_engine_imports_respect_layers(path: Path):
    rel = path.relative_to(ROOT).as_posix()
    mods = imported_modules(path)
    assert not mods & FORBIDDEN, f"{rel} imports {mods & FORBIDDEN}"
    for module, allowed in BACKEND_ONLY.items():
        if module in mods:
            assert rel.startswith(allowed), f"{rel} imports {module}; only {allowed} may"


def test_the_check_sees_imports():
    assert {"os", "graveler"} <= imported_modules(ROOT / "client.py")
    assert len(SOURCES) > 30


# --- import cycles --------------------------------------------------------------------------


def module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_edges(path: Path, base: Path, known: set[str]) -> Iterator[str]:
    """The modules of ``known`` that ``path`` imports (``from pkg import sub`` names the
    submodule when there is one)."""
    this = module_name(path, base)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*anchor, module] if module else anchor)
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                yield sub if sub in known else module


def graph_of(package_dir: Path) -> dict[str, set[str]]:
    base = package_dir.parent
    files = {module_name(p, base): p for p in package_dir.rglob("*.py")}
    known = set(files)
    return {
        name: {m for m in import_edges(path, base, known) if m in known and m != name}
        for name, path in files.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


PACKAGES = [ROOT, *sorted(p for p in PROVIDERS.iterdir() if (p / "__init__.py").exists())]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_no_import_cycles(package: Path):
    assert cycles(graph_of(package)) == []


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


# --- layers ------------------------------------------------------------------------------------

#: The engine's folders, top to bottom, and the modules of each (``pkg.`` covers a package). A
#: module may import its own folder and the folders below it.
FOLDERS: list[tuple[str, tuple[str, ...]]] = [
    ("public faces", tuple(PUBLIC_FACES)),  # for users: nothing inside graveler/ imports them
    ("cli", ("graveler.cli.", "graveler.__main__")),
    ("server", ("graveler.server.",)),
    ("maintenance", ("graveler.maintenance.",)),
    ("facade", ("graveler.client", "graveler.repository")),
    ("tables", ("graveler.tables.",)),
    ("versioning", ("graveler.versioning.",)),
    ("views", ("graveler.views.",)),
    ("storage", ("graveler.storage.",)),
    ("core", ("graveler.core.",)),
]
LAYERS = FOLDERS


def layer_of(module: str) -> int:
    """The index of ``module``'s layer in LAYERS (0 is the top)."""
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if module == member or module == member.rstrip(".") or module.startswith(member):
                return index
    raise AssertionError(f"{module} is in no layer of tests/test_layering.py: place it")


ENGINE = {m: deps for m, deps in graph_of(ROOT).items() if m != "graveler"}


def upward(graph: dict[str, set[str]], module: str) -> list[str]:
    """The imports of ``module`` that point to a higher layer."""
    here = layer_of(module)
    return sorted(d for d in graph[module] if d != "graveler" and layer_of(d) < here)


@pytest.mark.parametrize("module", sorted(ENGINE))
def test_imports_point_down(module: str):
    assert not upward(ENGINE, module), f"{module} imports higher layers"


def test_the_layer_check_sees_upward_imports():
    graph = {"graveler.core.model": {"graveler.repository", "graveler.core.errors"}}
    assert upward(graph, "graveler.core.model") == ["graveler.repository"]
    graph = {"graveler.versioning.merge": {"graveler.tables.merge", "graveler.views.history"}}
    assert upward(graph, "graveler.versioning.merge") == ["graveler.tables.merge"]
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("graveler.somewhere_new")


def test_every_folder_is_placed():
    """Each folder of graveler/ (and each module at its root) belongs to a layer."""
    for path in ROOT.iterdir():
        if path.name.startswith((".", "_")) and path.name != "__main__.py":
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            layer_of(f"graveler.{path.name}.x")
        elif path.suffix == ".py":
            layer_of(f"graveler.{path.stem}")


# --- the public faces and the server's interfaces ---------------------------------------------

INTERFACES = ("ui", "s3", "catalog", "lakefs")
#: The server's modules that assemble the interfaces into one application.
ASSEMBLY = {"graveler.server.app"}


def interface_of(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 2 and parts[:2] == ["graveler", "server"] and parts[2] in INTERFACES:
        return parts[2]
    return None


def crossings(graph: dict[str, set[str]], module: str) -> list[str]:
    """What ``module`` imports that the server's rules forbid: another interface (from an
    interface), any interface (from the common part, but where it assembles them)."""
    if not module.startswith("graveler.server.") or module in ASSEMBLY:
        return []
    own = interface_of(module)
    return sorted(d for d in graph[module] if interface_of(d) not in (None, own))


def test_server_interfaces_stay_apart():
    found = {m: crossings(ENGINE, m) for m in ENGINE if crossings(ENGINE, m)}
    assert not found, f"these modules import another interface of the server: {found}"


def test_the_interface_check_sees_crossings():
    graph = {
        "graveler.server.s3.app": {"graveler.server.catalog.rest", "graveler.server.auth"},
        "graveler.server.auth": {"graveler.server.ui.signin"},
        "graveler.server.app": {"graveler.server.ui.signin"},
        "graveler.server.ui.app": {"graveler.server.ui.context"},
    }
    assert crossings(graph, "graveler.server.s3.app") == ["graveler.server.catalog.rest"]
    assert crossings(graph, "graveler.server.auth") == ["graveler.server.ui.signin"]
    assert crossings(graph, "graveler.server.app") == []
    assert crossings(graph, "graveler.server.ui.app") == []


def face_imports(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """The public faces each module of ``graph`` imports (none should)."""
    found = {m: sorted(d for d in deps if d in PUBLIC_FACES) for m, deps in graph.items()}
    return {m: faces for m, faces in found.items() if faces}


def test_engine_code_imports_where_names_are_defined():
    """The public faces are for users: inside graveler/, code imports the defining module."""
    assert not face_imports(ENGINE), "import these from the modules that define them"


def test_the_face_check_sees_face_imports():
    graph = {"graveler.views.reads": {"graveler.errors", "graveler.core.model"}}
    assert face_imports(graph) == {"graveler.views.reads": ["graveler.errors"]}


def test_public_faces_reexport_their_module():
    for face, module in sorted(PUBLIC_FACES.items()):
        public, defining = importlib.import_module(face), importlib.import_module(module)
        names = getattr(defining, "__all__", None) or [
            n
            for n, v in vars(defining).items()
            if not n.startswith("_") and getattr(v, "__module__", None) == defining.__name__
        ]
        assert names, module
        assert all(getattr(public, n) is getattr(defining, n) for n in names), face


# --- providers on the public API ---------------------------------------------------------------

CLIENT_SOURCES = sorted(
    [*PROVIDERS.rglob("*.py"), *(TOP / "dags_examples").rglob("*.py")],
)


def engine_imports(path: Path) -> Iterator[tuple[str, list[str]]]:
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "graveler" or node.module.startswith("graveler."):
                yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("graveler."):
                    yield alias.name, []


def private_imports(path: Path, rel: str = "") -> list[str]:
    """What ``path`` imports from graveler beyond the public API."""
    found = []
    for module, names in engine_imports(path):
        if (rel, module) in PENDING:
            continue
        if module != "graveler":
            found += [] if module in PUBLIC_MODULES else [module]
            continue
        public = {*graveler.__all__, "__version__"}
        found += [
            f"graveler.{n}"
            for n in names
            if n not in public and f"graveler.{n}" not in PUBLIC_MODULES
        ]
    return found


@pytest.mark.parametrize("path", CLIENT_SOURCES, ids=lambda p: str(p.relative_to(TOP)))
def test_providers_use_the_public_api(path: Path):
    rel = path.relative_to(PROVIDERS).as_posix() if PROVIDERS in path.parents else ""
    assert not private_imports(path, rel), f"{path.name} reaches past the public API"


def test_the_public_api_check_sees_private_imports(tmp_path: Path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from graveler import Graveler, views\n"
        "from graveler.storage.committed.merge import MergeStrategy\n"
        "import graveler.storage.refs.schema\n"
        "from graveler.errors import NoChanges\n"
        "from graveler.core.errors import NotFound\n"
    )
    found = private_imports(probe)
    assert found == [
        "graveler.views",
        "graveler.storage.committed.merge",
        "graveler.storage.refs.schema",
        "graveler.core.errors",
    ]


def test_public_names_resolve():
    for name in graveler.__all__:
        assert getattr(graveler, name) is not None
