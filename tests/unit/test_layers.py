"""The dependency rule, read from the import statements (function-local ones included):

    launcher (agentmem_launcher)           starts the services by module name, never imports them
    surfaces: agentmem.cli | agentmem.mcp | agentmem.app_server | agentmem.console
        |           (none imports another; each adds its `agentmem` commands through an
        |            entry point, agentmem/client/commands.py)
    client (agentmem.client, agentmem)     protocol_svc/, runtime_svc/
        |                                      |
        |                                  kernel (agentmem_kernel)
        |                                      |
    process (agentmem.process): listening, logs, private files
    contract (agentmem.contract, agentmem.v1): protobuf, gRPC and regex only

Nothing imports upward or across: the client side never imports the kernel, a service or the
launcher; a surface never another surface; the kernel never the client side; neither
service the other.

Inside the runtime (runtime_svc/), folders stand on floors, and a folder imports only its own
modules and those of the floors below it:

    grpc/ and the top-level modules       the servicer and the wiring (app, composition, ...)
    services/                             the use cases
    retrieval/   assembly/                ranking; the prompt block
    storage/     adapters/                SQLAlchemy: the tables, the write path; libraries
    domain/                               pure rules

So storage never imports retrieval or assembly, and those two never each other. They are
entered through their faces only: from outside `runtime_svc/retrieval/` nothing imports a
module of it but `runtime_svc.retrieval` itself (likewise assembly). And no two runtime
modules import each other, directly or round a circle (imports under TYPE_CHECKING and inside
functions count: hiding one there does not make it go away)."""

from __future__ import annotations

import ast
import sys
from collections import deque
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ["agentmem", "agentmem_kernel", "agentmem_launcher", "protocol_svc", "runtime_svc"]
CONTRACT, PROCESS, CLIENT, KERNEL, LAUNCHER = "contract", "process", "client", "kernel", "launcher"
RUNTIME, GATEWAY = "runtime_svc", "protocol_svc"
# The client's surfaces (agentmem's subpackages), each a layer of its own.
SURFACES = ("cli", "mcp", "app_server", "console")
BASE = {CONTRACT, PROCESS}
# What each layer may import of ours.
ALLOWED: Mapping[str, set[str]] = {
    CONTRACT: {CONTRACT},
    PROCESS: BASE,
    CLIENT: BASE | {CLIENT},
    **{surface: BASE | {CLIENT, surface} for surface in SURFACES},
    KERNEL: BASE | {KERNEL},
    GATEWAY: BASE | {KERNEL, GATEWAY},
    RUNTIME: BASE | {KERNEL, RUNTIME},
    LAUNCHER: BASE | {CLIENT, KERNEL, LAUNCHER, *SURFACES},  # the top: it serves them
}
# Besides the standard library, all the contract may import.
# (regex: Unicode's character properties, for what text hides from a person.)
CONTRACT_LIBRARIES = {"google", "grpc", "grpc_status", "regex"}
# The client's command line module: the launcher names it only to start the console.
CLIENT_CLI = "agentmem.cli.main"
# The runtime's floors, bottom first; above them `TOP`, which may import any of the runtime.
FLOORS = [("domain",), ("storage", "adapters"), ("retrieval", "assembly"), ("services",)]
TOP = ("grpc",)  # and the modules at the runtime's top level
# Packages entered only through their face (their `__init__.py`) from outside.
FACES = ("retrieval", "assembly")


def layer(module: str) -> str | None:
    """The layer of one of our modules (None: not ours)."""
    top, _, rest = module.partition(".")
    if top == "agentmem":
        sub = rest.split(".")[0]
        if sub in ("contract", "v1"):
            return CONTRACT
        if sub == PROCESS or sub in SURFACES:
            return sub
        return CLIENT
    return {
        "agentmem_kernel": KERNEL,
        "agentmem_launcher": LAUNCHER,
        "protocol_svc": GATEWAY,
        "runtime_svc": RUNTIME,
    }.get(top)


def module_of(path: str) -> str:
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(source: str) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:  # `from agentmem import client`: the module itself
                yield node.lineno, f"{node.module}.{alias.name}"


