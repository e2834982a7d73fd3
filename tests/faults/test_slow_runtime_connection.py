"""A runtime slow to answer a new connection (a loaded machine, a TLS handshake over a busy
network): the gateway gives the connection the time it takes, so the first call through it,
an insert without a request id that the gateway may not retry, is served, not refused with
UNAVAILABLE because the connection was not ready within a fraction of a second."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

from agentmem.client import NO_RETRY, Client
from tests.harness import ADMIN_A, free_port

# Longer than a connection attempt was given (100 ms), far shorter than the call's deadline.
HANDSHAKE_DELAY_S = 1.0


@contextlib.contextmanager
def slow_to_answer(port: int, delay: float) -> Iterator[int]:
    """A TCP relay to `port` on 127.0.0.1 that holds every new connection for `delay`
    seconds before relaying it (the server's first bytes, its HTTP/2 SETTINGS, come that
    late); yields its own port."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def pump(source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def relay(conn: socket.socket) -> None:
        time.sleep(delay)
        with conn, socket.create_connection(("127.0.0.1", port)) as upstream:
            back = threading.Thread(target=pump, args=(upstream, conn), daemon=True)
            back.start()
            pump(conn, upstream)
            back.join()

    def accept() -> None:
        with contextlib.suppress(OSError):
            while not stop.is_set():
                conn, _ = listener.accept()
                threading.Thread(target=relay, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()


def test_the_first_insert_waits_for_a_runtime_slow_to_answer_a_new_connection(make_stack):
    from protocol_svc import app as gateway_app

    stack = make_stack()
    with slow_to_answer(stack.runtime.port, HANDSHAKE_DELAY_S) as relay_port:
        port = free_port()
        gateway = stack.loop.run(
            gateway_app.start(
                stack.settings,
                listen=f"127.0.0.1:{port}",
                runtime_address=f"127.0.0.1:{relay_port}",
            )
        )
        try:
            with Client(f"127.0.0.1:{port}", ADMIN_A.token, retry=NO_RETRY) as client:
                r = client.insert_memory(content="I have a red kayak", timeout=30)
            assert r.revision == 1 and not r.deduplicated
        finally:
            stack.loop.run(gateway.stop())
