"""Synthetic natural-language memories for the benchmark, and a bulk loader.

Two vocabularies, each with English function words (as frequent as in real text):
- selective (`Language`): 40,000 pseudo-words whose frequencies follow a Zipf law
  (s = 1.05), so a few content words are very common and most are rare;
- everyday (`Language(everyday=True)`): the same few hundred everyday words reused by every
  memory (Zipf, s = 1.0), so every question word matches thousands of memories, as for a
  tenant that writes about the same daily life over and over;
- low selectivity (`Language(everyday=True, narrow=12)`): only the commonest few everyday
  words, so most memories hold every word of a question.
- short sentences (`ShortLanguage`): five templates over about fifty everyday words (Zipf,
  s = 1.3: the commonest word is in most memories), a person's name and a random number
  token each; questions from four templates.
- common words (`ShortLanguage(common=True)`): the same templates over only forty of those
  words, drawn nearly evenly (Zipf, s = 0.5), and sixteen names: every question word matches
  hundreds to thousands of memories.
Otherwise sentences are 10 to 22 words; queries are questions built from the same distribution
("what did I say about the … and …?").

The loader writes sources and their index entries through the runtime's own repositories,
in large transactions (a fixture import: no per-memory events or receipts). Conversations
(a corpus counted in passages) are inserted through the runtime's own insert use case, one
transaction each, so they are stored exactly as `InsertMemory` stores them.
"""

from __future__ import annotations

import bisect
import itertools
import random
from collections.abc import Iterator

from sqlalchemy import text

from agentmem_kernel import config
from agentmem_kernel.config import Storage
from runtime_svc.adapters import tokenizers
from runtime_svc.composition import unit_of_work, use_cases
from runtime_svc.domain import eligibility
from runtime_svc.domain.caller import Caller
from runtime_svc.domain.ids import new_id
from runtime_svc.domain.sources import (
    Body,
    Classification,
    Message,
    Provenance,
    SaveIntent,
    Source,
    SourceKind,
    Status,
)
from runtime_svc.retrieval import LexicalOnlyReason
from runtime_svc.retrieval.held.mirrors import Mirrors
from runtime_svc.services.inserts import InsertCommand
from runtime_svc.storage import migrate
from runtime_svc.storage.db import Database, open_database
from runtime_svc.storage.postings import Indexable
from runtime_svc.storage.unit_of_work import UnitOfWork

_FUNCTION_WORDS = """
    the a to and of i in my it that was for on with is at we me but so this had have be our
    you she he they her his about from by just
"""
FUNCTION_WORDS = _FUNCTION_WORDS.split()
VOCABULARY_SEED = 7
CONTENT_WORDS = 40_000
ZIPF_S = 1.05
EVERYDAY_S = 1.0
_EVERYDAY = """
    time day week year morning evening night weekend today tomorrow yesterday hour minute
    family mother father sister brother son daughter friend wife husband kid baby dog cat
    house home room kitchen garden car bike train bus plane trip travel holiday beach mountain
    city park school work job office meeting boss project team email phone call message
    food dinner lunch breakfast coffee tea cake pizza bread cheese wine beer water fruit apple
    music song concert movie book game sport football tennis run walk swim gym yoga class
    doctor health sick pain sleep dream birthday party wedding gift money bank rent bill shop
    store market price sale clothes shoe shirt dress hat rain snow sun weather cold hot warm
    start finish plan idea problem question answer story news letter photo picture camera art
    paint draw write read learn teach study test exam course language english french spanish
    cook bake clean wash fix build drive fly visit meet help love hate want need buy sell pay
    new old big small long short good bad happy sad busy tired early late first last next best
    friday monday sunday saturday tuesday wednesday thursday january march june july october
    december summer winter spring autumn christmas church hospital library museum restaurant
    hotel airport station street road bridge river lake sea island forest farm village town
    country world computer laptop internet website app software code bug data report paper
    table chair bed door window wall floor light lamp box bag key card ticket map list note
    color red blue green black white yellow pink orange purple brown grey gold silver glass
    neighbor teacher student nurse driver chef artist writer singer player coach manager client
    guitar piano violin drum band dance theater show festival flower tree plant
    chicken beef fish rice pasta soup salad egg milk butter sugar salt pepper chocolate cookie
"""
EVERYDAY = _EVERYDAY.split()
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def _vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < CONTENT_WORDS:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Language:
    """One vocabulary (always the same), sampled with its own seed."""

    def __init__(self, seed: int = 7, *, everyday: bool = False, narrow: int = 0) -> None:
        """`narrow`: only the first so many words of the vocabulary (after its shuffle)."""
        vocabulary_rng = random.Random(VOCABULARY_SEED)
        if everyday:
            self.words, s = list(dict.fromkeys(EVERYDAY)), EVERYDAY_S
        else:
            self.words, s = _vocabulary(vocabulary_rng), ZIPF_S
        vocabulary_rng.shuffle(self.words)
        if narrow:
            self.words = self.words[:narrow]
        self.rng = random.Random(seed)
        weights = [1 / (rank**s) for rank in range(1, len(self.words) + 1)]
        self.cumulative = list(itertools.accumulate(weights))

    def content_word(self) -> str:
        x = self.rng.random() * self.cumulative[-1]
        return self.words[bisect.bisect_left(self.cumulative, x)]

    def sentence(self) -> str:
        parts = []
        for _ in range(self.rng.randint(10, 22)):
            parts.append(
                self.rng.choice(FUNCTION_WORDS) if self.rng.random() < 0.45 else self.content_word()
            )
        return parts[0].capitalize() + " " + " ".join(parts[1:]) + "."

    def question(self) -> str:
        a, b, c = (self.content_word() for _ in range(3))
        return self.rng.choice(
            [
                f"What did I say about the {a} and the {b}?",
                f"When was the {a} {b} with {c}?",
                f"Do you remember my {a} from the {b}?",
                f"Tell me about {a}, {b} and {c}.",
            ]
        )


