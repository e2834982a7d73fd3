"""A paraphrase set for hybrid retrieval: memories and the questions that ask for them in
other words (no content word in common), among distractors. Written for this benchmark.

Pairs alternate between a tuning half (even positions) and a first held-back half (odd
positions): the fusion formula and weights were chosen on the tuning half and LoCoMo-dev.
The held-back half was then looked at while the similarity floor was examined, so all 64
pairs are tuning data now (the floor was chosen on them); the reported figure is that of
`bench.paraphrase_heldback`, written blind afterwards.
"""

from __future__ import annotations

import random

from runtime_svc.domain.text import query_terms

PAIRS: list[tuple[str, str]] = [
    ("I have a yellow Squier Tele with a black pickguard", "what guitar do I own"),
    (
        "My daughter Emma started ballet lessons in September",
        "which dance classes does my kid attend",
    ),
    ("I am allergic to peanuts and carry an EpiPen", "what food makes me sick"),
    ("We adopted a tabby cat named Miso from the shelter", "what pet lives with us"),
    ("I drive a blue 2015 Honda Civic", "what car is mine"),
    ("My wife works as a pediatric nurse at St. Mary's hospital", "what is my spouse's job"),
    (
        "I ran the Berlin marathon in under four hours last autumn",
        "what long-distance race did I finish",
    ),
    ("Our wedding anniversary is on the 14th of June", "when did we get married"),
    ("I moved to Portland from Chicago three years ago", "which city did I relocate from"),
    ("My favourite author is Ursula K. Le Guin", "which novelist do I like reading most"),
    (
        "I'm learning Japanese with a tutor every Tuesday evening",
        "what foreign language am I studying",
    ),
    ("My brother Tom is a firefighter in Denver", "what does my sibling do for a living"),
    ("I take my coffee black with no sugar", "how do I like my morning drink"),
    ("I'm vegetarian and haven't eaten meat since 2012", "what diet do I follow"),
    ("My laptop is a ThinkPad X1 Carbon", "which computer do I use"),
    ("I was born in Nairobi, Kenya", "where is my hometown"),
    ("Our son plays goalkeeper for his school football team", "what sport is my boy into"),
    ("I'm terrified of heights and avoid ladders", "what phobia do I have"),
    ("My mother's birthday is March 3rd", "when was mum born"),
    ("I work remotely as a backend engineer for a fintech startup", "what is my profession"),
    (
        "We spent our honeymoon in Santorini, Greece",
        "where did the couple travel after getting married",
    ),
    ("I grow tomatoes and basil on my balcony", "what plants am I gardening"),
    (
        "My dentist appointment is next Thursday at 3pm",
        "when should I see the person who checks my teeth",
    ),
    ("I have type 1 diabetes and use an insulin pump", "what chronic illness do I manage"),
    ("My favourite band is Radiohead", "which musicians do I love listening to"),
    (
        "I speak fluent Portuguese because my grandparents are Brazilian",
        "which languages can I talk in",
    ),
    ("I quit smoking in 2019", "when did I stop using cigarettes"),
    ("Our apartment has two bedrooms and a small terrace", "how big is the flat where we live"),
    ("I'm saving up to buy a house next year", "what large purchase am I planning"),
    ("My partner Alex is a jazz pianist", "what instrument does my boyfriend play"),
    ("I broke my left wrist skiing in 2020", "what injury did I get on the slopes"),
    ("I volunteer at the food bank on Saturdays", "where do I help out weekly"),
    ("My favourite dish is my grandmother's lasagna", "which meal do I enjoy most"),
    ("I'm colourblind and can't tell red from green", "what problem do my eyes have"),
    ("I have two kids, aged seven and ten", "how many children are in my family"),
    ("I commute by bicycle every day", "how do I get to the office"),
    ("I hate cilantro, it tastes like soap to me", "which herb do I dislike"),
    (
        "My first job was bagging groceries at a supermarket",
        "where did I start working as a teenager",
    ),
    ("I'm afraid of spiders", "which creepy crawlies scare me"),
    ("I wear contact lenses because I'm short-sighted", "do I need glasses to see far"),
    ("My car insurance renews in October", "when is the vehicle policy due"),
    ("I studied mechanical engineering at Delft", "what was my university degree"),
    ("I keep bees in the back garden", "what hobby produces honey for me"),
    ("We go camping in the Lake District every August", "where do we pitch a tent each summer"),
    ("I'm lactose intolerant", "can I drink milk"),
    ("My grandfather fought in the Korean War", "which conflict was grandpa a soldier in"),
    ("I collect vintage vinyl records", "what old albums do I gather"),
    ("I meditate for twenty minutes each morning", "how do I calm my mind at dawn"),
    ("My sister Priya is getting married in Goa in December", "whose wedding is coming up"),
    ("I can't swim", "am I safe in deep water"),
    ("I sleep badly and usually wake up around 4am", "do I have insomnia"),
    ("My favourite football club is Arsenal", "which soccer team do I support"),
    ("I play chess online most evenings", "what board game do I enjoy at night"),
    ("I'm training for a triathlon in May", "what endurance event am I preparing for"),
    ("Our landlord raised the rent by ten percent", "how much more do we pay for housing"),
    ("I have a scar on my chin from a childhood accident", "where is the mark on my face"),
    ("I'm a night owl and do my best work after midnight", "when am I most productive"),
    ("My dad taught me to fish when I was six", "who showed me angling"),
    ("I get migraines when I skip meals", "what triggers my headaches"),
    ("I drink oat milk instead of dairy", "what do I pour on cereal"),
    ("I flew to Tokyo for a conference in April", "which trip abroad did I take for work"),
    ("My phone is an old iPhone 8 with a cracked screen", "what mobile device do I carry"),
    ("I knit scarves for my nieces every winter", "what crafts do I make for relatives"),
    ("I'm renovating the kitchen myself", "what home improvement project am I doing"),
]

