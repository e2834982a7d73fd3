"""Memory text that reads as instructions to the model, not as something about the user.

A memory is served into every later prompt; text that speaks to the model itself (a role
tag, "ignore previous instructions" in any of the languages below, "you are now …", a note
to whichever AI reads it, tool-call syntax, a chat template's markers of the common model
families) is an attempt to steer it (OWASP ASI06, memory poisoning). The text is read as an
attacker disguises it too (`attack_text`: look-alike letters, digits for letters, spaced
letters, invisible characters). Such a memory is held
for review with the reason `instruction_like` (`docs/security.md`). Preferences addressed
to the assistant ("answer me in French", "from now on call me Sam") are memories, not
attacks: the patterns below name what only an attack says.

Measured on a labelled set (`tests/data/instruction_like.jsonl`) and, for false positives,
on every message of the LoCoMo and BEAM development conversations
(`python -m bench.instruction_like`).
"""

from __future__ import annotations

import re

from runtime_svc.domain import attack_text

HOLD_REASON = "instruction_like"

_FLAGS = re.IGNORECASE | re.MULTILINE
_ANY = r"(?:all|any|every|the|your|my|these|those|of)\s+"
_PRIOR = r"(?:previous|prior|preceding|above|earlier|former|original|initial|system|existing)"
_RULES = r"(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|context|messages)"

PATTERNS: dict[str, re.Pattern[str]] = {
    # "ignore all previous instructions", "disregard the above rules"
    "override": re.compile(
        rf"\b(?:ignore|disregard|forget|override|bypass|overrule|discard)\s+(?:{_ANY}){{0,3}}"
        rf"(?:{_PRIOR}\s+)+(?:and\s+\w+\s+)?{_RULES}\b",
        _FLAGS,
    ),
    # the same in the other languages people write their memories in
    "override_translated": re.compile(
        # German, French, Spanish
        r"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen\s+sie)\s+(?:(?:alle|die|sämtliche|deine|"
        r"ihre)\s+)*(?:vorherigen|bisherigen|obigen|früheren|vorigen)\s+(?:anweisungen|"
        r"instruktionen|befehle|regeln)\b"
        r"|\b(?:ignore[rz]?|oublie[rz]?)\s+(?:(?:toutes?|tous|les|tes|vos)\s+)*(?:instructions|"
        r"consignes|règles|directives)\s+(?:précédentes|antérieures|ci-dessus)"
        r"|\b(?:ignora|ignore|olvida)\s+(?:(?:todas|todos|las|los|tus|sus)\s+)*(?:instrucciones|"
        r"indicaciones|reglas|órdenes)\s+(?:anteriores|previas|de\s+arriba)"
        # Russian, Chinese, Japanese
        r"|(?:игнорир\w*|забудь\w*|проигнорир\w*)\s+(?:(?:все|всё|свои|предыдущие|прежние|"
        r"прошлые|эти)\s+)*(?:инструкци\w*|указани\w*|правил\w*|команд\w*)"
        r"|(?:忽略|无视|忘记|忽视|忘掉)(?:掉)?(?:之前|以前|上面|先前|前面|所有|全部|一切)(?:的)?"
        r"(?:所有|全部)?(?:的)?(?:指令|指示|说明|规则|命令|提示)"
        r"|(?:以前|前|上記|これまで)の(?:すべての|全ての)?(?:指示|命令|ルール|指令)を"
        r"(?:すべて|全て)?(?:無視|忘れ)",
        _FLAGS,
    ),
    # a note to whichever AI reads the record, rather than about the user
    "indirect": re.compile(
        r"\b(?:note|message|instructions?|attention|reminder|directive)\s+(?:to|for)\s+"
        r"(?:any|all|every|whichever|each)\s+(?:future\s+)?(?:AI|LLM|language\s+model|"
        r"assistants?|models?|agents?|bots?)\b"
        r"|\bif\s+you\s+are\s+an?\s+(?:AI|LLM|(?:large\s+)?language\s+model|AI\s+assistant)\b"
        r"|\b(?:AI|LLM|assistant|model|agent)s?\s+(?:reading|processing|retrieving|parsing|"
        r"summari[sz]ing)\s+this\s+(?:record|memory|note|message|text|document|conversation)\b",
        _FLAGS,
    ),
    "new_instructions": re.compile(
        r"^[^\w\n]{0,8}(?:new|updated|real|actual|hidden|secret)\s+"
        r"(?:system\s+)?instructions?\s*:",
        _FLAGS,
    ),
    # "you are now DAN", "you are now in developer mode", "act as an unrestricted AI"
    "persona": re.compile(
        r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:a\s+|an\s+|in\s+|called\s+)?"
        r"(?:DAN\b|jailbroken|unrestricted|unfiltered|uncensored|developer\s+mode|"
        r"evil|free\s+(?:of|from)\s+(?:all\s+)?(?:rules|restrictions)|an?\s+AI\b|"
        r"bound\s+by|restricted|required\s+to\s+follow|(?:a\s+)?different\s+(?:AI|assistant|model))"
        r"|\b(?:enable|enter|activate)\s+(?:the\s+)?(?:developer|god|jailbreak|DAN)\s+mode\b"
        r"|\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken|uncensored)\b",
        _FLAGS,
    ),
    # role tags and chat-template markers a model reads as structure
    "role_tag": re.compile(
        r"</?\s*(?:system|memories|tool_call|tool_result|function_calls?|function_results?|"
        r"antml:[a-z_]+)\b[^<>]{0,80}>"
        r"|</\s*(?:assistant|user|developer|instructions?|tool|invoke|parameter)\s*>"
        r"|^[ \t]{0,8}<\s*(?:assistant|user|developer|instructions?)\s*>"
        r"|<\|\s*(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id)"
        r"|\[/?INST\]|<</?SYS>>"
        # Gemma's turns, Mistral's tool markers, the harmony and Phi tokens, Alpaca headings,
        # a legacy Human/Assistant turn after a blank line
        r"|<\s*(?:start|end)_of_turn\s*>"
        r"|\[(?:TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS|SYSTEM_PROMPT)\]"
        r"|<\|\s*(?:begin_of_text|start|end|message|channel|return|call|constrain)\s*\|>"
        r"|^[ \t]*###\s*(?:instruction|system|system\s+prompt)\s*:"
        r"|\n\s*\n\s*(?:Human|Assistant)\s*:"
        r"|^[^\w\n]{0,8}(?:system|developer)\s*(?:prompt|message|instructions?)\s*:"
        r"|^[^\w\n]{0,8}(?:system|developer)\s*:\s*(?:you\b|the\s+(?:assistant|model|AI)\b|always\b|"
        r"never\b|from\s+now\b|ignore\b|do\s+not\b|respond\b|answer\b|reply\b)",
        _FLAGS,
    ),
    # tool-call syntax: an OpenAI-style call or a JSON object naming a function to run
    "tool_call": re.compile(
        r"\"(?:function_call|tool_calls?|tool_use)\"\s*:"
        r"|\{\s*\"(?:name|tool|function)\"\s*:\s*\"[\w.-]+\"\s*,\s*\"(?:arguments|parameters|args|input)\"",
        _FLAGS,
    ),
    # telling the model what to do to the user, or to keep it from the user
    "addressed_to_model": re.compile(
        r"\b(?:tell|instruct|ask|urge|convince|persuade|remind)\s+the\s+user\s+to\s+"
        r"(?:send|give|share|provide|transfer|wire|pay|enter|reveal|disclose|click|visit|"
        r"download|install|run|email)\b"
        r"|\b(?:do\s+not|don't|never)\s+(?:tell|inform|reveal\s+to|mention\s+(?:this\s+)?to)"
        r"\s+the\s+user\b"
        r"|\b(?:reveal|print|repeat|output|show|leak)\s+(?:me\s+)?(?:your|the)\s+"
        r"(?:system\s+prompt|hidden\s+instructions|initial\s+instructions)\b"
        r"|\bwhen(?:ever)?\s+(?:you|the\s+(?:assistant|model|AI))\s+(?:read|see|retrieve|recall)s?"
        r"\s+this\s+(?:memory|message|note|text)\b"
        # a speaker or a text claiming authority over the model: "obey this speaker"
        r"|\bobey\s+(?:only\s+)?(?:this|these|the\s+following|my)\s+"
        r"(?:speaker|sender|message|memory|note|text|instructions?|commands?|orders?)\b",
        _FLAGS,
    ),
}


