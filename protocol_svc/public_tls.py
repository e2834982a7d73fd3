"""TLS on the gateway's public port, and the rule that plaintext stays on loopback.

Bearer tokens travel in call metadata: in plaintext anyone on the path reads them. So the
gateway serves TLS when `gateway.tls_cert`/`tls_key` are set, and otherwise refuses to
start on an address other than loopback unless `gateway.allow_plaintext` says so (a TLS
terminating proxy or mesh in front of it, for instance).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import grpc

from agentmem_kernel.config import Gateway


def is_loopback(listen: str) -> bool:
    host = listen.rpartition(":")[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name, empty or 0.0.0.0-like: may be reachable from outside


def server_credentials(gateway: Gateway, listen: str) -> grpc.ServerCredentials | None:
    """TLS credentials, or None for plaintext where plaintext is allowed."""
    if gateway.tls_cert:
        try:
            key = Path(gateway.tls_key).read_bytes()
            cert = Path(gateway.tls_cert).read_bytes()
        except OSError as e:
            raise SystemExit(f"cannot read gateway.tls_cert / tls_key: {e.strerror}") from None
        return grpc.ssl_server_credentials([(key, cert)])
    if not (is_loopback(listen) or gateway.allow_plaintext):
        raise SystemExit(
            f"refusing to serve plaintext on {listen}: bearer tokens would cross the network "
            "in the clear. Set gateway.tls_cert and gateway.tls_key, listen on loopback, or "
            "set gateway.allow_plaintext: true if TLS ends in front of the gateway"
        )
    return None
