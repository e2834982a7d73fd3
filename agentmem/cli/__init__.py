"""The `agentmem` command: run the services, and call them."""

import os

# gRPC's C core logs connection failures (a TLS handshake with a plaintext server, …) as
# INFO lines on stderr unless told otherwise before it loads; the CLI says what went wrong
# in one line of its own. GRPC_VERBOSITY set by the user still wins.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
