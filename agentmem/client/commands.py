"""How a surface adds its commands to `agentmem`.

The command line (`agentmem.cli`) builds its own commands and finds the others through the
entry-point group `COMMANDS`: each names a function given the subparsers, which adds its
commands (the client distribution's `mcp`, `app-server` and `console`; the service's `up`,
`gateway` and `runtime`). So no surface imports another, and a distribution installed
beside the client adds its commands without the client naming it. This module imports
nothing beyond the standard library: the command line reads it before it knows which
command was chosen.
"""

from __future__ import annotations

import argparse
from typing import TypeAlias

COMMANDS = "agentmem.commands"
# `parser.add_subparsers()`, to which each command module adds its commands.
SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

# The environment every command that calls the gateway reads (the client's settings hold
# the same names; that module imports gRPC, this one must not).
ENV_ADDRESS = "AGENTMEM_ADDR"
ENV_TOKEN = "AGENTMEM_TOKEN"
ENV_EXPERIMENTAL = "AGENTMEM_EXPERIMENTAL"
DEFAULT_ADDRESS = "127.0.0.1:50051"
