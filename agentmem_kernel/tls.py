"""mTLS between the gateway and the runtime (PEM files named in `internal.*`)."""

from __future__ import annotations

from pathlib import Path

import grpc

from agentmem_kernel.config import Internal


def _read(path: str, key: str) -> bytes:
    if not path:
        raise SystemExit(f"internal.ca is set, so internal.{key} must be set too")
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise SystemExit(f"cannot read internal.{key} ({path}): {e.strerror}") from None


def runtime_credentials(internal: Internal) -> grpc.ServerCredentials:
    """TLS that requires a client certificate signed by the internal CA."""
    return grpc.ssl_server_credentials(
        [
            (
                _read(internal.runtime_key, "runtime_key"),
                _read(internal.runtime_cert, "runtime_cert"),
            )
        ],
        root_certificates=_read(internal.ca, "ca"),
        require_client_auth=True,
    )


def gateway_credentials(internal: Internal) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(
        root_certificates=_read(internal.ca, "ca"),
        private_key=_read(internal.gateway_key, "gateway_key"),
        certificate_chain=_read(internal.gateway_cert, "gateway_cert"),
    )


def peer_names(auth_context: dict[str, list[bytes]]) -> set[str]:
    """The names of the verified client certificate (common name and subject alt names)."""
    names = set()
    for key in ("x509_common_name", "x509_subject_alternative_name"):
        names |= {v.decode() for v in auth_context.get(key, [])}
    return names
