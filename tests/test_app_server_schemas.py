"""The app-server bridge's one definition: the table covers the public API and the event
log, the checked-in JSON Schemas and TypeScript types are what the generator makes, and the
stable surface leaves out what the capability settings call experimental."""

from __future__ import annotations

import filecmp
import json
import subprocess
import sys

import jsonschema
import pytest

from agentmem.app_server import methods, schemas
from agentmem.client import protojson
from agentmem.v1 import events_pb2
from agentmem_kernel import config
from tests.harness import ROOT

CHECKED_IN = ROOT / "schemas" / "app-server"


def _generate(out, *args: str) -> None:
    for generator, folder in (("generate-json-schema", "json"), ("generate-ts", "typescript")):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "agentmem.cli.main",
                "app-server",
                generator,
                "--out",
                str(out / folder),
                *args,
            ],
            check=True,
            cwd=ROOT,
            capture_output=True,
        )


def test_checked_in_schemas_and_types_match_the_generator(tmp_path):
    _generate(tmp_path, "--experimental")
    for folder in ("json", "typescript"):
        new, old = tmp_path / folder, CHECKED_IN / folder
        names = {p.name for p in new.iterdir()}
        assert names == {p.name for p in old.iterdir()}, f"run `make proto`: {folder} differs"
        stale = [n for n in sorted(names) if not filecmp.cmp(new / n, old / n, shallow=False)]
        assert not stale, f"stale {folder} (run `make proto`): {stale}"


def test_every_schema_is_draft_07_and_the_bundle_has_the_envelopes():
    for path in (CHECKED_IN / "json").iterdir():
        document = json.loads(path.read_text())
        assert document["$schema"] == "http://json-schema.org/draft-07/schema#", path.name
        jsonschema.Draft7Validator.check_schema(document)
    bundle = json.loads((CHECKED_IN / "json" / schemas.BUNDLE).read_text())["definitions"]
    requests = {v["properties"]["method"]["enum"][0] for v in bundle["ClientRequest"]["oneOf"]}
    assert requests == {"initialize", *methods.METHODS}
    sent = {v["properties"]["method"]["enum"][0] for v in bundle["ServerNotification"]["oneOf"]}
    assert sent == {"memory/events/stopped", *methods.NOTIFICATIONS}
    set_params = bundle["ThreadMemoryModeSetParams"]
    assert set_params["required"] == ["threadId", "mode"]
    assert bundle["MemoryMode"]["enum"] == ["enabled", "disabled"]
    entry = bundle["ExplanationEntry"]["properties"]
    assert "selectionOrFilterReason" in entry and "reason" not in entry


def test_the_table_covers_every_rpc_and_every_event_kind():
    served = {m.spec.rpc for m in methods.METHODS.values()}
    assert served == {m.name for m in methods.SERVICE.methods} - {"WatchEvents"}
    event = protojson.descriptor_of(events_pb2.Event())
    payloads = {f.name for f in event.oneofs_by_name["payload"].fields}
    assert {n.event for n in methods.NOTIFICATIONS.values()} == payloads
    kinds = {n.kind for n in methods.NOTIFICATIONS.values()}
    assert kinds == set(events_pb2.EventKind.values()) - {events_pb2.EVENT_KIND_UNSPECIFIED}


def test_the_stable_surface_follows_the_capability_settings(tmp_path):
    default = schemas.surface(schemas.experimental_capabilities(), include_experimental=False)
    stable = {name for name, *_ in default.requests}
    assert "memory/foreign/admit" not in stable and "thread/memoryMode/set" in stable
    assert "memory/ownerKeys/registered" not in {n for n, *_ in default.notifications}
    settings_file = tmp_path / "agentmem.yaml"
    settings_file.write_text("capabilities:\n  foreign_sources: on\n  facts: experimental\n")
    _generate(tmp_path / "out", "--config", str(settings_file))
    written = {p.stem for p in (tmp_path / "out" / "json").iterdir()}
    assert "MemoryForeignAdmitParams" in written and "MemoryFactsSearchParams" not in written
    settings = config.load(str(settings_file))
    section = {n: getattr(settings.capabilities, n) for n in config.CAPABILITIES}
    assert schemas.experimental_capabilities(section) == {"facts"}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"threadId": "t", "expectedRevision": 2**63, "mode": "enabled"}, "expectedRevision"),
        ({"threadId": "t", "expectedRevision": 0, "mode": "ENABLED"}, "mode"),
        ({"threadId": "t", "expectedRevision": "0", "mode": "enabled"}, "expectedRevision"),
        ({"threadId": ["t"], "expectedRevision": 0, "mode": "enabled"}, "threadId"),
    ],
)
def test_params_the_schema_refuses_the_handler_refuses(params, field):
    from pydantic import ValidationError

    from agentmem.app_server import errors

    bundle = json.loads((CHECKED_IN / "json" / schemas.BUNDLE).read_text())["definitions"]
    schema = {**bundle["ThreadMemoryModeSetParams"], "definitions": bundle}
    assert not jsonschema.Draft7Validator(schema).is_valid(params)
    with pytest.raises(ValidationError) as refused:
        methods.METHODS["thread/memoryMode/set"].params.model_validate(params)
    failure = errors.invalid_params(refused.value)
    assert [v["field"] for v in failure.data["fieldViolations"]] == [field]