# The short-sentence shape: five templates over about fifty everyday words drawn Zipf-like
# (s = 1.3: the commonest word is in most memories), a person's name and a random number
# token in each; questions from four templates.
SHORT_ZIPF_S = 1.3
_SHORT_WORDS = """
    coffee tea dinner lunch breakfast car bike train house kitchen garden dog cat phone email
    meeting project office doctor gym book movie song party gift money bank shop market bread
    cheese wine pizza cake apple weekend morning evening trip beach park school work key
    ticket bag map letter photo camera guitar piano
"""
SHORT_WORDS = _SHORT_WORDS.split()
_NAMES = """
    Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Mallory Nina Oscar Peggy Quinn Rita
    Sam Trent Uma Victor Wendy Xavier Yara Zoe
"""
NAMES = _NAMES.split()
SHORT_TEMPLATES = (
    "{name} bought a {a} and a {b} for {num}.",
    "I told {name} about the {a} {b} on day {num}.",
    "{name} likes the {a}, the {b} and the {c}, note {num}.",
    "We took the {a} to the {b} with {name}, ticket {num}.",
    "Remember that {name} needs a {a} {b} by {num}.",
)
SHORT_QUESTIONS = (
    "What did {name} say about the {a}?",
    "When did I buy the {a} and the {b}?",
    "Who likes the {a}?",
    "Where is the {a} {b}?",
)


COMMON_WORDS = 40
COMMON_NAMES = 16
COMMON_ZIPF_S = 0.5


class ShortLanguage:
    """Short sentences from five templates (the `short` shape; with `common`, the
    common-words shape); same interface as `Language`."""

    def __init__(self, seed: int = 7, *, common: bool = False) -> None:
        self.rng = random.Random(seed)
        self.words = list(SHORT_WORDS[:COMMON_WORDS] if common else SHORT_WORDS)
        self.names = list(NAMES[:COMMON_NAMES] if common else NAMES)
        s = COMMON_ZIPF_S if common else SHORT_ZIPF_S
        weights = [1 / rank**s for rank in range(1, len(self.words) + 1)]
        self.cumulative = list(itertools.accumulate(weights))

    def content_word(self) -> str:
        x = self.rng.random() * self.cumulative[-1]
        return self.words[bisect.bisect_left(self.cumulative, x)]

    def _fill(self, template: str) -> str:
        a, b, c = (self.content_word() for _ in range(3))
        name, num = self.rng.choice(self.names), str(self.rng.randint(1000, 999_999))
        return template.format(a=a, b=b, c=c, name=name, num=num)

    def sentence(self) -> str:
        return self._fill(self.rng.choice(SHORT_TEMPLATES))

    def question(self) -> str:
        return self._fill(self.rng.choice(SHORT_QUESTIONS))


def language(
    seed: int = 7,
    *,
    everyday: bool = False,
    narrow: int = 0,
    short: bool = False,
    common: bool = False,
) -> Language | ShortLanguage:
    if short or common:
        return ShortLanguage(seed, common=common)
    return Language(seed, everyday=everyday, narrow=narrow)


def memories(lang: Language | ShortLanguage, n: int) -> Iterator[str]:
    for _ in range(n):
        yield lang.sentence()


def load(
    url: str,
    tenants: list[str],
    per_tenant: int,
    *,
    everyday: bool = False,
    narrow: int = 0,
    short: bool = False,
    common: bool = False,
    seed: int = 7,
    batch: int = 5000,
    analysed: bool = True,
) -> None:
    """Creates the schema and loads `per_tenant` memories into each tenant. Without
    `analysed`, the database is left as a burst of inserts leaves it: no planner statistics
    (on PostgreSQL autovacuum is turned off for its tables, so none are gathered during the
    run either)."""
    db = open_database(Storage(url=url))
    migrate.upgrade(db.writer)
    if not analysed:
        without_statistics(db)
    uow = UnitOfWork(db)
    lang = language(seed, everyday=everyday, narrow=narrow, short=short, common=common)
    provenance = Provenance("bench-loader", "service", "import", "")
    for tenant in tenants:
        left = per_tenant
        while left:
            n = min(batch, left)
            left -= n
            batch_sources = [
                Source(
                    new_id("src"),
                    1,
                    SourceKind.MEMORY,
                    Classification.ACTIVE,
                    Status.ACTIVE,
                    "",
                    Body(content=text),
                    provenance,
                    SaveIntent(),
                    {},
                    1,
                    1,
                )
                for text in memories(lang, n)
            ]
            with uow.write(tenant) as tx:
                pks = tx.sources.add_many(batch_sources)
                tx.index.put_many(
                    [
                        Indexable(pk, s.body.generated_form(), True)
                        for pk, s in zip(pks, batch_sources, strict=True)
                    ]
                )
                tx.counters.indexed_docs += n
    if analysed:
        analyse(db)
    db.dispose()


