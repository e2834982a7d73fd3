"""The client subcommand for sessions: `sources append` adds the next message of a stored
conversation (a session that grows as it happens)."""

from __future__ import annotations

from agentmem.cli.spec_args import (
    EXPECTED,
    SAVE_INTENT_EVIDENCE,
    SAVE_INTENTS,
    SOURCE_ID,
    Spec,
    moment,
    text_to_insert,
)

SESSION_SPECS: list[Spec] = [
    (
        ("sources", "append"),
        "append a message to a stored conversation (compare-and-swap)",
        lambda c, a: c.append_messages(
            source_id=a.source_id,
            expected_revision=a.expected_revision,
            messages=[
                {"role": a.role, "content": text_to_insert(a), "name": a.name}
                | ({"sent_at": a.sent_at} if a.sent_at else {})
            ],
            save_intent=a.save_intent,
            save_intent_source=a.save_intent_source,
            save_intent_evidence=a.save_intent_evidence,
            request_id=a.request_id,
        ),
        [
            SOURCE_ID,
            (
                "content",
                {
                    "nargs": "?",
                    "default": None,
                    "help": "the message's text; - reads it from standard input",
                },
            ),
            ("--file", {"default": None, "help": "read the message's text from this file"}),
            EXPECTED,
            (
                "--role",
                {
                    "default": "user",
                    "choices": ["user", "assistant", "system", "tool"],
                    "help": "who said it (default: user)",
                },
            ),
            ("--name", {"default": "", "help": "the speaker's name (optional)"}),
            (
                "--sent-at",
                {
                    "type": moment,
                    "default": None,
                    "help": "when it was said (ISO 8601; optional)",
                },
            ),
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
            (
                "--request-id",
                {"default": "", "help": "makes a retry return the first result"},
            ),
        ],
    ),
]