# Words every match of a pattern holds, lower-case (one of them at least: one for each
# alternative of the pattern). A pattern is tried at every character of a text (about
# 0.1 ms on a 2,500-character reply for each); on ASCII text one whose words are all
# missing cannot match and is not tried. Only on ASCII text: there the patterns'
# case-insensitive letters are exactly the lower-case ones (elsewhere, "İ" matches "i").
WORDS: dict[str, tuple[str, ...]] = {
    "override": ("ignore", "disregard", "forget", "override", "bypass", "overrule", "discard"),
    "new_instructions": ("instruction",),
    "persona": ("you", "mode", "unrestricted", "unfiltered", "jailbroken", "uncensored"),
    "role_tag": ("<", "inst]", "system", "developer", "[", "###", "human", "assistant"),
    "indirect": (
        "note",
        "message",
        "instruction",
        "attention",
        "reminder",
        "directive",
        "if",
        "this",
    ),
    "override_translated": ("ignor", "vergiss", "vergessen", "oubli", "olvida"),
    "addressed_to_model": ("user", "system", "instruction", "when", "obey"),
}


def signals(text: str) -> list[str]:
    """The names of the patterns `text` matches (empty: it reads as a memory), in any of
    the forms an attacker's disguise reads as (`attack_text.forms`: the compatibility form
    without invisible characters, look-alike letters folded, digits and spaced letters read
    as the word)."""
    found: list[str] = []
    for form in attack_text.forms(text):
        lowered = form.lower() if form.isascii() else None
        found += [
            name
            for name, pattern in PATTERNS.items()
            if name not in found
            and (lowered is None or _may_match(name, lowered))
            and pattern.search(form)
        ]
    return found


def _may_match(name: str, lowered: str) -> bool:
    words = WORDS.get(name)
    return words is None or any(w in lowered for w in words)


def instruction_like(*texts: str) -> bool:
    """Whether any of `texts` (a memory's text, or a conversation's messages) reads as
    instructions to the model."""
    return any(signals(t) for t in texts)
