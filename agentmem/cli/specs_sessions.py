"""The client subcommand for sessions: `sources append` adds the next message of a stored
conversation (a session that grows as it happens)."""

from __future__ import annotations

from agentmem.cli.spec_args import EXPECTED, SAVE_INTENTS, SOURCE_ID, Spec, text_to_insert

SESSION_SPECS: list[Spec] = [
    (
        ("sources", "append"),
        "append a message to a stored conversation (compare-and-swap)",
        lambda c, a: c.append_messages(
            source_id=a.source_id,
            expected_revision=a.expected_revision,
            messages=[{"role": a.role, "content": text_to_insert(a), "name": a.name}],
            save_intent=a.save_intent,
            save_intent_source=a.save_intent_source,
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
                "--save-intent",
                {
                    "default": "",
                    "choices": list(SAVE_INTENTS),
                    "help": "why it is saved: " + ", ".join(SAVE_INTENTS),
                },
            ),
            ("--save-intent-source", {"default": "", "help": "the client that saves it"}),
        ],
    ),
]
