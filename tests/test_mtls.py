"""mTLS between gateway and runtime, with certificates made in the test."""

from __future__ import annotations

import datetime
import ipaddress

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from agentmem.v1 import memory_service_pb2_grpc, thread_mode_pb2
from agentmem_kernel import internal_call
from agentmem_kernel.runtime.v1 import call_context_pb2 as rpb
from tests.harness import INTERNAL_TOKEN, free_port, health, reason
from tests.test_thread_mode import read


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _cert(name: str, key, issuer_name, issuer_key, *, ca: bool = False, san=()) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(san)), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


class CA:
    def __init__(self, name: str) -> None:
        self.key = _key()
        self.name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        self.cert = _cert(name, self.key, self.name, self.key, ca=True)

    def issue(self, name: str, san=()) -> tuple[bytes, bytes]:
        key = _key()
        cert = _cert(name, key, self.name, self.key, san=san)
        return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)

    def pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)


@pytest.fixture
def pki(tmp_path):
    ca, other = CA("agentmem internal CA"), CA("someone else's CA")
    files = {}

    def write(name: str, data: bytes) -> str:
        path = tmp_path / name
        path.write_bytes(data)
        files[name] = data
        return str(path)

    runtime_cert, runtime_key = ca.issue(
        "agentmem-runtime",
        san=[x509.DNSName("agentmem-runtime"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
    )
    gateway_cert, gateway_key = ca.issue("agentmem-gateway", san=[x509.DNSName("agentmem-gateway")])
    settings = {
        "internal.ca": write("ca.pem", ca.pem()),
        "internal.runtime_cert": write("runtime.pem", runtime_cert),
        "internal.runtime_key": write("runtime.key", runtime_key),
        "internal.gateway_cert": write("gateway.pem", gateway_cert),
        "internal.gateway_key": write("gateway.key", gateway_key),
    }
    return ca, other, settings, files


def _direct(address: str, credentials) -> grpc.RpcError:
    context = rpb.CallContext(tenant_id="tenant-a", principal_id="x", scopes=["memory.read"])
    channel = (
        grpc.secure_channel(address, credentials) if credentials else grpc.insecure_channel(address)
    )
    with channel, pytest.raises(grpc.RpcError) as e:
        memory_service_pb2_grpc.MemoryServiceStub(channel).ReadThreadMemoryMode(
            thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id="t1"),
            metadata=internal_call.metadata(INTERNAL_TOKEN, context),
            timeout=5,
        )
    return e.value


def test_the_gateway_reaches_the_runtime_over_mtls_and_nobody_else_does(make_stack, pki):
    ca, other, settings, files = pki
    probe_port = free_port()
    stack = make_stack(
        **{k.replace(".", "__"): v for k, v in settings.items()},
        runtime__health_listen=f"127.0.0.1:{probe_port}",
    )
    assert read(stack.client()).revision == 0  # through the gateway, over mTLS
    assert health(f"127.0.0.1:{probe_port}") == 1  # the kubelet's plaintext probe port

    address = stack.runtime_address
    assert _direct(address, None).code() == grpc.StatusCode.UNAVAILABLE  # plaintext
    no_client_cert = grpc.ssl_channel_credentials(root_certificates=files["ca.pem"])
    assert _direct(address, no_client_cert).code() == grpc.StatusCode.UNAVAILABLE
    foreign_cert, foreign_key = other.issue("agentmem-gateway")
    other_ca = grpc.ssl_channel_credentials(
        root_certificates=files["ca.pem"], private_key=foreign_key, certificate_chain=foreign_cert
    )
    assert _direct(address, other_ca).code() == grpc.StatusCode.UNAVAILABLE
    wrong_cert, wrong_key = ca.issue("mallory")  # our CA, but not the gateway's name
    wrong_name = grpc.ssl_channel_credentials(
        root_certificates=files["ca.pem"], private_key=wrong_key, certificate_chain=wrong_cert
    )
    err = _direct(address, wrong_name)
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED and reason(err) == "UNAUTHENTICATED"
