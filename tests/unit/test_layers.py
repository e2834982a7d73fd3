"""The dependency rule, read from the import statements (function-local ones included):

    launcher (agentmem_launcher)        starts the services by module name, never imports them
    client side (agentmem.*)            protocol_svc/, runtime_svc/
        |                                   |
        |                               kernel (agentmem_kernel)
        |                                   |
    contract (agentmem.contract, agentmem.v1): protobuf, gRPC and regex only

Nothing imports upward or across: the client side never imports the kernel, a service or the
launcher; the kernel never the client side; neither service the other."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ["agentmem", "agentmem_kernel", "agentmem_launcher", "protocol_svc", "runtime_svc"]
CONTRACT, CLIENT, KERNEL, LAUNCHER = "contract", "client", "kernel", "launcher"
RUNTIME, GATEWAY = "runtime_svc", "protocol_svc"
# What each layer may import of ours.
ALLOWED: Mapping[str, set[str]] = {
    CONTRACT: {CONTRACT},
    CLIENT: {CONTRACT, CLIENT},
    KERNEL: {CONTRACT, KERNEL},
    GATEWAY: {CONTRACT, KERNEL, GATEWAY},
    RUNTIME: {CONTRACT, KERNEL, RUNTIME},
    LAUNCHER: {CONTRACT, CLIENT, KERNEL, LAUNCHER},
}
# Besides the standard library, all the contract may import.
# (regex: Unicode's character properties, for what text hides from a person.)
CONTRACT_LIBRARIES = {"google", "grpc", "grpc_status", "regex"}
# The client's command line module: the launcher names it only to start the console.
CLIENT_CLI = "agentmem.cli.main"


def layer(module: str) -> str | None:
    """The layer of one of our modules (None: not ours)."""
    top, _, rest = module.partition(".")
    if top == "agentmem":
        return CONTRACT if rest.split(".")[0] in ("contract", "v1") else CLIENT
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
    """Each import (and launch) that breaks the rule, as `path:line: what`."""
    found = []
    for path, source in sources.items():
        own = layer(module_of(path))
        if own is None:
            continue
        for line, name in imported(source):
            other = layer(name)
            if other is None:
                library = name.split(".")[0]
                if own == CONTRACT and not (
                    library in CONTRACT_LIBRARIES or library in sys.stdlib_module_names
                ):
                    found.append(f"{path}:{line}: the contract imports {name}")
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
    return found


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
        "agentmem/mcp_schemas.py": "from protocol_svc import schema\n",
        "agentmem_launcher/servers.py": (
            'import sys\nbase = [sys.executable, "-P", "-m", "agentmem.cli.main"]\n'
            'argv = [*base, "runtime"]\n'
        ),
        "agentmem/app_server/schemas.py": "from agentmem_kernel import config\n",
        "agentmem_kernel/tls.py": "from agentmem.client import Client\n",
        "agentmem/contract/errors.py": "import sqlalchemy\n",
        "protocol_svc/app.py": "from runtime_svc import app\n",
    }
    found = violations(back)
    assert {f.split(":")[0] for f in found} == set(back), found
    assert len(found) == 9, found  # servers.py: both imports
    launched = 'CONSOLE = "agentmem.cli.main"\nSERVICES = {"runtime": "runtime_svc"}\n'
    assert violations({"agentmem_launcher/servers.py": launched}) == []


def test_the_launcher_starts_each_service_by_its_module_name() -> None:
    from agentmem_launcher import servers

    assert servers.SERVICES == {"runtime": RUNTIME, "gateway": GATEWAY}
    for module in servers.SERVICES.values():
        assert (ROOT / module / "__main__.py").is_file(), module
