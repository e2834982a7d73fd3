"""The identity provider failing: its key set answering 500, answering slowly, or forged
headers naming its keys. A token that does not verify is always UNAUTHENTICATED; a key set
that cannot be fetched is UNAVAILABLE / IDENTITY_PROVIDER_UNAVAILABLE with RetryInfo; one
fetch serves every waiting caller; the last good key set keeps serving through an outage;
API-key callers never wait for the provider."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem.contract.errors import AgentmemError, Reason
from agentmem_kernel.config import Oidc
from protocol_svc.oidc import JwtVerifier
from tests.faults.identity import b64, forged, oidc, retry_delay
from tests.harness import ADMIN_A, reason
from tests.test_oidc import AUDIENCE, ISSUER, public_jwk, read, token


def refused_as_unauthenticated(stack, bearer: str) -> None:
    with pytest.raises(grpc.RpcError) as err:
        read(stack.client(token=bearer))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED, err.value.details()
    assert reason(err.value) == "UNAUTHENTICATED"


def test_a_forged_header_naming_an_rsa_key_with_es256_is_unauthenticated(make_stack, provider):
    stack = make_stack(auth__oidc=oidc(provider["jwks"].url))
    refused_as_unauthenticated(stack, forged({"alg": "ES256", "kid": "rsa-1"}))
    refused_as_unauthenticated(stack, forged({"alg": "RS256", "kid": "ec-1"}))
    refused_as_unauthenticated(stack, forged({"alg": "ES256", "kid": ["rsa-1"]}))
    refused_as_unauthenticated(stack, "eyJ" + "A" * 20 + ".e30.AAAA")
    # The service is fine afterwards: a real token is served.
    assert read(stack.client(token=token(provider))).revision == 0


# Header values a hostile caller might send: every algorithm name PyJWT knows and some it
# does not, key ids of the set (of either type), unknown ones, and values of other types.
ALGS = st.sampled_from(
    ["RS256", "RS384", "PS256", "ES256", "ES384", "ES512", "EdDSA", "HS256", "none", "", "ES"]
) | st.text(max_size=8)
KIDS = (
    st.sampled_from(["rsa-1", "ec-1", "unknown", ""])
    | st.none()
    | st.integers()
    | st.lists(st.text(max_size=4), max_size=2)
    | st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2)
)
SIGNATURES = st.binary(max_size=600).map(b64) | st.text(max_size=20)
PAYLOADS = st.one_of(
    st.just({"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "org": "tenant-a", "exp": 2**31}),
    st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=4),
    st.lists(st.integers(), max_size=3),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    alg=ALGS,
    kid=KIDS,
    extra=st.dictionaries(st.sampled_from(["typ", "jwk", "crit", "b64"]), st.integers()),
    payload=PAYLOADS,
    signature=SIGNATURES,
)
def test_any_forged_header_and_key_combination_is_unauthenticated(
    static_verifier, alg, kid, extra, payload, signature
):
    header = {"alg": alg, **extra, **({} if kid is None else {"kid": kid})}
    bearer = forged(header, payload, signature)
    with pytest.raises(AgentmemError) as err:
        asyncio.run(static_verifier.verify(bearer))
    assert err.value.reason is Reason.UNAUTHENTICATED


@pytest.fixture(scope="module")
def static_verifier(tmp_path_factory):
    """A verifier on a JWKS file holding an RSA, an EC and an Ed25519 key, with every
    asymmetric algorithm allowed."""
    from cryptography.hazmat.primitives.asymmetric import ed25519

    keys = [
        public_jwk(
            rsa.generate_private_key(public_exponent=65537, key_size=2048), "rsa-1", "RS256"
        ),
        public_jwk(ec.generate_private_key(ec.SECP256R1()), "ec-1", "ES256"),
        {**public_jwk(ed25519.Ed25519PrivateKey.generate(), "ed-1", "EdDSA")},
        {
            k: v
            for k, v in public_jwk(ec.generate_private_key(ec.SECP384R1()), "", "ES384").items()
            if k != "alg"
        },
    ]
    path = tmp_path_factory.mktemp("jwks") / "jwks.json"
    path.write_text(json.dumps({"keys": keys}))
    algorithms = ("RS256", "RS384", "PS256", "ES256", "ES384", "ES512", "EdDSA")
    return JwtVerifier(
        Oidc(issuer=ISSUER, audience=AUDIENCE, jwks_file=str(path), algorithms=algorithms)
    )


def test_a_key_set_answering_500_is_unavailable_with_retry_info(make_stack, provider):
    provider["jwks"].status = 500
    stack = make_stack(auth__oidc=oidc(provider["jwks"].url))
    with pytest.raises(grpc.RpcError) as err:
        read(stack.client(token=token(provider)))
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    assert reason(err.value) == "IDENTITY_PROVIDER_UNAVAILABLE"
    assert (retry_delay(err.value) or 0) > 0
    # API keys are served all along.
    assert read(stack.client(ADMIN_A)).revision == 0


def test_one_slow_fetch_serves_every_waiting_caller(make_stack, provider):
    jwks = provider["jwks"]
    jwks.release.clear()  # every fetch is held until the test lets it go
    stack = make_stack(auth__oidc=oidc(jwks.url, jwks_timeout_seconds=30))
    bearer = token(provider)
    clients = [stack.client(token=bearer) for _ in range(16)]
    with ThreadPoolExecutor(16) as pool:
        calls = [pool.submit(read, c) for c in clients]
        jwks.wait_for_fetches(1)
        # Every JWT caller now waits for the provider; an API-key caller does not.
        assert read(stack.client(ADMIN_A)).revision == 0
        assert not any(c.done() for c in calls)
        jwks.release.set()
        assert all(c.result(timeout=30).revision == 0 for c in calls)
    assert jwks.fetches == 1


def test_callers_wait_at_most_the_fetch_timeout(make_stack, provider):
    jwks = provider["jwks"]
    jwks.release.clear()  # the provider never answers while the test runs
    stack = make_stack(auth__oidc=oidc(jwks.url, jwks_timeout_seconds=1))
    clients = [stack.client(token=token(provider)) for _ in range(8)]
    with ThreadPoolExecutor(8) as pool:
        calls = [pool.submit(read, c) for c in clients]
        for c in calls:
            with pytest.raises(grpc.RpcError) as err:
                c.result(timeout=20)  # far below the 10 s call deadline: the timeout is 1 s
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
            assert reason(err.value) == "IDENTITY_PROVIDER_UNAVAILABLE"
            assert retry_delay(err.value)
    assert jwks.fetches == 1
    assert read(stack.client(ADMIN_A)).revision == 0


def test_the_last_good_key_set_serves_through_an_outage(make_stack, provider):
    jwks = provider["jwks"]
    stack = make_stack(auth__oidc=oidc(jwks.url, jwks_cache_seconds=1))
    client = stack.client(token=token(provider))
    assert read(client).revision == 0
    jwks.status = 500
    # Once the set is older than its cache time, each call starts a refresh in the
    # background; those fail, and calls go on with the set fetched before.
    deadline = time.monotonic() + 30
    while jwks.fetches < 3 and time.monotonic() < deadline:
        assert read(client).revision == 0
    assert jwks.fetches >= 2
    jwks.status = 200
