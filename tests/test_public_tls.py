"""TLS on the gateway's public port: certificate and key from config, clients that trust a
CA bundle, and plaintext only on loopback unless explicitly allowed."""

from __future__ import annotations

import asyncio
import ipaddress
import subprocess
import sys

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from agentmem.client import connect
from agentmem.v1 import thread_mode_pb2
from agentmem_kernel import config
from protocol_svc import public_tls
from tests.harness import ADMIN_A, ROOT
from tests.test_mtls import CA

LOOPBACK_SAN = (x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")))


@pytest.fixture
def tls_stack(make_stack, tmp_path):
    ca = CA("agentmem-test-public-ca")
    cert, key = ca.issue("agentmem-gateway", san=LOOPBACK_SAN)
    (tmp_path / "gw.pem").write_bytes(cert)
    (tmp_path / "gw.key").write_bytes(key)
    ca_file = tmp_path / "ca.pem"
    ca_file.write_bytes(ca.cert.public_bytes(serialization.Encoding.PEM))
    stack = make_stack(
        gateway__tls_cert=str(tmp_path / "gw.pem"), gateway__tls_key=str(tmp_path / "gw.key")
    )
    return stack, str(ca_file)


def _read(client):
    return client.ReadThreadMemoryMode(
        thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t1"), timeout=10
    )


def test_tls_gateway_serves_clients_that_trust_its_ca(tls_stack):
    stack, ca_file = tls_stack
    with connect(f"https://127.0.0.1:{stack.gateway.port}", ADMIN_A.token, ca_file=ca_file) as c:
        assert _read(c).revision == 0


def test_tls_only_gateway_refuses_plaintext_clients(tls_stack):
    stack, _ = tls_stack
    plain = connect(f"127.0.0.1:{stack.gateway.port}", ADMIN_A.token)
    with plain, pytest.raises(grpc.RpcError) as err:
        _read(plain)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_client_that_does_not_trust_the_ca_is_refused(tls_stack, tmp_path):
    stack, _ = tls_stack
    other = tmp_path / "other-ca.pem"
    other.write_bytes(CA("someone-else").cert.public_bytes(serialization.Encoding.PEM))
    client = connect(f"https://127.0.0.1:{stack.gateway.port}", ADMIN_A.token, ca_file=str(other))
    with client, pytest.raises(grpc.RpcError) as err:
        _read(client)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_the_cli_speaks_tls_with_a_ca_bundle(tls_stack):
    stack, ca_file = tls_stack
    out = subprocess.run(
        [sys.executable, "-m", "agentmem.cli.main", "thread-mode", "get", "t1", "--json"],
        env={
            "AGENTMEM_ADDR": f"https://127.0.0.1:{stack.gateway.port}",
            "AGENTMEM_TOKEN": ADMIN_A.token,
            "AGENTMEM_CA_FILE": ca_file,
            "PATH": "/usr/bin:/bin",
        },
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert '"thread_id": "t1"' in out.stdout


@pytest.mark.parametrize("listen", ["0.0.0.0:50051", "[::]:50051", "10.1.2.3:50051", "gw:50051"])
def test_plaintext_on_a_non_loopback_address_is_refused(listen):
    with pytest.raises(SystemExit, match="refusing to serve plaintext"):
        public_tls.server_credentials(config.Gateway(), listen)


def test_plaintext_elsewhere_needs_an_explicit_allowance():
    assert public_tls.server_credentials(config.Gateway(allow_plaintext=True), "0.0.0.0:1") is None
    for listen in ("127.0.0.1:50051", "localhost:1", "[::1]:1", "127.0.0.2:1"):
        assert public_tls.server_credentials(config.Gateway(), listen) is None


def test_the_gateway_does_not_start_in_plaintext_on_a_public_address():
    from protocol_svc import app as gateway_app

    settings = config.load(None, {"internal.token": "x", "gateway.listen": "0.0.0.0:0"})
    with pytest.raises(SystemExit, match="refusing to serve plaintext"):
        asyncio.run(gateway_app.start(settings))


def test_a_certificate_without_its_key_is_a_configuration_error():
    with pytest.raises(config.ConfigError, match="tls_key"):
        config.load(None, {"gateway.tls_cert": "/x.pem"})