def violations(sources: Mapping[str, str]) -> list[str]:
    """Each import (and launch) that breaks the rule, as `path:line: what`, and each import
    circle of the runtime."""
    found = []
    modules = _modules(sources)
    for path, source in sources.items():
        own = layer(module_of(path))
        if own is None:
            continue
        if own == RUNTIME:
            found += _runtime_violations(path, source, modules)
        for line, name in imported(source):
            other = layer(name)
            if other is None:
                library = name.split(".")[0]
                if own in BASE and not (
                    library in CONTRACT_LIBRARIES or library in sys.stdlib_module_names
                ):
                    found.append(f"{path}:{line}: the {own} imports {name}")
            elif other not in ALLOWED[own] and not _package_of(name, path):
                what = f"{path}:{line}: {own} imports {other}"
                if what not in found:  # one line per statement
                    found.append(what)
        if own == LAUNCHER:
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Assign) and _is_console(node):
                    continue
                for c in ast.walk(node) if isinstance(node, ast.Assign) else ():
                    if isinstance(c, ast.Constant) and c.value == CLIENT_CLI:
                        found.append(
                            f"{path}:{c.lineno}: starts {CLIENT_CLI}; a service starts by "
                            "its own module name"
                        )
    return found + circles(sources)


def _folder(path: str) -> str | None:
    """The runtime folder a file of the runtime is in (None: a top-level module)."""
    parts = Path(path).parts
    return parts[1] if parts[0] == RUNTIME and len(parts) > 2 else None


def _allowed(folder: str | None) -> set[str] | None:
    """The runtime folders a folder may import (None: any, at the top)."""
    for n, floor in enumerate(FLOORS):
        if folder in floor:
            return {folder, *(f for below in FLOORS[:n] for f in below)}
    return None


def _runtime_violations(path: str, source: str, modules: set[str]) -> list[str]:
    """Imports of a runtime module against its folder's floor, or past a face."""
    found: dict[tuple[int, str], str] = {}  # one line per statement and rule
    own = _folder(path)
    allowed = _allowed(own)
    for line, name in imported(source):
        if not name.startswith(f"{RUNTIME}."):
            continue
        other = name.split(".")[1]
        if allowed is not None and other not in allowed:
            what = f"{path}:{line}: runtime_svc/{own} imports runtime_svc/{other}"
            found.setdefault((line, "floor"), what)
        face = f"{RUNTIME}.{other}"
        if other in FACES and own != other and name != face and name in modules:
            what = f"{path}:{line}: imports {name}, not the face {face}"
            found.setdefault((line, "face"), what)
    return list(found.values())


