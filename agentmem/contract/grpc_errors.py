"""Translation between catalog errors and gRPC statuses (status + google.rpc.ErrorInfo).

The runtime aborts with `to_status(err)`; the gateway passes a runtime status through
unchanged when it carries an agentmem ErrorInfo, and maps transport failures to UNAVAILABLE.
"""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from agentmem.contract.errors import DOMAIN, AgentmemError, Reason


def to_status_proto(err: AgentmemError) -> status_pb2.Status:
    code = grpc.StatusCode[err.entry.status]
    details: list[Message] = [
        error_details_pb2.ErrorInfo(reason=err.reason.value, domain=DOMAIN, metadata=err.metadata)
    ]
    if err.violations:
        details.append(
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=v.field, description=v.description
                    )
                    for v in err.violations
                ]
            )
        )
    if err.reason is Reason.REVISION_MISMATCH:
        details.append(
            error_details_pb2.PreconditionFailure(
                violations=[
                    error_details_pb2.PreconditionFailure.Violation(
                        type="REVISION",
                        subject=err.metadata.get("target", ""),
                        description=f"current revision is {err.metadata.get('current_revision')}",
                    )
                ]
            )
        )
    if err.retry_after is not None:
        delay = duration_pb2.Duration()
        delay.FromMilliseconds(max(1, round(err.retry_after * 1000)))
        details.append(error_details_pb2.RetryInfo(retry_delay=delay))
    packed = []
    for d in details:
        a = any_pb2.Any()
        a.Pack(d)
        packed.append(a)
    return status_pb2.Status(code=getattr(code_pb2, code.name), message=err.message, details=packed)


def to_status(err: AgentmemError) -> grpc.Status:
    return rpc_status.to_status(to_status_proto(err))


def error_info(status: status_pb2.Status | None) -> error_details_pb2.ErrorInfo | None:
    if status is None:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            if info.domain == DOMAIN:
                return info
    return None


def status_of_call(err: grpc.RpcError) -> status_pb2.Status | None:
    """The rich status a call failed with, or None when it carries none."""
    try:
        # from_call reads only what every RpcError has (its code, details and trailing
        # metadata), though its stub asks for a grpc.Call.
        status = rpc_status.from_call(err)  # type: ignore[arg-type]  # any RpcError will do
    except ValueError:
        return None
    return status if isinstance(status, status_pb2.Status) else None


def reason_of(err: grpc.RpcError) -> str | None:
    info = error_info(status_of_call(err))
    return info.reason if info else None
