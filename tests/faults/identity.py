"""An identity provider the fault tests control: its key set (JWKS) served on loopback with
the answers a test chooses, tokens signed by its keys, and forged tokens."""

from __future__ import annotations

import base64
import json

import grpc
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from google.rpc import error_details_pb2

from agentmem.contract.grpc_errors import status_of_call
from tests.test_oidc import AUDIENCE, ISSUER, Jwks, public_jwk


def provider_keys():
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    jwks = Jwks([public_jwk(rsa_key, "rsa-1", "RS256"), public_jwk(ec_key, "ec-1", "ES256")])
    return {"rsa": rsa_key, "ec": ec_key, "jwks": jwks}


def oidc(url: str, **extra: object) -> dict:
    return {
        "issuer": ISSUER,
        "audience": AUDIENCE,
        "jwks_url": url,
        "tenant_claim": "org",
        "principal_claim": "sub",
        "scopes_claim": "scope",
        **extra,
    }


def retry_delay(err: grpc.RpcError) -> float | None:
    status = status_of_call(err)
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return info.retry_delay.ToTimedelta().total_seconds()
    return None


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forged(header: dict, payload: dict | None = None, signature: str = "AAAA") -> str:
    body = payload if payload is not None else {"iss": ISSUER, "aud": AUDIENCE, "sub": "x"}
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(body).encode())}.{signature}"