def circles(sources: Mapping[str, str]) -> list[str]:
    """The runtime's import circles, each as `import circle: a -> b -> a` (Tarjan's strongly
    connected components over the module graph)."""
    modules = _modules(sources)
    graph = {
        module_of(path): sorted(_targets(source, modules) - {module_of(path)})
        for path, source in sources.items()
        if module_of(path).split(".")[0] == RUNTIME
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[str] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append("import circle: " + " -> ".join(_round(sorted(part), graph)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _round(part: list[str], graph: Mapping[str, list[str]]) -> list[str]:
    """The shortest way round a circle of modules (a strongly connected component), from its
    first module back to it."""
    inside, start = set(part), part[0]
    came: dict[str, str] = {}
    queue = deque([start])
    while queue:
        at = queue.popleft()
        for w in graph[at]:
            if w == start:
                back = [at]
                while back[-1] != start:
                    back.append(came[back[-1]])
                return [*reversed(back), start]
            if w in inside and w not in came:
                came[w] = at
                queue.append(w)
    raise AssertionError(f"no way round {part}")


def _targets(source: str, modules: set[str]) -> set[str]:
    """The runtime modules a source imports: `from package import module` imports that
    module (its package is already initialised, or being), anything else the module named."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            named = {f"{node.module}.{a.name}" for a in node.names}
            submodules = named & modules
            out |= submodules
            if len(submodules) < len(named) and node.module in modules:
                out.add(node.module)
    return {m for m in out if m.split(".")[0] == RUNTIME}


def _modules(sources: Mapping[str, str]) -> set[str]:
    """Every module of the checkout, and those of `sources` (which may be made up)."""
    return _tree() | {module_of(path) for path in sources}


@cache
def _tree() -> set[str]:
    return {module_of(path) for path in sources()}


def _package_of(name: str, path: str) -> bool:
    """`from agentmem import mcp_tools` inside agentmem/: a module naming its own package."""
    return name == module_of(path).rpartition(".")[0]


def _is_console(node: ast.Assign) -> bool:
    return [getattr(t, "id", None) for t in node.targets] == ["CONSOLE"]


def sources() -> dict[str, str]:
    return {
        str(p.relative_to(ROOT)): p.read_text()
        for folder in FOLDERS
        for p in sorted((ROOT / folder).rglob("*.py"))
        if "_pb2" not in p.name and "migrations/versions" not in p.as_posix()
    }


def test_no_module_imports_against_the_rule() -> None:
    found = violations(sources())
    assert not found, "imports against the dependency rule:\n" + "\n".join(found)


def test_every_folder_is_a_layer() -> None:
    assert all(layer(module_of(path)) for path in sources())


def test_the_rule_refuses_the_back_imports_it_replaced() -> None:
    back = {
        "agentmem/cli/servers.py": "from runtime_svc import app\nfrom protocol_svc import app\n",
        "agentmem/app_server/methods.py": "from protocol_svc.policy import POLICY\n",
        "agentmem/mcp/schemas.py": "from protocol_svc import schema\n",
        "agentmem_launcher/servers.py": (
            'import sys\nbase = [sys.executable, "-P", "-m", "agentmem.cli.main"]\n'
            'argv = [*base, "runtime"]\n'
        ),
        "agentmem/app_server/schemas.py": "from agentmem_kernel import config\n",
        "agentmem_kernel/tls.py": "from agentmem.client import Client\n",
        "agentmem/contract/errors.py": "import sqlalchemy\n",
        "protocol_svc/app.py": "from runtime_svc import app\n",
        # the surfaces' imports of each other, before each added its commands by entry point
        "agentmem/cli/main.py": (
            "from agentmem.app_server import cli as app_server\n"
            "from agentmem.console import server\n"
        ),
        "agentmem/mcp/values.py": "from agentmem.app_server.protojson import enum_values\n",
        "agentmem/client/json_output.py": "from agentmem.cli import render\n",
        "agentmem/process/logs.py": "from agentmem.client import Client\n",
    }
    found = violations(back)
    assert {f.split(":")[0] for f in found} == set(back), found
    assert len(found) == 14, found  # servers.py and main.py: both imports
    launched = 'CONSOLE = "agentmem.cli.main"\nSERVICES = {"runtime": "runtime_svc"}\n'
    assert violations({"agentmem_launcher/servers.py": launched}) == []


def test_the_launcher_starts_each_service_by_its_module_name() -> None:
    from agentmem_launcher import servers

    assert servers.SERVICES == {"runtime": RUNTIME, "gateway": GATEWAY}
    for module in servers.SERVICES.values():
        assert (ROOT / module / "__main__.py").is_file(), module


def test_every_runtime_folder_stands_on_a_floor() -> None:
    folders = {p.name for p in (ROOT / RUNTIME).iterdir() if (p / "__init__.py").is_file()}
    placed = {f for floor in FLOORS for f in floor} | set(TOP)
    assert folders == placed, "place a new folder of runtime_svc/ on a floor (FLOORS)"


def test_the_runtime_has_no_import_circles() -> None:
    found = circles(sources())
    assert not found, "\n".join(found)


def test_the_runtimes_floors_refuse_an_import_upward() -> None:
    upward = {
        # the import storage once made of search (what a hit shows of its source)
        "runtime_svc/storage/transaction.py": "from runtime_svc.retrieval import Hit\n",
        "runtime_svc/storage/said.py": "from runtime_svc.assembly import Candidate\n",
        "runtime_svc/domain/fusion.py": "from runtime_svc.storage import read_rows\n",
        "runtime_svc/retrieval/semantic.py": "from runtime_svc.services.clock import Clock\n",
        "runtime_svc/assembly/block.py": "from runtime_svc.retrieval import Hit\n",
        "runtime_svc/services/retrieval.py": "from runtime_svc.grpc import mapping\n",
    }
    assert sorted(violations(upward)) == [
        "runtime_svc/assembly/block.py:1: runtime_svc/assembly imports runtime_svc/retrieval",
        "runtime_svc/domain/fusion.py:1: runtime_svc/domain imports runtime_svc/storage",
        "runtime_svc/retrieval/semantic.py:1: runtime_svc/retrieval imports runtime_svc/services",
        "runtime_svc/services/retrieval.py:1: runtime_svc/services imports runtime_svc/grpc",
        "runtime_svc/storage/said.py:1: runtime_svc/storage imports runtime_svc/assembly",
        "runtime_svc/storage/transaction.py:1: runtime_svc/storage imports runtime_svc/retrieval",
    ]
    downward = {
        "runtime_svc/services/retrieval.py": (
            "from runtime_svc import assembly, retrieval\n"
            "from runtime_svc.storage.transaction import Transaction\n"
        ),
        "runtime_svc/retrieval/hits.py": "from runtime_svc.storage import shown_sources\n",
        "runtime_svc/grpc/mapping.py": "from runtime_svc.assembly import Part\n",
    }
    assert violations(downward) == []


def test_retrieval_and_assembly_are_entered_through_their_faces() -> None:
    past = {
        "runtime_svc/services/retrieval.py": (
            "from runtime_svc.retrieval.lexical.lexical_search import LexicalSearch\n"
        ),
        "runtime_svc/grpc/mapping.py": "from runtime_svc.assembly.message_parts import Part\n",
        "runtime_svc/app.py": "from runtime_svc.retrieval import held\n",  # a sub-package
        "runtime_svc/startup.py": "import runtime_svc.retrieval.vectors.vector_sql\n",
    }
    assert sorted(violations(past)) == [
        "runtime_svc/app.py:1: imports runtime_svc.retrieval.held, "
        "not the face runtime_svc.retrieval",
        "runtime_svc/grpc/mapping.py:1: imports runtime_svc.assembly.message_parts, "
        "not the face runtime_svc.assembly",
        "runtime_svc/services/retrieval.py:1: imports "
        "runtime_svc.retrieval.lexical.lexical_search, not the face runtime_svc.retrieval",
        "runtime_svc/startup.py:1: imports runtime_svc.retrieval.vectors.vector_sql, "
        "not the face runtime_svc.retrieval",
    ]
    through = {
        "runtime_svc/composition.py": "from runtime_svc.retrieval import Mirrors, Semantic\n",
        "runtime_svc/services/facts.py": "from runtime_svc import retrieval\n",
        # inside the package, its modules import one another by name
        "runtime_svc/retrieval/semantic.py": (
            "from runtime_svc.retrieval.vectors import signatures\n"
        ),
    }
    assert violations(through) == []


def test_an_import_circle_is_found_however_it_is_hidden() -> None:
    # The runtime's two former circles, one import of each under TYPE_CHECKING or inside a
    # function.
    under_type_checking = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from runtime_svc.domain.assembly import Candidate\n"
    )
    picks = {
        "runtime_svc/domain/assembly.py": "from runtime_svc.domain.passage_picks import own_of\n",
        "runtime_svc/domain/passage_picks.py": under_type_checking,
    }
    assert violations(picks) == [
        "import circle: runtime_svc.domain.assembly -> runtime_svc.domain.passage_picks "
        "-> runtime_svc.domain.assembly"
    ]
    in_a_function = "def writer():\n    from runtime_svc.storage import source_writer\n"
    writer = {
        "runtime_svc/storage/source_writer.py": "from runtime_svc.storage import transaction\n",
        "runtime_svc/storage/transaction.py": in_a_function,
    }
    assert violations(writer) == [
        "import circle: runtime_svc.storage.source_writer -> runtime_svc.storage.transaction "
        "-> runtime_svc.storage.source_writer"
    ]
    # A module importing its own package's face, which imports that module.
    own_face = {
        "runtime_svc/retrieval/__init__.py": "from runtime_svc.retrieval.take import take\n",
        "runtime_svc/retrieval/take.py": "from runtime_svc.retrieval import Hit\n",
    }
    assert violations(own_face) == [
        "import circle: runtime_svc.retrieval -> runtime_svc.retrieval.take "
        "-> runtime_svc.retrieval"
    ]
    # A sibling imported by its module's name is no way round through the face.
    sibling = {
        "runtime_svc/retrieval/__init__.py": "from runtime_svc.retrieval.take import take\n",
        "runtime_svc/retrieval/take.py": "from runtime_svc.retrieval import hits\n",
    }
    assert violations(sibling) == []
