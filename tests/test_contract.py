"""The contract: generated code and schemas are fresh, every RPC has a policy entry."""

from __future__ import annotations

import json
import subprocess
import sys

from agentmem.v1 import memory_service_pb2
from protocol_svc import validation
from protocol_svc.policy import POLICY, SERVICE
from tests.harness import ROOT


def test_generated_code_and_schemas_are_not_stale():
    result = subprocess.run(
        [sys.executable, "scripts/codegen.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_rpc_has_exactly_one_policy_entry_and_validator():
    methods = {f"/{SERVICE.full_name}/{m.name}" for m in SERVICE.methods}
    assert methods, "the service has methods"
    assert set(POLICY) == methods
    # each request that says something has its validator, by its type
    requests = {m.input_type.full_name for m in SERVICE.methods}
    checked = {t.DESCRIPTOR.full_name for t in validation.VALIDATORS}
    assert checked <= requests
    for m in SERVICE.methods:
        assert m.input_type.full_name in checked or not m.input_type.fields, m.name
    for rule in POLICY.values():
        assert rule.scope.startswith("memory.")


def test_schema_has_every_public_message():
    bundle = json.loads((ROOT / "schemas" / "agentmem.v1.schema.json").read_text())
    names = {
        f"agentmem.v1.{m}"
        for f in [memory_service_pb2.DESCRIPTOR, *memory_service_pb2.DESCRIPTOR.dependencies]
        if f.package == "agentmem.v1"
        for m in f.message_types_by_name
    }
    assert names and names <= set(bundle["$defs"])
    req = bundle["$defs"]["agentmem.v1.SetThreadMemoryModeRequest"]["properties"]
    assert set(req) == {"threadId", "expectedRevision", "mode", "requestId"}
    assert bundle["$defs"]["agentmem.v1.MemoryMode"]["enum"][1] == "MEMORY_MODE_ENABLED"
