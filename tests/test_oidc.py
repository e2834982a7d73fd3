"""OIDC / JWT bearer tokens beside API keys: keys made in the test, a JWKS served on
loopback, and every bad token refused with UNAUTHENTICATED."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from agentmem.v1 import common_pb2, thread_mode_pb2
from tests.harness import ADMIN_A, reason

ISSUER = "https://idp.test.invalid/"
AUDIENCE = "agentmem"


class Jwks:
    """A JWKS endpoint on loopback, counting its fetches; a test may choose its answers (the
    keys, a status code) or hold every request until released."""

    def __init__(self, keys: list) -> None:
        self.keys = keys
        self.status = 200
        self.fetches = 0
        self.held = 0  # requests waiting on `release`
        self.release = threading.Event()
        self.release.set()
        self.arrived = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with outer.arrived:
                    outer.fetches += 1
                    outer.held += 1
                    outer.arrived.notify_all()
                outer.release.wait(30)
                with outer.arrived:
                    outer.held -= 1
                body = json.dumps({"keys": outer.keys}).encode()
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/jwks.json"

    def wait_for_fetches(self, n: int, timeout: float = 30) -> None:
        with self.arrived:
            assert self.arrived.wait_for(lambda: self.fetches >= n, timeout), self.fetches

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def public_jwk(private_key, kid: str, alg: str) -> dict:
    jwk = json.loads(jwt.algorithms.get_default_algorithms()[alg].to_jwk(private_key.public_key()))
    return {**jwk, "kid": kid, "alg": alg, "use": "sig"}


@pytest.fixture
def idp():
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    jwks = Jwks([public_jwk(rsa_key, "rsa-1", "RS256"), public_jwk(ec_key, "ec-1", "ES256")])
    yield {"rsa": rsa_key, "ec": ec_key, "jwks": jwks}
    jwks.close()


@pytest.fixture
def oidc_stack(make_stack, idp):
    return make_stack(
        auth__oidc={
            "issuer": ISSUER,
            "audience": AUDIENCE,
            "jwks_url": idp["jwks"].url,
            "tenant_claim": "org",
            "principal_claim": "sub",
            "kind_claim": "agentmem_kind",
            "scopes_claim": "scope",
        }
    )


def token(idp, *, key="rsa", kid="rsa-1", alg="RS256", **overrides) -> str:
    now = int(time.time())
    claims = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "user-42",
        "org": "tenant-a",
        "scope": "openid memory.read memory.policy",
        "iat": now,
        "exp": now + 300,
        **overrides,
    }
    claims = {k: v for k, v in claims.items() if v is not None}
    return jwt.encode(claims, idp[key], algorithm=alg, headers={"kid": kid})


def read(client, thread_id="t1"):
    return client.ReadThreadMemoryMode(
        thread_mode_pb2.ReadThreadMemoryModeRequest(thread_id=thread_id), timeout=10
    )


def set_mode(client, expected=0):
    return client.SetThreadMemoryMode(
        thread_mode_pb2.SetThreadMemoryModeRequest(
            thread_id="t1", expected_revision=expected, mode=common_pb2.MEMORY_MODE_DISABLED
        ),
        timeout=10,
    )


def test_a_valid_token_maps_claims_to_tenant_principal_and_scopes(oidc_stack, idp):
    client = oidc_stack.client(token=token(idp))
    assert read(client).revision == 0
    change = set_mode(client)  # memory.policy from the scope claim
    assert change.revision == 1
    assert change.receipt.principal_id == "user-42"
    # Same tenant as the API key of tenant-a: it sees the change the token made.
    assert read(oidc_stack.client(ADMIN_A)).revision == 1
    # An EC key from the same JWKS works too.
    assert (
        read(oidc_stack.client(token=token(idp, key="ec", kid="ec-1", alg="ES256"))).revision == 1
    )


def test_api_keys_still_work_beside_tokens(oidc_stack):
    assert read(oidc_stack.client(ADMIN_A)).revision == 0


def test_scopes_come_from_the_token_only(oidc_stack, idp):
    client = oidc_stack.client(token=token(idp, scope="memory.read"))
    with pytest.raises(grpc.RpcError) as err:
        set_mode(client)
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert reason(err.value) == "MISSING_SCOPE"


def _refused(stack, bearer: str) -> None:
    with pytest.raises(grpc.RpcError) as err:
        read(stack.client(token=bearer))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert reason(err.value) == "UNAUTHENTICATED"
    assert bearer not in (err.value.details() or "")


def test_wrong_issuer_is_unauthenticated(oidc_stack, idp):
    _refused(oidc_stack, token(idp, iss="https://evil.test.invalid/"))


def test_wrong_audience_is_unauthenticated(oidc_stack, idp):
    _refused(oidc_stack, token(idp, aud="someone-else"))


def test_expired_token_is_unauthenticated(oidc_stack, idp):
    _refused(oidc_stack, token(idp, iat=int(time.time()) - 7200, exp=int(time.time()) - 3600))


def test_token_without_expiry_is_unauthenticated(oidc_stack, idp):
    _refused(oidc_stack, token(idp, exp=None))


def test_bad_signature_is_unauthenticated(oidc_stack, idp):
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(
        {"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "org": "tenant-a", "exp": time.time() + 60},
        forger,
        algorithm="RS256",
        headers={"kid": "rsa-1"},
    )
    _refused(oidc_stack, forged)
    good = token(idp)
    head, _payload, signature = good.split(".")
    tampered_payload = jwt.utils.base64url_encode(
        json.dumps(
            {**jwt.decode(good, options={"verify_signature": False}), "org": "tenant-b"}
        ).encode()
    ).decode()
    _refused(oidc_stack, f"{head}.{tampered_payload}.{signature}")


def test_symmetric_or_unsigned_tokens_are_unauthenticated(oidc_stack, idp):
    claims = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "x",
        "org": "tenant-a",
        "exp": time.time() + 60,
    }
    _refused(
        oidc_stack, jwt.encode(claims, "shared-secret-shared-secret-shared", algorithm="HS256")
    )
    _refused(oidc_stack, jwt.encode(claims, None, algorithm="none"))


def test_token_without_tenant_claim_is_unauthenticated(oidc_stack, idp):
    _refused(oidc_stack, token(idp, org=None))
    _refused(oidc_stack, token(idp, org=""))


def test_unknown_key_id_is_unauthenticated(oidc_stack, idp):
    _refused(oidc_stack, token(idp, kid="rsa-unknown"))


def test_the_key_set_is_cached(oidc_stack, idp):
    for _ in range(5):
        read(oidc_stack.client(token=token(idp)))
    assert idp["jwks"].fetches == 1


def test_a_static_jwks_file_works_without_a_url(make_stack, idp, tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [public_jwk(idp["rsa"], "rsa-1", "RS256")]}))
    stack = make_stack(
        auth__oidc={
            "issuer": ISSUER,
            "audience": AUDIENCE,
            "jwks_file": str(path),
            "tenant_claim": "org",
        }
    )
    assert read(stack.client(token=token(idp))).revision == 0
    _refused(stack, token(idp, key="ec", kid="ec-1", alg="ES256"))
