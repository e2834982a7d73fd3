"""The words the rule-based extractor reads (`extraction`): data, one table per idea.

Every predicate is in the third person and has one spelling per meaning ("works at" for
work at and work for; "lives in" for live in, moved to, am based in), so that statements
of one attribute in any phrasing meet in one chain (`fact_chains`).
"""

from __future__ import annotations

# After "I" (and after "do not", "used to", "no longer" for anyone): phrase → predicate.
FIRST_PERSON: dict[str, str] = {
    "live in": "lives in",
    "reside in": "lives in",
    "am living in": "lives in",
    "have been living in": "lives in",
    "have lived in": "lives in",
    "am based in": "lives in",
    "work at": "works at",
    "work for": "works at",
    "am working at": "works at",
    "am working for": "works at",
    "have been working at": "works at",
    "have been working for": "works at",
    "work as": "works as",
    "am working as": "works as",
    "study at": "studies at",
    "am studying at": "studies at",
    "have": "has",
    "have got": "has",
    "own": "owns",
    "drive": "drives",
    "play": "plays",
    "use": "uses",
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
    "hate": "hates",
    "dislike": "dislikes",
    "speak": "speaks",
    "collect": "collects",
    "study": "studies",
    "teach": "teaches",
    "need": "needs",
    "want": "wants",
    "eat": "eats",
    "drink": "drinks",
    "am": "is",
    "am allergic to": "is allergic to",
    "am married to": "is married to",
    "am engaged to": "is engaged to",
    "am dating": "is dating",
    "am from": "is from",
    "grew up in": "grew up in",
}

# After "my <someone>": the predicates themselves, and what only a third person says.
THIRD_PERSON: dict[str, str] = {
    **{p: p for p in set(FIRST_PERSON.values())},
    "is living in": "lives in",
    "is based in": "lives in",
    "is working at": "works at",
    "works for": "works at",
    "is working as": "works as",
    "are": "are",
    "was": "was",
    "is called": "is called",
    "is named": "is named",
}

# A change, said by anyone ("I moved to X", "my sister moved to X"): phrase → predicate.
CHANGES: dict[str, str] = {
    "moved to": "lives in",
    "moved back to": "lives in",
    "have moved to": "lives in",
    "has moved to": "lives in",
    "relocated to": "lives in",
    "have relocated to": "lives in",
    "started working at": "works at",
    "started working for": "works at",
    "started a new job at": "works at",
    "started a job at": "works at",
    "got a job at": "works at",
    "got a job with": "works at",
    "got a new job at": "works at",
    "got a new job with": "works at",
    "started working as": "works as",
    "got a job as": "works as",
    "got married to": "is married to",
    "got engaged to": "is engaged to",
}

# A value that ended, said by anyone: phrase → predicate.
ENDINGS: dict[str, str] = {
    "stopped working at": "works at",
    "stopped working for": "works at",
    "quit my job at": "works at",
    "quit his job at": "works at",
    "quit her job at": "works at",
    "quit their job at": "works at",
    "left my job at": "works at",
    "moved out of": "lives in",
    "moved away from": "lives in",
    "stopped playing": "plays",
    "stopped using": "uses",
    "stopped eating": "eats",
    "stopped drinking": "drinks",
}

# Words between the subject and the verb that change nothing.
ADVERBS = (
    "also|really|still|now|currently|actually|just|recently|finally|already|definitely|"
    "absolutely|totally|mostly|usually|even|truly|honestly|happily|originally|officially"
)

# Sentence openings that change nothing ("By the way, I live in Oslo").
OPENINGS = (
    "and|so|also|actually|well|oh|btw|by the way|fyi|anyway|honestly|for the record|"
    "just so you know|fun fact|update|news|ok|okay|yes|yeah|hey|hi|hello|please note|"
    "please remember|remember|note|for context|quick update|just a heads up|heads up|"
    "these days|nowadays|lately|currently|now|at the moment|since \\w+(?: \\d{4})?"
)

# After the subject: what is wished, planned, supposed or denied, not stated as true.
NOT_STATED = (
    "will|would|might|may|could|should|can|shall|must|am going to|am gonna|want to|"
    "wanted to|wish|hope|think|guess|believe|wonder|plan to|am planning|am thinking|"
    "am considering|am trying|am not sure|did not|never|am about to|need to|have to|"
    "like to|love to|would like|am tired"
)
# … and after "I" only: the past ("I was in Lisbon last week").
NOT_STATED_BY_THE_USER = "was|were|had"

# "my <thing> is …" that are not about the user's life ("my question is …").
NOT_THINGS = frozenset(
    {
        "question",
        "point",
        "bad",
        "guess",
        "idea",
        "concern",
        "problem",
        "issue",
        "understanding",
        "impression",
        "opinion",
        "answer",
        "pleasure",
        "fault",
        "mistake",
        "thought",
        "thoughts",
        "request",
        "apologies",
        "worry",
        "point is",
    }
)

# Predicates whose object may list several values with commas ("Python, Rust and Go"),
# and those whose "A and B" is two values even without a comma.
LISTS = frozenset(
    {"likes", "loves", "enjoys", "hates", "dislikes", "speaks", "plays", "uses", "collects"}
)
PAIRS = frozenset({"is allergic to"})
# Predicates whose "a X and a Y" is two values (each side opens with a determiner).
COUNTED = frozenset({"has", "owns", "needs", "wants"})
DETERMINERS = "a|an|the|two|three|four|five|some|one|my|several|many"

# Trailing words that say when, not what ("I live in Lisbon now").
TRAILING = (
    "now|too|as well|again|these days|nowadays|at the moment|right now|currently|"
    "anymore|any more|any longer|for now|though|today"
)
# Where the value of a place, an employer, a role or a person ends ("Berlin with my wife").
CUT_AT = (
    "with|since|for|because|where|after|before|in|on|last|this|next|from|until|when|"
    "during|near|as of|at|and|but|so|who|which"
)
