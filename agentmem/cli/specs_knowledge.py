"""The client subcommands for what surrounds memories: facts, the profile and `ask`, owners'
keys and foreign sources."""

from __future__ import annotations

from pathlib import Path

from agentmem.cli.spec_args import (
    AS_OF,
    SAVE_INTENTS,
    SOURCE_ID,
    Spec,
    pointer,
)
from agentmem.client import numbers
from agentmem.client.values import enum_names
from agentmem.v1 import facts_pb2

FACT_STATUSES = enum_names(facts_pb2.FactStatus, "FACT_STATUS_")

KNOWLEDGE_SPECS: list[Spec] = [
    (
        ("facts", "search"),
        "search extracted facts",
        lambda c, a: c.search_facts(
            query=a.query,
            save_intent_source=a.save_intent_source,
            save_intent=a.save_intent,
            status=a.status,
            limit=a.limit,
            as_of=a.as_of,
            include_superseded=a.history,
        ),
        [
            ("query", {"nargs": "?", "default": "", "help": "what to look for (optional)"}),
            ("--save-intent-source", {"default": "", "help": "only facts saved by this client"}),
            (
                "--save-intent",
                {
                    "default": "",
                    "choices": list(SAVE_INTENTS),
                    "help": "only facts from memories saved with this intent",
                },
            ),
            (
                "--status",
                {
                    "default": "",
                    "choices": FACT_STATUSES,
                    "help": "eligible (default: their memory may be retrieved now), ineligible "
                    "or all (those two need memory.content.read)",
                },
            ),
            (
                "--limit",
                {
                    "type": numbers.field(facts_pb2.SearchFactsRequest, "limit"),
                    "default": 0,
                    "help": "at most this many facts (1-100; default 20)",
                },
            ),
            AS_OF,
            (
                "--history",
                {"action": "store_true", "help": "every value each attribute had, with its dates"},
            ),
        ],
    ),
    (
        ("facts", "retract"),
        "say a fact is wrong: the value before it is current again, its memory stays",
        lambda c, a: c.retract_fact(fact_id=a.fact_id, reason=a.reason),
        [
            ("fact_id", {"help": "the fact id (fact_…)"}),
            ("--reason", {"default": "", "help": "why (optional, not stored)"}),
        ],
    ),
    (
        ("profile",),
        "the user's profile from facts",
        lambda c, a: c.get_profile(as_of=a.as_of, save_intent_source=a.save_intent_source),
        [
            AS_OF,
            ("--save-intent-source", {"default": "", "help": "only facts saved by this client"}),
        ],
    ),
    (
        ("ask",),
        "answer a question from memory, with provenance",
        lambda c, a: c.ask(question=a.question, token_budget=a.budget, as_of=a.as_of),
        [
            ("question", {"help": "the question"}),
            (
                "--budget",
                {
                    "type": numbers.field(facts_pb2.AskRequest, "token_budget"),
                    "default": 300,
                    "help": "token budget",
                },
            ),
            AS_OF,
        ],
    ),
    (
        ("owner-key", "register"),
        "register a canonical owner's public key (experimental: foreign_sources)",
        lambda c, a: c.register_owner_key(
            owner_id=a.owner, key_id=a.key_id, public_key_pem=Path(a.pem_file).read_text()
        ),
        [
            ("owner", {"help": "the canonical owner"}),
            ("key_id", {"help": "the key's id (the assent's kid)"}),
            ("pem_file", {"help": "the Ed25519 public key, PEM"}),
        ],
    ),
    (
        ("owner-key", "revoke"),
        "revoke an owner key",
        lambda c, a: c.revoke_owner_key(owner_id=a.owner, key_id=a.key_id),
        [("owner", {"help": "the canonical owner"}), ("key_id", {"help": "the key's id"})],
    ),
    (
        ("foreign", "prepare"),
        "derive a foreign source's identity for the owner to sign",
        lambda c, a: c.prepare_foreign_source(canonical_owner=a.owner, pointer=pointer(a)),
        [],
    ),
    (
        ("foreign", "admit"),
        "admit a foreign source with the owner's assent",
        lambda c, a: c.admit_foreign_source(
            canonical_owner=a.owner, pointer=pointer(a), assent=a.assent
        ),
        [("--assent", {"required": True, "help": "the owner's signed assent (compact JWS)"})],
    ),
    (
        ("foreign", "revoke-assent"),
        "revoke the assent a foreign source was admitted with",
        lambda c, a: c.revoke_assent(
            source_id=a.source_id, assent_id=a.assent_id, revocation=a.revocation
        ),
        [
            SOURCE_ID,
            ("assent_id", {"help": "the assent's id (jti)"}),
            ("--revocation", {"default": "", "help": "the owner's signed revocation (JWS)"}),
        ],
    ),
]