_PEOPLE = [
    "My neighbour",
    "A colleague of mine",
    "My cousin",
    "My old roommate",
    "Our landlord's son",
    "My manager",
    "A friend from school",
    "My aunt",
    "The barista downstairs",
    "My uncle",
    "Our mail carrier",
    "My yoga teacher",
]
_DOINGS = [
    "is moving to Dublin",
    "just bought an electric scooter",
    "recommended a podcast about history",
    "is organising a charity quiz",
    "opened a small bakery",
    "repainted the garden fence",
    "adopted two goldfish",
    "is writing a thriller novel",
    "hosts a monthly book club",
    "runs a vintage clothing stall",
    "lost their keys at the station",
    "started learning to sail",
    "is fixing up an old motorbike",
    "booked a cruise to Norway",
    "sings in a gospel choir",
    "grows giant pumpkins",
    "collects stamps from Africa",
    "switched to a standing desk",
]
_WHEN = ["next month", "this weekend", "last year", "on Fridays", "every spring", "since March"]
_NOTES = [
    "The quarterly report is due before the board meeting",
    "Remember to renew the parking permit at the town hall",
    "The printer on the third floor keeps jamming",
    "The team retrospective moved to Wednesday afternoon",
    "The new bus timetable starts in two weeks",
    "The library closes early on public holidays",
    "The water will be shut off on Tuesday morning for repairs",
    "The recycling is collected every other Monday",
    "The gym changed its opening hours for the winter",
    "The guitar shop website launch slipped to next Friday",
    "The conference badge has to be printed at home",
    "The plumber said the boiler needs a new valve",
    "The school trip permission slip needs a signature",
    "The quarterly tax payment is due at the end of the month",
    "The project kickoff presentation needs twelve slides",
    "The bakery on the corner sells sourdough on Saturdays",
    "The vet reminded us about the annual vaccination",
    "The train to Leeds leaves from platform four",
    "The wifi password for the office changed yesterday",
    "The museum is free on the first Sunday of the month",
]


def distractors(n: int = 220, seed: int = 13) -> list[str]:
    """`n` memories about other people and chores, none answering a question of the set."""
    rng = random.Random(seed)
    combos = [f"{p} {d} {w}" for p in _PEOPLE for d in _DOINGS for w in _WHEN]
    rng.shuffle(combos)
    return _NOTES + combos[: n - len(_NOTES)]


def halves() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(tuning pairs, held-back pairs)."""
    return PAIRS[0::2], PAIRS[1::2]


def shared_words(memory: str, question: str) -> set[str]:
    """Content words (stems, stop words left out) the two have in common."""
    return {t.stem for t in query_terms(memory)} & {t.stem for t in query_terms(question)}
