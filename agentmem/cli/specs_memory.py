"""The client subcommands for memories themselves: insert, sources, review and the insert
policy, retrieval (`search`, `prompt`, `explain`)."""

from __future__ import annotations

from agentmem.cli.spec_args import (
    EXPECTED,
    KINDS,
    LABELS,
    LIMIT,
    PAGE_SIZE,
    PAGE_TOKEN,
    REQUEST_ID,
    REVISION_OPT,
    SAVE_INTENT_EVIDENCE,
    SAVE_INTENTS,
    SOURCE_ID,
    STATES,
    STATUSES,
    THREAD,
    Spec,
    body_to_insert,
    moment,
    review,
    search,
)
from agentmem.client import numbers
from agentmem.v1 import retrieval_pb2

MEMORY_SPECS: list[Spec] = [
    (
        ("insert",),
        "save a memory",
        lambda c, a: c.insert_memory(
            **body_to_insert(a),
            source_kind=a.kind or None,
            validate_only=a.validate_only,
            thread_id=a.thread,
            request_id=a.request_id,
            save_intent=a.save_intent,
            save_intent_source=a.save_intent_source,
            save_intent_evidence=a.save_intent_evidence,
            labels=dict(a.labels),
            observed_at=a.observed_at,
        ),
        [
            (
                "content",
                {
                    "nargs": "?",
                    "default": None,
                    "help": "the text to remember; - reads it from standard input",
                },
            ),
            ("--file", {"default": None, "help": "read the text to remember from this file"}),
            (
                "--messages",
                {
                    "default": None,
                    "metavar": "FILE",
                    "help": 'remember a conversation instead: FILE holds a JSON list of {"role", '
                    '"content", "name", "sent_at"} (name and sent_at optional)',
                },
            ),
            (
                "--kind",
                {
                    "default": "",
                    "choices": ["memory", "conversation"],
                    "help": "what it is stored as (default: memory for a text, conversation "
                    "for --messages)",
                },
            ),
            THREAD,
            (
                "--observed-at",
                {
                    "type": moment,
                    "default": None,
                    "help": "when it was said or true (ISO 8601; default: now)",
                },
            ),
            ("--request-id", {"default": "", "help": "makes a retry return the first result"}),
            (
                "--save-intent",
                {
                    "default": "",
                    "choices": list(SAVE_INTENTS),
                    "help": "why it is saved: " + ", ".join(SAVE_INTENTS),
                },
            ),
            ("--save-intent-source", {"default": "", "help": "the client that saves it"}),
            SAVE_INTENT_EVIDENCE,
            LABELS,
            (
                "--validate-only",
                {"action": "store_true", "help": "check the request; store nothing"},
            ),
        ],
    ),
    (
        ("sources", "list"),
        "list sources (metadata only)",
        lambda c, a: c.list_sources(
            page_size=a.page_size,
            page_token=a.page_token,
            classification=a.classification,
            effective_state=a.state,
            status=a.status,
            source_kind=a.kind,
            thread_id=a.thread,
        ),
        [
            PAGE_SIZE,
            PAGE_TOKEN,
            (
                "--state",
                {
                    "default": "",
                    "choices": list(STATES),
                    "help": "only sources in this retrieval state",
                },
            ),
            (
                "--classification",
                {"default": "", "choices": ["active", "cold"], "help": "only active or cold"},
            ),
            (
                "--status",
                {
                    "default": "",
                    "choices": list(STATUSES),
                    "help": "only sources with this review status",
                },
            ),
            ("--kind", {"default": "", "choices": list(KINDS), "help": "only of this kind"}),
            ("--thread", {"default": "", "help": "only sources from this thread"}),
        ],
    ),
    (
        ("sources", "get"),
        "show one source",
        lambda c, a: c.get_source(source_id=a.source_id, include_content=a.content),
        [
            SOURCE_ID,
            ("--content", {"action": "store_true", "help": "include the text (content scope)"}),
        ],
    ),
    (
        ("sources", "classify"),
        "mark a source active or cold",
        lambda c, a: c.set_source_classification(
            source_id=a.source_id,
            classification=a.classification,
            expected_revision=a.expected_revision,
            request_id=a.request_id,
        ),
        [
            SOURCE_ID,
            ("classification", {"choices": ["active", "cold"], "help": "active or cold"}),
            EXPECTED,
            REQUEST_ID,
        ],
    ),
    (
        ("sources", "revoke"),
        "revoke a source and purge what was derived from it",
        lambda c, a: c.revoke_source(source_id=a.source_id, reason=a.reason),
        [SOURCE_ID, ("--reason", {"default": "", "help": "a short reason for the audit"})],
    ),
    (
        ("sources", "erase"),
        "erase a source for good (or, with --appended-by, one principal's turns of it)",
        lambda c, a: c.erase_source(
            source_id=a.source_id,
            expected_revision=a.expected_revision,
            reason=a.reason,
            appended_by=a.appended_by,
        ),
        [
            SOURCE_ID,
            EXPECTED,
            ("--reason", {"default": "", "help": "a short reason"}),
            (
                "--appended-by",
                {
                    "default": "",
                    "help": "erase only this principal's turns of the conversation (those it "
                    "appended, and those it inserted it with if it did)",
                },
            ),
        ],
    ),
    (
        ("sources", "readback"),
        "list what is still derived from a source",
        lambda c, a: c.readback_source(source_id=a.source_id),
        [SOURCE_ID],
    ),
    (
        ("search",),
        "search memories",
        search,
        [
            ("query", {"help": "what to look for"}),
            LIMIT,
            THREAD,
            (
                "--all",
                {
                    "action": "store_true",
                    "help": "also the hits scoring under a fifth of the best hit's score",
                },
            ),
            (
                "--passages",
                {
                    "dest": "group_by_source",
                    "action": "store_false",
                    "default": None,
                    "help": "several passages of one conversation may appear (default: one "
                    "hit per source, its best passage)",
                },
            ),
        ],
    ),
    (
        ("prompt",),
        "assemble the memory block for a prompt",
        lambda c, a: c.assemble_prompt(query=a.query, thread_id=a.thread, token_budget=a.budget),
        [
            ("query", {"help": "the user's message"}),
            THREAD,
            (
                "--budget",
                {
                    "type": numbers.field(retrieval_pb2.AssemblePromptRequest, "token_budget"),
                    "default": 500,
                    "help": "token budget",
                },
            ),
        ],
    ),
    (
        ("explain",),
        "explain which memories a query selects and why",
        lambda c, a: c.explain_retrieval(
            query=a.query, limit=a.limit, thread_id=a.thread, token_budget=a.budget
        ),
        [
            ("query", {"help": "the query to explain"}),
            LIMIT,
            THREAD,
            (
                "--budget",
                {
                    "type": numbers.field(retrieval_pb2.ExplainRetrievalRequest, "token_budget"),
                    "default": 0,
                    "help": "explain the prompt block at this token budget: exactly the "
                    "sources it cites are selected (default: the top --limit by search)",
                },
            ),
        ],
    ),
    (
        ("memories", "list"),
        "list memories by review status",
        lambda c, a: c.list_memories(
            status_filter=a.status, page_size=a.page_size, page_token=a.page_token
        ),
        [
            (
                "--status",
                {
                    "default": "",
                    "choices": ["active", "pending_review", "rejected", "all"],
                    "help": "review status (default active)",
                },
            ),
            PAGE_SIZE,
            PAGE_TOKEN,
        ],
    ),
    (
        ("memories", "review"),
        "approve or reject a pending memory",
        review,
        [
            SOURCE_ID,
            ("decision", {"choices": ["approve", "reject"], "help": "approve or reject"}),
            REVISION_OPT,
            ("--note", {"default": "", "help": "a short note for the audit"}),
            REQUEST_ID,
        ],
    ),
    (("policy", "get"), "show the insert policy", lambda c, a: c.get_insert_policy(), []),
    (
        ("policy", "set"),
        "set the tenant's insert policy",
        lambda c, a: c.set_insert_policy(
            insert_policy=a.policy, expected_revision=a.expected_revision, request_id=a.request_id
        ),
        [
            (
                "policy",
                {
                    "choices": ["permissive", "require_save_intent", "review_pending"],
                    "help": "the new policy",
                },
            ),
            EXPECTED,
            REQUEST_ID,
        ],
    ),
]