def without_statistics(db: Database) -> None:
    """PostgreSQL: autovacuum off for every table, so no statistics are gathered."""
    if db.dialect != "postgresql":
        return
    with db.writer.begin() as conn:
        tables = conn.exec_driver_sql(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).all()
        for (table,) in tables:
            conn.exec_driver_sql(f'ALTER TABLE "{table}" SET (autovacuum_enabled = false)')


def analyse(db: Database) -> None:
    """Planner statistics after a bulk load (autovacuum would get there later)."""
    if db.dialect == "postgresql":
        with db.writer.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")
    else:
        with db.writer.begin() as conn:
            conn.exec_driver_sql("ANALYZE")


def make_cold(url: str, tenant: str, fraction: float, *, seed: int = 11) -> int:
    """Marks about `fraction` of the tenant's sources cold and the rest active (revision + 1
    and index scope updated for each change, as SetSourceClassification does); returns how
    many are cold."""
    db = open_database(Storage(url=url))
    uow = UnitOfWork(db)
    rng = random.Random(seed)
    with uow.write(tenant) as tx:
        rows = tx.conn.execute(
            text("SELECT pk, classification FROM sources WHERE tenant_id = :t ORDER BY pk"),
            {"t": tenant},
        ).all()
        cold = {pk for pk, _ in rows if rng.random() < fraction}
        for pk, classification in rows:
            want = Classification.COLD if pk in cold else Classification.ACTIVE
            if want.value == classification:
                continue
            tx.conn.execute(
                text(
                    "UPDATE sources SET classification = :c, revision = revision + 1 WHERE pk = :pk"
                ),
                {"c": want.value, "pk": pk},
            )
            row = {
                "classification": want.value,
                "status": "active",
                "revoked_at_us": 0,
                "assent_state": "",
                "assent_expires_at_us": 0,
            }
            tx.index.set_eligible(pk, eligibility.eligible_regardless_of_time(row))
    db.dispose()
    return len(cold)


# -- conversations: a corpus counted in passages ---------------------------------------------

SPEAKERS = ("Alex", "Sam")
MESSAGES_PER_CONVERSATION = 10
DAY_US = 86_400 * 1_000_000
START_US = 1_683_000_000 * 1_000_000  # 2 May 2023


def conversation(lang: Language, n: int, day: int) -> list[Message]:
    """`n` messages, user and assistant in turn, with the speakers' names and one date."""
    sent = START_US + day * DAY_US
    return [
        Message(
            "user" if i % 2 == 0 else "assistant",
            lang.sentence(),
            SPEAKERS[i % 2],
            sent,
        )
        for i in range(n)
    ]


def conversations(
    lang: Language, passages: int, per_conversation: int = MESSAGES_PER_CONVERSATION
) -> Iterator[list[Message]]:
    """Conversations holding `passages` messages in all (one passage per message)."""
    day = 0
    while passages > 0:
        n = min(per_conversation, passages)
        passages -= n
        yield conversation(lang, n, day)
        day += 1


def load_conversations(
    url: str,
    tenants: list[str],
    passages_per_tenant: int,
    *,
    everyday: bool = False,
    seed: int = 7,
    per_conversation: int = MESSAGES_PER_CONVERSATION,
) -> int:
    """Creates the schema and inserts conversations holding `passages_per_tenant` passages
    into each tenant through the runtime's own insert use case (wired by its composition root,
    with the benchmark runtime's default settings), so the database holds exactly what
    `InsertMemory` writes: the source, its passages in the index, its facts, its event and
    receipt, the counters. Only the gRPC hops and group commit are skipped. Returns how many
    conversations were inserted."""
    settings = config.load(None, {"storage.url": url})
    db = open_database(settings.storage)
    migrate.upgrade(db.writer)
    mirrors = Mirrors(settings.search.held_min_entries, settings.search.held_max_postings)
    inserts = use_cases(
        settings,
        unit_of_work(settings, db, mirrors),
        mirrors,
        semantic=None,
        lexical_only_reason=LexicalOnlyReason.DISABLED,
        counter=tokenizers.counter(tokenizers.WORDS),  # inserts count no tokens
        notify=lambda _tenant: None,
    ).inserts
    lang = Language(seed, everyday=everyday)
    count = 0
    for tenant in tenants:
        caller = Caller(tenant, "bench-loader", "service", frozenset(), surface="import")
        for messages in conversations(lang, passages_per_tenant, per_conversation):
            inserts.insert(caller, InsertCommand(messages=messages))
            count += 1
    analyse(db)
    db.dispose()
    return count
