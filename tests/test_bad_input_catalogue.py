"""The bad-input catalogue, generated from the service descriptors: for every public RPC and
every field (one level into nested messages, map entries included), empty, over-long,
wrong-type, unknown-enum, NUL, non-normalised and out-of-range values, plus crafted page
tokens and raw undecodable bytes. Every response is OK or a catalogued error with ErrorInfo
whose status matches the catalog, never INTERNAL or UNKNOWN, and never echoes the input."""

from __future__ import annotations

import base64
import json
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
from google.protobuf import descriptor as d
from google.protobuf import message_factory
from google.protobuf.message import Message
from google.rpc import error_details_pb2

from agentmem.contract.errors import CATALOG, DOMAIN, Reason
from agentmem.contract.grpc_errors import status_of_call
from protocol_svc.policy import SERVICE
from tests.harness import ADMIN_A
from tests.memory_helpers import insert
from tests.test_field_names import resolves

MARK = "Zq9"  # in every generated string, so that an echo is found
F = d.FieldDescriptor
INT_RANGES = {
    F.TYPE_INT32: (-(2**31), 2**31 - 1),
    F.TYPE_SINT32: (-(2**31), 2**31 - 1),
    F.TYPE_INT64: (-(2**63), 2**63 - 1),
    F.TYPE_SINT64: (-(2**63), 2**63 - 1),
    F.TYPE_UINT32: (0, 2**32 - 1),
    F.TYPE_UINT64: (0, 2**64 - 1),
}
STRINGS = [
    "",
    MARK * 1500,  # over-long
    f"{MARK}\x00nul",
    f"{MARK}e\u0301",  # not NFC
    f" {MARK} ",
    f"{MARK}\u202e\u200b",
    f"{MARK}\n\t",
]


def _old_style_token(position: int) -> str:
    raw = json.dumps({"q": "0" * 24, "p": position}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


PAGE_TOKENS = [_old_style_token(2**70), _old_style_token(-1), f"{MARK}.{MARK}", "." * 10]


# An unknown field 1000 holding 4 MiB + 1 byte: just over the default message size limit.
_BIG = 4 * 1024 * 1024 + 1
OVERSIZED = bytes([(1000 << 3 | 2) & 0x7F | 0x80, (1000 << 3 | 2) >> 7])
OVERSIZED += bytes([(_BIG & 0x7F) | 0x80, ((_BIG >> 7) & 0x7F) | 0x80, (_BIG >> 14) & 0x7F | 0x80])
OVERSIZED += bytes([_BIG >> 21]) + b"\0" * _BIG


@dataclass(frozen=True)
class Case:
    method: d.MethodDescriptor
    label: str
    payload: bytes


def _scalars(field: d.FieldDescriptor) -> list[object]:
    t = field.type
    if t == F.TYPE_STRING:
        return STRINGS + (PAGE_TOKENS if field.name == "page_token" else [])
    if t == F.TYPE_BYTES:
        return [b"", b"\x00" * 5000]
    if t in INT_RANGES:
        low, high = INT_RANGES[t]
        return sorted({low, -1 if low < 0 else 0, high})
    if t == F.TYPE_BOOL:
        return [True]
    if t == F.TYPE_ENUM:
        return [999, -7]
    if t in (F.TYPE_DOUBLE, F.TYPE_FLOAT):
        return [math.nan, math.inf, -1e300]
    return []


def _is_map(field: d.FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _set(msg: Message, field: d.FieldDescriptor, value: object) -> None:
    if field.is_repeated:
        getattr(msg, field.name).append(value)
    else:
        setattr(msg, field.name, value)


def _baseline(msg_type: type[Message]) -> Message:
    """A plausible request: every singular scalar set to an ordinary value, so that a bad
    value in one field is checked by itself, not hidden behind another empty field."""
    m = msg_type()
    for field in msg_type.DESCRIPTOR.fields:
        if field.is_repeated or field.type == F.TYPE_MESSAGE or field.name in NOT_IN_BASELINE:
            continue
        if field.type == F.TYPE_STRING:
            setattr(m, field.name, "lighthouse")
        elif field.type == F.TYPE_ENUM:
            setattr(m, field.name, field.enum_type.values[-1].number)
        elif field.type in INT_RANGES:
            setattr(m, field.name, 1)
    return m


NOT_IN_BASELINE = {"page_token", "after_sequence", "validate_only", "include_content"}


def _variants(msg_type: type[Message], depth: int = 0) -> Iterator[tuple[str, Message]]:
    """(label, request) pairs: the baseline with one field given one bad value."""

    def msg_type_():  # the baseline, fresh for each variant
        return _baseline(msg_type)

    for field in msg_type.DESCRIPTOR.fields:
        if _is_map(field):
            key_values = [(f"{MARK}\x00", "v"), ("k", MARK * 1500), (MARK * 100, ""), ("", "v")]
            for k, v in key_values:
                m = msg_type_()
                getattr(m, field.name)[k] = v
                yield f"{field.name}[map {len(k)}:{len(v)}]", m
            m = msg_type_()
            for i in range(300):
                getattr(m, field.name)[f"k{i}"] = "v"
            yield f"{field.name}[300 entries]", m
            continue
        if field.type == F.TYPE_MESSAGE:
            if field.message_type.full_name == "google.protobuf.Timestamp":
                for seconds, nanos in TIMESTAMPS:
                    m = msg_type_()
                    _set_time(m, field, seconds, nanos)
                    yield f"{field.name}=Timestamp({seconds}, {nanos})", m
                continue
            if field.message_type.full_name.startswith("google.protobuf"):
                continue
            if depth >= 2:
                continue
            m = msg_type_()
            if field.is_repeated:
                getattr(m, field.name).add()
                yield f"{field.name}[empty element]", m
                m = msg_type_()
                for _ in range(1000):
                    getattr(m, field.name).add()
                yield f"{field.name}[1000 elements]", m
                element_type = type(getattr(msg_type_(), field.name).add())
                for label, sub in _variants(element_type, depth + 1):
                    m = msg_type_()
                    getattr(m, field.name).append(sub)
                    yield f"{field.name}[].{label}", m
                continue
            getattr(m, field.name).SetInParent()
            yield f"{field.name}={{}}", m
            for label, sub in _variants(type(getattr(m, field.name)), depth + 1):
                m = msg_type_()
                getattr(m, field.name).CopyFrom(sub)
                yield f"{field.name}.{label}", m
            continue
        for value in _scalars(field):
            m = msg_type_()
            _set(m, field, value)
            yield f"{field.name}={_short(value)}", m
        if field.is_repeated and _scalars(field):
            m = msg_type_()
            getattr(m, field.name).extend([_scalars(field)[-1]] * 1000)
            yield f"{field.name}[1000 values]", m


# (seconds, nanos): out of a Timestamp's range, or its nanos not a fraction of a second;
# 0 (the epoch), the last second a Timestamp holds, and over ten years from now.
TIMESTAMPS = [
    (253_402_300_800, 0),
    (-62_135_596_801, 0),
    (-(2**63), 0),
    (2**63 - 1, 0),
    (1_700_000_000, -1),
    (1_700_000_000, 1_000_000_000),
    (0, 0),
    (253_402_300_799, 999_999_999),
    (2_100_000_000, 0),
]


def _set_time(msg: Message, field: d.FieldDescriptor, seconds: int, nanos: int) -> None:
    target = getattr(msg, field.name).add() if field.is_repeated else getattr(msg, field.name)
    target.seconds, target.nanos = seconds, nanos


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:20]}...({len(text)})"


