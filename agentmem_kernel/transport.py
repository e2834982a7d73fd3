"""gRPC channel and server options from one `transport` config section, for both hops.

Keepalive must agree across a connection: a client that pings more often than its server
accepts is answered GOAWAY `too_many_pings`, which kills every call on that connection
(an idle watch first). So servers accept pings every `min_ping_interval`, which the config
forces to be no longer than the clients' `keepalive_time`.

Message size: requests up to `max_message_bytes` are served. Larger ones, up to
`TRANSPORT_CEILING` times that, still reach the guard, which refuses them with
RESOURCE_EXHAUSTED / MESSAGE_TOO_LARGE and the limit in ErrorInfo; beyond the ceiling gRPC
refuses them itself (RESOURCE_EXHAUSTED without ErrorInfo) before reading them whole.
Request metadata the same way, with `max_metadata_bytes`: gRPC's own limits (soft and
hard alike, so no request between them is refused at random) sit at the ceiling.
"""

from __future__ import annotations

from agentmem_kernel.config import Transport

TRANSPORT_CEILING = 4


def _ms(seconds: float) -> int:
    return max(int(seconds * 1000), 1)


def server_options(t: Transport) -> list[tuple[str, object]]:
    return [
        ("grpc.max_receive_message_length", t.max_message_bytes * TRANSPORT_CEILING),
        ("grpc.max_send_message_length", t.max_message_bytes),
        ("grpc.max_metadata_size", t.max_metadata_bytes * TRANSPORT_CEILING),
        ("grpc.absolute_max_metadata_size", t.max_metadata_bytes * TRANSPORT_CEILING),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", _ms(t.min_ping_interval)),
        ("grpc.http2.min_recv_ping_interval_without_data_ms", _ms(t.min_ping_interval)),
        # The server pings idle clients too, so a vanished watcher's stream is released.
        ("grpc.keepalive_time_ms", _ms(t.keepalive_time)),
        ("grpc.keepalive_timeout_ms", _ms(t.keepalive_timeout)),
    ]


def channel_options(t: Transport) -> list[tuple[str, object]]:
    return [
        ("grpc.keepalive_time_ms", _ms(t.keepalive_time)),
        ("grpc.keepalive_timeout_ms", _ms(t.keepalive_timeout)),
        # Ping only while a call (such as a watch) is open, and keep pinging however long
        # it stays idle (the default stops after two pings without data).
        ("grpc.keepalive_permit_without_calls", 0),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.min_sent_ping_interval_without_data_ms", _ms(t.keepalive_time)),
        ("grpc.max_send_message_length", t.max_message_bytes),
        ("grpc.max_receive_message_length", t.max_message_bytes),
    ]
