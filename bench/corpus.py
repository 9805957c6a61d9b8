"""Synthetic developer-memory text: a Zipf-ranked vocabulary, memories drawn from it, and recall queries."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

TEXT_SEED = 20240601
QUERY_SEED = 7
QUERY_COUNT = 200
VOCAB_SIZE = 4_000
GLUE_SHARE = 0.35


def _words(text: str) -> list[str]:
    return text.split()


# Seed words (~400): nouns take a plural, verbs -s/-ed/-ing, the rest stay as they are.
NOUNS = _words(
    """
api app async auth backend batch branch buffer build bundle cache call callback cert channel check chunk
cli client clock cluster commit compiler config connection container context cookie core cron cursor
daemon dashboard data database deadline debug decoder dependency deploy diff digest directory disk
dispatch domain driver dump encoder endpoint engine env error event exception export fetch field file
filter flag flush fork format frame function gateway graph handler hash header heap hook host http image
import index input install instance interface job json kernel key lambda latency layer lease library
limit link lint list listener load lock log loop manifest map memory merge message metadata method
metric middleware migration mock model module monitor mount mutex namespace network node object offset
option orm output package page pager parser partition patch path payload peer permission pid pipeline
plugin pointer policy pool port process profile prompt protocol proxy query queue quota range rate
reader record registry release replica repo request resolver resource response retry review role root
route router runtime sandbox schema scheduler scope script sdk secret selector semaphore server service
session shard shell signal snapshot socket source span spec stack state status storage store stream
string struct subprocess suite symbol syntax table tag task template tenant test thread timer token
trace transaction trigger tuple type unit upload uri url user util uuid validator value variable vector
version view volume watcher webhook worker workspace yaml zone
"""
)

# Verbs.
VERBS = _words(
    """
add allocate apply bind block bump cancel clean clear close compact compress connect convert copy create
decrypt delete detect disable drop emit enable encrypt evict expire fail fix freeze guard hang ignore
inject invalidate join kill leak mark migrate move open override parse pin poll prune publish pull push
read rebase reboot reconnect refactor refresh reject reload remove rename render replace replay reset
restart restore revert rollback rotate run save scan seed send serialize shutdown skip sort spawn split
start stop strip swap throttle truncate unlink unlock update upgrade validate verify wait warn wrap
"""
)

# Adjectives.
ADJECTIVES = _words(
    """
atomic broken cold concurrent corrupt deprecated dirty empty flaky global hot idle invalid lazy legacy
local missing nested offline optional private public readonly remote slow stale strict transient unused
verbose
"""
)

# Tools and products.
TOOLS = _words(
    """
postgres sqlite mysql kafka nginx kubernetes helm terraform ansible webpack vite pytest mypy ruff numpy
pandas react typescript rust golang python npm pip poetry cargo gradle maven jest eslint prettier celery
grpc graphql oauth jwt tls ssh systemd launchd wsl macos linux windows arm64 x86 github gitlab jenkins
docker fts5 bm25 wal msgpack msgspec aiosqlite asyncio uvloop redis
"""
)

# Function words between the developer words; one-letter ones are dropped by the tokenizer anyway.
GLUE_WORDS = _words(
    """
the the the a a to to of of and and in in for for is is on with when it this that not from by after before
use uses was be should if or we at as but so then only always never
"""
)

TAGS = ("decision", "infra", "ci", "bug", "perf", "security")


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "sh", "ch")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _verb_forms(word: str) -> list[str]:
    """-s, -ed, -ing with the common spelling rules (close -> closed, stop -> stopped)."""
    if word.endswith("e"):
        stem = word[:-1]
        return [word + "s", stem + "ed", stem + "ing"]
    vowels = "aeiou"
    short = (
        len(word) <= 4 and word[-1] not in vowels + "wxy" and word[-2] in vowels and word[-3] not in vowels
    )
    if word.endswith("y") and word[-2] not in vowels:
        return [word[:-1] + "ies", word[:-1] + "ied", word + "ing"]
    stem = word + word[-1] if short else word
    return [_plural(word), stem + "ed", stem + "ing"]


def build_vocabulary(rng: random.Random) -> list[str]:
    """About VOCAB_SIZE words in Zipf rank order: seed words mostly on top, snake_case compounds last."""
    seeds = list(dict.fromkeys(NOUNS + VERBS + ADJECTIVES + TOOLS))
    inflected = [_plural(w) for w in NOUNS] + [f for w in VERBS for f in _verb_forms(w)]
    inflected = [w for w in dict.fromkeys(inflected) if w not in seeds]
    seen = set(seeds) | set(inflected)
    compounds: list[str] = []
    heads = NOUNS + VERBS + ADJECTIVES + TOOLS
    while len(seen) < VOCAB_SIZE:
        word = f"{rng.choice(heads)}_{rng.choice(NOUNS)}"
        if word not in seen and len(set(word.split("_"))) == 2:
            seen.add(word)
            compounds.append(word)
    # Random rank keys in overlapping bands: base words on top, inflections next, compounds in the tail.
    keyed = [(rng.random(), w) for w in seeds]
    keyed += [(0.5 + 1.5 * rng.random(), w) for w in inflected]
    keyed += [(1.0 + 3.0 * rng.random(), w) for w in compounds]
    keyed.sort()
    return [w for _, w in keyed]


def zipf_cum_weights(n: int, s: float = 1.0, q: float = 10.0) -> list[float]:
    """Cumulative Zipf-Mandelbrot weights 1/(rank+q)^s, for random.choices."""
    total = 0.0
    cum: list[float] = []
    for rank in range(1, n + 1):
        total += 1.0 / (rank + q) ** s
        cum.append(total)
    return cum


@dataclass(frozen=True)
class Corpus:
    vocab: list[str]
    cum: list[float]

    def word(self, rng: random.Random) -> str:
        return rng.choices(self.vocab, cum_weights=self.cum)[0]


def make_corpus() -> Corpus:
    vocab = build_vocabulary(random.Random(TEXT_SEED))
    return Corpus(vocab, zipf_cum_weights(len(vocab)))


def memory_text(corpus: Corpus, rng: random.Random) -> tuple[str, list[str]]:
    """One memory: 5 to 60 words (log-normal, median about 16), a few with a tag."""
    n = max(5, min(60, round(rng.lognormvariate(math.log(16), 0.6))))
    content = rng.choices(corpus.vocab, cum_weights=corpus.cum, k=n)
    words = [rng.choice(GLUE_WORDS) if rng.random() < GLUE_SHARE else w for w in content]
    if words[0] in GLUE_WORDS:
        words[0] = content[0]
    if n > 12 and rng.random() < 0.5:
        cut = rng.randrange(4, n - 4)
        words[cut] += ","
    text = words[0].capitalize() + " " + " ".join(words[1:]) + "."
    tags = [rng.choice(TAGS)] if rng.random() < 0.1 else []
    return text, tags


def make_memories(corpus: Corpus, count: int, seed: int) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    return [memory_text(corpus, rng) for _ in range(count)]


def make_queries(corpus: Corpus, count: int = QUERY_COUNT) -> list[str]:
    """2 to 4 words each; every word is Zipf-drawn (common) or uniform over the vocabulary (rare) at 50/50."""
    rng = random.Random(QUERY_SEED)
    queries: list[str] = []
    for _ in range(count):
        words: list[str] = []
        while len(words) < rng.randint(2, 4):
            word = corpus.word(rng) if rng.random() < 0.5 else rng.choice(corpus.vocab)
            if word not in words:
                words.append(word)
        queries.append(" ".join(words))
    return queries