def _wrong_wire_types(msg_type: type[Message]) -> Iterator[tuple[str, bytes]]:
    """Each field number sent with a wire type it does not have."""
    for field in msg_type.DESCRIPTOR.fields:
        number = field.number
        if field.type in (F.TYPE_STRING, F.TYPE_BYTES, F.TYPE_MESSAGE) or (field.is_repeated):
            yield f"{field.name}:varint", bytes([(number << 3) | 0, 1]) if number < 16 else b""
        else:
            yield f"{field.name}:bytes", bytes([(number << 3) | 2, 3]) + MARK.encode()


def cases() -> Iterator[Case]:
    for method in SERVICE.methods:
        cls = message_factory.GetMessageClass(method.input_type)
        yield Case(method, "empty", b"")
        yield Case(method, "undecodable", b"\xff\xff\xff\xff")
        yield Case(method, "invalid-utf8", bytes([(1 << 3) | 2, 2, 0xC3, 0x28]))
        yield Case(method, "oversized", OVERSIZED)
        for label, msg in _variants(cls):
            yield Case(method, label, msg.SerializeToString())
        for label, raw in _wrong_wire_types(cls):
            if raw:
                yield Case(method, label, raw)


def _call(channel: grpc.Channel, case: Case) -> grpc.RpcError | None:
    path = f"/{SERVICE.full_name}/{case.method.name}"
    metadata = (("authorization", f"Bearer {ADMIN_A.token}"),)
    try:
        if case.method.server_streaming:
            stream = channel.unary_stream(path)(case.payload, metadata=metadata, timeout=0.5)
            try:
                next(iter(stream), None)
            finally:
                stream.cancel()
        else:
            channel.unary_unary(path)(case.payload, metadata=metadata, timeout=10)
    except grpc.RpcError as e:
        if case.method.server_streaming and e.code() in (
            grpc.StatusCode.CANCELLED,
            grpc.StatusCode.DEADLINE_EXCEEDED,  # an accepted watch with nothing to send
        ):
            return None
        return e
    return None


def _problem(case: Case, e: grpc.RpcError) -> str | None:
    code = e.code().name
    if code in ("INTERNAL", "UNKNOWN"):
        return f"{code}: {e.details()}"
    status = status_of_call(e)
    infos = []
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            infos.append(info)
    if len(infos) != 1 or infos[0].domain != DOMAIN:
        return f"{code} without an agentmem ErrorInfo: {e.details()}"
    info = infos[0]
    if info.reason not in Reason.__members__ or CATALOG[Reason(info.reason)].status != code:
        return f"{code} with reason {info.reason} not catalogued for that status"
    # The resource a caller named may be the ErrorInfo `target` of a compare-and-swap
    # failure (AIP-193); nothing else it sent may come back.
    visible = e.details() + " ".join(v for k, v in info.metadata.items() if k != "target")
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            visible += " ".join(v.field + v.description for v in bad.field_violations)
            for v in bad.field_violations:
                if not resolves(case.method.input_type, v.field):
                    return f"{code} names {v.field}, not a field of the request"
    if MARK in visible:
        return f"{code} echoes the input"
    return None


def test_every_rpc_and_field_answers_ok_or_a_catalogued_error(stack):
    client = stack.client()
    insert(client, "a memory about lighthouses")  # some data for the reads
    all_cases = list(cases())
    assert {c.method.name for c in all_cases} == {m.name for m in SERVICE.methods}
    problems, codes = [], Counter()
    with grpc.insecure_channel(stack.address) as channel:
        for case in all_cases:
            error = _call(channel, case)
            codes[error.code().name if error else "OK"] += 1
            if error is not None:
                problem = _problem(case, error)
                if problem:
                    problems.append(f"{case.method.name} {case.label}: {problem}")
    assert not problems, "\n".join(problems[:40])
    assert len(all_cases) > 500
    assert {"OK", "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"} <= set(codes), codes
