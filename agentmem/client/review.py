"""The client's review methods: memories by review status, approving or rejecting a pending
one, and the tenant's insert policy (see `agentmem.client.memory` for how methods call)."""

from __future__ import annotations

from agentmem.client.memory import Caller
from agentmem.client.values import enum_value
from agentmem.v1 import common_pb2, review_pb2


class ReviewMethods(Caller):
    def list_memories(
        self,
        *,
        status_filter: str | int | None = None,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | None = None,
    ) -> review_pb2.ListMemoriesResponse:
        """Memories newest first by review status (`"active"` by default, `"pending_review"`,
        `"rejected"`, `"all"`); their text with the memory.content.read scope."""
        return self._call(
            "ListMemories",
            review_pb2.ListMemoriesRequest(
                status_filter=enum_value(
                    review_pb2.MemoryStatusFilter,
                    "MEMORY_STATUS_FILTER_",
                    status_filter,
                    "status_filter",
                ),
                page_size=page_size,
                page_token=page_token,
            ),
            review_pb2.ListMemoriesResponse,
            timeout,
        )

    def review_memory(
        self,
        *,
        source_id: str,
        decision: str | int,
        expected_revision: int,
        note: str = "",
        request_id: str = "",
        timeout: float | None = None,
    ) -> review_pb2.ReviewMemoryResponse:
        """Approves or rejects a pending memory (`"approve"` | `"reject"`; memory.review).
        `request_id`: correlates the decision in the audit trail."""
        return self._call(
            "ReviewMemory",
            review_pb2.ReviewMemoryRequest(
                source_id=source_id,
                decision=enum_value(review_pb2.Decision, "DECISION_", decision, "decision"),
                expected_revision=expected_revision,
                note=note,
                request_id=request_id,
            ),
            review_pb2.ReviewMemoryResponse,
            timeout,
        )

    def get_insert_policy(
        self, *, timeout: float | None = None
    ) -> review_pb2.GetInsertPolicyResponse:
        """The insert policy in force for the caller's tenant, and whether it is overridden."""
        return self._call(
            "GetInsertPolicy",
            review_pb2.GetInsertPolicyRequest(),
            review_pb2.GetInsertPolicyResponse,
            timeout,
        )

    def set_insert_policy(
        self,
        *,
        insert_policy: str | int,
        expected_revision: int,
        request_id: str = "",
        timeout: float | None = None,
    ) -> review_pb2.SetInsertPolicyResponse:
        """Overrides the tenant's insert policy (`"permissive"`, `"require_save_intent"`,
        `"review_pending"`; memory.admin), by compare-and-swap on its revision.
        `request_id`: correlates the change in the audit trail."""
        return self._call(
            "SetInsertPolicy",
            review_pb2.SetInsertPolicyRequest(
                insert_policy=enum_value(
                    common_pb2.InsertPolicy, "INSERT_POLICY_", insert_policy, "insert_policy"
                ),
                expected_revision=expected_revision,
                request_id=request_id,
            ),
            review_pb2.SetInsertPolicyResponse,
            timeout,
        )
