"""The `agentmem` command: run the services, and call them."""

import argparse
import os
from typing import TypeAlias

# `parser.add_subparsers()`, to which each command module adds its commands.
SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

# gRPC's C core logs connection failures (a TLS handshake with a plaintext server, …) as
# INFO lines on stderr unless told otherwise before it loads; the CLI says what went wrong
# in one line of its own. GRPC_VERBOSITY set by the user still wins.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
