"""How the gateway calls the runtime: its own internal credential plus a CallContext.

The caller's token never travels to the runtime; the runtime trusts the context only after
checking the internal credential (and, in deployment, the gateway's client certificate).
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable

from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb

CONTEXT_KEY = "agentmem-call-context-bin"
PRINCIPAL_KINDS = {
    "user": rpb.PRINCIPAL_KIND_USER,
    "agent": rpb.PRINCIPAL_KIND_AGENT,
    "service": rpb.PRINCIPAL_KIND_SERVICE,
}
CREDENTIAL_KEY = "agentmem-internal-credential"


def metadata(credential: str, context: rpb.CallContext) -> tuple[tuple[str, str | bytes], ...]:
    return ((CREDENTIAL_KEY, credential), (CONTEXT_KEY, context.SerializeToString()))


def read(
    expected_credential: str, invocation_metadata: Iterable[tuple[str, str | bytes]] | None
) -> rpb.CallContext | None:
    """The call context when the credential matches, else None."""
    values = dict(invocation_metadata or ())
    presented = values.get(CREDENTIAL_KEY)
    raw = values.get(CONTEXT_KEY)
    if not expected_credential or not isinstance(presented, str) or not isinstance(raw, bytes):
        return None
    if not hmac.compare_digest(presented.encode(), expected_credential.encode()):
        return None
    try:
        return rpb.CallContext.FromString(raw)
    except Exception:  # a malformed context is an unauthenticated call
        return None
