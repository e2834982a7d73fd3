"""The client's methods for what surrounds memory: facts and answers, foreign sources and
their owners' keys, revocation, readback and erasure, and the audit trail (see
`agentmem.client.memory` for how methods call)."""

from __future__ import annotations

from collections.abc import Mapping

from agentmem.client.memory import Caller
from agentmem.client.values import Moment, enum_value, timestamp
from agentmem.client.values import pointer as thin_pointer
from agentmem.v1 import audit_pb2, facts_pb2, foreign_pb2


class GovernanceMethods(Caller):
    def search_facts(
        self,
        *,
        query: str = "",
        save_intent: str = "",
        save_intent_source: str = "",
        status: str | int | None = None,
        limit: int = 0,
        as_of: Moment = None,
        include_superseded: bool = False,
        timeout: float | None = None,
    ) -> facts_pb2.SearchFactsResponse:
        """Facts extracted from eligible memories, filtered by words, save intent, its source
        and status (`"active"` by default), each with its source, confidence and validity
        interval: the current facts; `as_of` those current then; `include_superseded` the
        whole history."""
        request = facts_pb2.SearchFactsRequest(
            query=query,
            save_intent=save_intent,
            save_intent_source=save_intent_source,
            status=enum_value(facts_pb2.FactStatus, "FACT_STATUS_", status, "status"),
            limit=limit,
            include_superseded=include_superseded,
        )
        if as_of is not None:
            request.as_of.CopyFrom(timestamp(as_of, "as_of"))
        return self._call("SearchFacts", request, facts_pb2.SearchFactsResponse, timeout)

    def get_profile(
        self, *, save_intent_source: str = "", as_of: Moment = None, timeout: float | None = None
    ) -> facts_pb2.GetProfileResponse:
        """What is known about the user, consolidated from eligible current facts (`as_of`:
        as it was then), each value with the time it has held since."""
        request = facts_pb2.GetProfileRequest(save_intent_source=save_intent_source)
        if as_of is not None:
            request.as_of.CopyFrom(timestamp(as_of, "as_of"))
        return self._call("GetProfile", request, facts_pb2.GetProfileResponse, timeout)

    def ask(
        self,
        *,
        question: str,
        token_budget: int = 300,
        as_of: Moment = None,
        timeout: float | None = None,
    ) -> facts_pb2.AskResponse:
        """An answer to `question` from memory (current facts; `as_of`: as it was then), with
        compact provenance of every piece and when the answer last changed."""
        request = facts_pb2.AskRequest(question=question, token_budget=token_budget)
        if as_of is not None:
            request.as_of.CopyFrom(timestamp(as_of, "as_of"))
        return self._call("Ask", request, facts_pb2.AskResponse, timeout)

    def retract_fact(
        self, *, fact_id: str, reason: str = "", timeout: float | None = None
    ) -> facts_pb2.RetractFactResponse:
        """The user says the fact is wrong: it leaves every read, the value before it is
        current again, its memory stays (needs memory.review and a user principal)."""
        return self._call(
            "RetractFact",
            facts_pb2.RetractFactRequest(fact_id=fact_id, reason=reason),
            facts_pb2.RetractFactResponse,
            timeout,
        )

    def register_owner_key(
        self, *, owner_id: str, key_id: str, public_key_pem: str, timeout: float | None = None
    ) -> foreign_pb2.RegisterOwnerKeyResponse:
        """Registers a canonical owner's Ed25519 public key (PEM) for foreign-source assent
        (memory.admin)."""
        return self._call(
            "RegisterOwnerKey",
            foreign_pb2.RegisterOwnerKeyRequest(
                owner_id=owner_id, key_id=key_id, public_key_pem=public_key_pem
            ),
            foreign_pb2.RegisterOwnerKeyResponse,
            timeout,
        )

    def revoke_owner_key(
        self, *, owner_id: str, key_id: str, timeout: float | None = None
    ) -> foreign_pb2.RevokeOwnerKeyResponse:
        """Retires an owner key: sources admitted under it stop being retrieved."""
        return self._call(
            "RevokeOwnerKey",
            foreign_pb2.RevokeOwnerKeyRequest(owner_id=owner_id, key_id=key_id),
            foreign_pb2.RevokeOwnerKeyResponse,
            timeout,
        )

    def prepare_foreign_source(
        self,
        *,
        canonical_owner: str,
        pointer: foreign_pb2.ThinPointer | Mapping[str, str],
        timeout: float | None = None,
    ) -> foreign_pb2.PrepareForeignSourceResponse:
        """The immutable identity the runtime derives for a thin pointer, and what the owner
        must sign; stores nothing."""
        return self._call(
            "PrepareForeignSource",
            foreign_pb2.PrepareForeignSourceRequest(
                canonical_owner=canonical_owner, pointer=thin_pointer(pointer)
            ),
            foreign_pb2.PrepareForeignSourceResponse,
            timeout,
        )

    def admit_foreign_source(
        self,
        *,
        canonical_owner: str,
        pointer: foreign_pb2.ThinPointer | Mapping[str, str],
        assent: str,
        timeout: float | None = None,
    ) -> foreign_pb2.AdmitForeignSourceResponse:
        """Admits a foreign source with the owner's signed assent (a compact JWS)."""
        return self._call(
            "AdmitForeignSource",
            foreign_pb2.AdmitForeignSourceRequest(
                canonical_owner=canonical_owner, pointer=thin_pointer(pointer), assent=assent
            ),
            foreign_pb2.AdmitForeignSourceResponse,
            timeout,
        )

    def revoke_source(
        self, *, source_id: str, reason: str = "", timeout: float | None = None
    ) -> foreign_pb2.RevokeSourceResponse:
        """Revokes a source for good: never retrieved again, every derived record purged."""
        return self._call(
            "RevokeSource",
            foreign_pb2.RevokeSourceRequest(source_id=source_id, reason=reason),
            foreign_pb2.RevokeSourceResponse,
            timeout,
        )

    def revoke_assent(
        self,
        *,
        source_id: str,
        assent_id: str,
        revocation: str = "",
        timeout: float | None = None,
    ) -> foreign_pb2.RevokeAssentResponse:
        """Revokes the assent a foreign source was admitted with (the owner's revocation)."""
        return self._call(
            "RevokeAssent",
            foreign_pb2.RevokeAssentRequest(
                source_id=source_id, assent_id=assent_id, revocation=revocation
            ),
            foreign_pb2.RevokeAssentResponse,
            timeout,
        )

    def readback_source(
        self, *, source_id: str, timeout: float | None = None
    ) -> foreign_pb2.ReadbackSourceResponse:
        """Every derived record of a source and whether any can still be retrieved."""
        return self._call(
            "ReadbackSource",
            foreign_pb2.ReadbackSourceRequest(source_id=source_id),
            foreign_pb2.ReadbackSourceResponse,
            timeout,
        )

    def erase_source(
        self,
        *,
        source_id: str,
        expected_revision: int,
        reason: str = "",
        appended_by: str = "",
        timeout: float | None = None,
    ) -> foreign_pb2.EraseSourceResponse:
        """Erases a source for good (bytes, generated form and every derived record); a
        tombstone of ids and receipts stays, reading as erased. With `appended_by`, only
        the turns that principal appended to the conversation go (their bytes and every
        record derived from them); the rest stays, as its next revision."""
        return self._call(
            "EraseSource",
            foreign_pb2.EraseSourceRequest(
                source_id=source_id,
                expected_revision=expected_revision,
                reason=reason,
                appended_by=appended_by,
            ),
            foreign_pb2.EraseSourceResponse,
            timeout,
        )

    def list_audit_receipts(
        self,
        *,
        target_id: str = "",
        page_size: int = 0,
        page_token: str = "",
        newest_first: bool = False,
        timeout: float | None = None,
    ) -> audit_pb2.ListAuditReceiptsResponse:
        """The tenant's audit receipts, oldest first (the chain's order) or `newest_first`
        (memory.admin)."""
        return self._call(
            "ListAuditReceipts",
            audit_pb2.ListAuditReceiptsRequest(
                target_id=target_id,
                page_size=page_size,
                page_token=page_token,
                newest_first=newest_first,
            ),
            audit_pb2.ListAuditReceiptsResponse,
            timeout,
        )

    def verify_audit_chain(
        self, *, timeout: float | None = None
    ) -> audit_pb2.VerifyAuditChainResponse:
        """Recomputes the receipts' hash chain and says whether it verifies."""
        return self._call(
            "VerifyAuditChain",
            audit_pb2.VerifyAuditChainRequest(),
            audit_pb2.VerifyAuditChainResponse,
            timeout,
        )
