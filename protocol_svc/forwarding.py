"""The gateway's RPCs that are validated and forwarded to the runtime as they are: one
method per RPC of `agentmem.v1.MemoryService` (`MemoryServicer` writes the others itself;
a unit test checks that every RPC of the service is one or the other)."""

from __future__ import annotations

import contextvars
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from agentmem.contract import rpcs
from agentmem.v1 import (
    audit_pb2,
    facts_pb2,
    foreign_pb2,
    retrieval_pb2,
    review_pb2,
    sources_pb2,
    thread_mode_pb2,
)
from agentmem_kernel.runtime.v1 import runtime_service_pb2 as rpb
from protocol_svc import validation
from protocol_svc.policy import POLICY, SERVICE
from protocol_svc.runtime_client import RuntimeClient

CALL: contextvars.ContextVar[rpb.CallContext] = contextvars.ContextVar("call")
# The servicer context of a call (request and response types are the method's own).
Context = grpc.aio.ServicerContext[Any, Any]
R = TypeVar("R", bound=Message)


def _fields(call: rpb.CallContext) -> dict[str, Any]:
    """The fields that are set (an unset message field stays unset in the copy)."""
    return {f.name: value for f, value in call.ListFields()}


class Forwarding:
    _runtime: RuntimeClient

    async def _forward(self, name: str, request: Any, context: Context, response: type[R]) -> R:
        """The request validated, then the runtime's answer to it (of type `response`)."""
        validation.VALIDATORS[name](request)
        rule = POLICY[f"/{SERVICE.full_name}/{name}"]
        call = CALL.get()
        idempotent = rule.idempotent
        if "request_id" in request.DESCRIPTOR.fields_by_name and request.request_id:
            call = rpb.CallContext(**{**_fields(call), "request_id": request.request_id})
            idempotent = idempotent or name in rpcs.KEYED  # the runtime deduplicates it
        answer: R = await self._runtime.unary(
            name, request, call, time_remaining=context.time_remaining(), idempotent=idempotent
        )
        return answer

    async def ReadThreadMemoryMode(
        self, request: thread_mode_pb2.ReadThreadMemoryModeRequest, context: Context
    ) -> thread_mode_pb2.ReadThreadMemoryModeResponse:
        return await self._forward(
            "ReadThreadMemoryMode", request, context, thread_mode_pb2.ReadThreadMemoryModeResponse
        )

    async def SetThreadMemoryMode(
        self, request: thread_mode_pb2.SetThreadMemoryModeRequest, context: Context
    ) -> thread_mode_pb2.SetThreadMemoryModeResponse:
        return await self._forward(
            "SetThreadMemoryMode", request, context, thread_mode_pb2.SetThreadMemoryModeResponse
        )

    async def InsertMemory(
        self, request: sources_pb2.InsertMemoryRequest, context: Context
    ) -> sources_pb2.InsertMemoryResponse:
        return await self._forward(
            "InsertMemory", request, context, sources_pb2.InsertMemoryResponse
        )

    async def ListSources(
        self, request: sources_pb2.ListSourcesRequest, context: Context
    ) -> sources_pb2.ListSourcesResponse:
        return await self._forward("ListSources", request, context, sources_pb2.ListSourcesResponse)

    async def SetSourceClassification(
        self, request: sources_pb2.SetSourceClassificationRequest, context: Context
    ) -> sources_pb2.SetSourceClassificationResponse:
        return await self._forward(
            "SetSourceClassification", request, context, sources_pb2.SetSourceClassificationResponse
        )

    async def AppendMessages(
        self, request: sources_pb2.AppendMessagesRequest, context: Context
    ) -> sources_pb2.AppendMessagesResponse:
        return await self._forward(
            "AppendMessages", request, context, sources_pb2.AppendMessagesResponse
        )

    async def SearchMemories(
        self, request: retrieval_pb2.SearchMemoriesRequest, context: Context
    ) -> retrieval_pb2.SearchMemoriesResponse:
        return await self._forward(
            "SearchMemories", request, context, retrieval_pb2.SearchMemoriesResponse
        )

    async def AssemblePrompt(
        self, request: retrieval_pb2.AssemblePromptRequest, context: Context
    ) -> retrieval_pb2.AssemblePromptResponse:
        return await self._forward(
            "AssemblePrompt", request, context, retrieval_pb2.AssemblePromptResponse
        )

    async def ExplainRetrieval(
        self, request: retrieval_pb2.ExplainRetrievalRequest, context: Context
    ) -> retrieval_pb2.ExplainRetrievalResponse:
        return await self._forward(
            "ExplainRetrieval", request, context, retrieval_pb2.ExplainRetrievalResponse
        )

    async def ListMemories(
        self, request: review_pb2.ListMemoriesRequest, context: Context
    ) -> review_pb2.ListMemoriesResponse:
        return await self._forward(
            "ListMemories", request, context, review_pb2.ListMemoriesResponse
        )

    async def ReviewMemory(
        self, request: review_pb2.ReviewMemoryRequest, context: Context
    ) -> review_pb2.ReviewMemoryResponse:
        return await self._forward(
            "ReviewMemory", request, context, review_pb2.ReviewMemoryResponse
        )

    async def GetInsertPolicy(
        self, request: review_pb2.GetInsertPolicyRequest, context: Context
    ) -> review_pb2.GetInsertPolicyResponse:
        return await self._forward(
            "GetInsertPolicy", request, context, review_pb2.GetInsertPolicyResponse
        )

    async def SetInsertPolicy(
        self, request: review_pb2.SetInsertPolicyRequest, context: Context
    ) -> review_pb2.SetInsertPolicyResponse:
        return await self._forward(
            "SetInsertPolicy", request, context, review_pb2.SetInsertPolicyResponse
        )

    async def SearchFacts(
        self, request: facts_pb2.SearchFactsRequest, context: Context
    ) -> facts_pb2.SearchFactsResponse:
        return await self._forward("SearchFacts", request, context, facts_pb2.SearchFactsResponse)

    async def GetProfile(
        self, request: facts_pb2.GetProfileRequest, context: Context
    ) -> facts_pb2.GetProfileResponse:
        return await self._forward("GetProfile", request, context, facts_pb2.GetProfileResponse)

    async def Ask(self, request: facts_pb2.AskRequest, context: Context) -> facts_pb2.AskResponse:
        return await self._forward("Ask", request, context, facts_pb2.AskResponse)

    async def RetractFact(
        self, request: facts_pb2.RetractFactRequest, context: Context
    ) -> facts_pb2.RetractFactResponse:
        return await self._forward("RetractFact", request, context, facts_pb2.RetractFactResponse)

    async def RegisterOwnerKey(
        self, request: foreign_pb2.RegisterOwnerKeyRequest, context: Context
    ) -> foreign_pb2.RegisterOwnerKeyResponse:
        return await self._forward(
            "RegisterOwnerKey", request, context, foreign_pb2.RegisterOwnerKeyResponse
        )

    async def RevokeOwnerKey(
        self, request: foreign_pb2.RevokeOwnerKeyRequest, context: Context
    ) -> foreign_pb2.RevokeOwnerKeyResponse:
        return await self._forward(
            "RevokeOwnerKey", request, context, foreign_pb2.RevokeOwnerKeyResponse
        )

    async def PrepareForeignSource(
        self, request: foreign_pb2.PrepareForeignSourceRequest, context: Context
    ) -> foreign_pb2.PrepareForeignSourceResponse:
        return await self._forward(
            "PrepareForeignSource", request, context, foreign_pb2.PrepareForeignSourceResponse
        )

    async def AdmitForeignSource(
        self, request: foreign_pb2.AdmitForeignSourceRequest, context: Context
    ) -> foreign_pb2.AdmitForeignSourceResponse:
        return await self._forward(
            "AdmitForeignSource", request, context, foreign_pb2.AdmitForeignSourceResponse
        )

    async def RevokeSource(
        self, request: foreign_pb2.RevokeSourceRequest, context: Context
    ) -> foreign_pb2.RevokeSourceResponse:
        return await self._forward(
            "RevokeSource", request, context, foreign_pb2.RevokeSourceResponse
        )

    async def RevokeAssent(
        self, request: foreign_pb2.RevokeAssentRequest, context: Context
    ) -> foreign_pb2.RevokeAssentResponse:
        return await self._forward(
            "RevokeAssent", request, context, foreign_pb2.RevokeAssentResponse
        )

    async def ReadbackSource(
        self, request: foreign_pb2.ReadbackSourceRequest, context: Context
    ) -> foreign_pb2.ReadbackSourceResponse:
        return await self._forward(
            "ReadbackSource", request, context, foreign_pb2.ReadbackSourceResponse
        )

    async def EraseSource(
        self, request: foreign_pb2.EraseSourceRequest, context: Context
    ) -> foreign_pb2.EraseSourceResponse:
        return await self._forward("EraseSource", request, context, foreign_pb2.EraseSourceResponse)

    async def ListAuditReceipts(
        self, request: audit_pb2.ListAuditReceiptsRequest, context: Context
    ) -> audit_pb2.ListAuditReceiptsResponse:
        return await self._forward(
            "ListAuditReceipts", request, context, audit_pb2.ListAuditReceiptsResponse
        )

    async def VerifyAuditChain(
        self, request: audit_pb2.VerifyAuditChainRequest, context: Context
    ) -> audit_pb2.VerifyAuditChainResponse:
        return await self._forward(
            "VerifyAuditChain", request, context, audit_pb2.VerifyAuditChainResponse
        )
