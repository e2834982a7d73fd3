"""The runtime killed with SIGKILL under a write load: nothing acknowledged is lost, and every
in-doubt write is resolved by retrying it with its request_id (stored once, never twice)."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import grpc

from agentmem.client import connect
from agentmem.v1 import sources_pb2
from tests.faults.conftest import wait_until
from tests.harness import ADMIN_A, free_port, reason
from tests.memory_helpers import insert

WRITERS = 6


def test_runtime_kill_under_write_load_loses_nothing_acknowledged(services):
    services.configure(gateway={"default_deadline": 1.0})  # in-doubt calls give up soon
    port = free_port()
    runtime = services.runtime(port)
    gateway = services.gateway(runtime.address)
    acknowledged: dict[str, str] = {}  # request_id -> source_id
    in_doubt: list[str] = []
    codes: Counter[str] = Counter()
    lock, stop = threading.Lock(), threading.Event()

    def write(worker: int) -> None:
        # No client deadline: the gateway's default_deadline bounds its retries of the
        # runtime, so writes in flight when it dies end UNAVAILABLE within a second.
        with connect(gateway.address, ADMIN_A.token, timeout=None) as client:
            n = 0
            while not stop.is_set():
                request_id = f"w{worker}-{n}"
                n += 1
                try:
                    r = insert(client, f"note {request_id} about kites", request_id=request_id)
                except grpc.RpcError as e:
                    with lock:
                        codes[e.code().name] += 1
                        in_doubt.append(request_id)
                    assert reason(e) is not None, e  # every failure is a catalogued one
                else:
                    with lock:
                        codes["OK"] += 1
                        acknowledged[request_id] = r.source_id

    with ThreadPoolExecutor(WRITERS) as pool:
        workers = [pool.submit(write, i) for i in range(WRITERS)]
        wait_until(lambda: codes["OK"] >= 15, what="writes before the kill")
        runtime.kill()  # SIGKILL: writes in flight are in doubt
        wait_until(lambda: codes["UNAVAILABLE"] >= 1, what="writes refused while down")
        runtime = services.runtime(port)
        seen = codes["OK"]
        wait_until(lambda: codes["OK"] >= seen + 15, what="writes after the restart")
        stop.set()
        for w in workers:
            w.result()

    assert set(codes) <= {"OK", "UNAVAILABLE"}, codes
    with connect(gateway.address, ADMIN_A.token) as client:
        # In doubt: retried with the same request_id, each is stored exactly once.
        for request_id in in_doubt:
            r = insert(client, f"note {request_id} about kites", request_id=request_id)
            acknowledged[request_id] = r.source_id
        stored = []
        token = ""
        while True:
            page = client.ListSources(
                sources_pb2.ListSourcesRequest(page_size=1000, page_token=token)
            )
            stored += [s.source_id for s in page.sources]
            token = page.next_page_token
            if not token:
                break
    assert sorted(stored) == sorted(set(acknowledged.values()))  # none lost, none twice
    assert len(set(acknowledged.values())) == len(acknowledged)
