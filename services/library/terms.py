"""Document frequencies of index terms, so that keyword search can leave out words that occur
in most chunks: their BM25 weight is near zero, but their posting lists make FTS5 queries slow
on large libraries.

The terms are the ones the index's FTS5 tokenizer makes (porter stems, diacritics folded), and
they are made by that tokenizer itself, in a throwaway in-memory SQLite database: "modelled",
"models" and "modelling" all read the posting list of "model", so counting words instead of
stems underestimated what a query costs by up to a hundred times (measured at 1M chunks:
"modelled" in 5,306 chunks, its stem "model" in 580,970)."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence

TOKENIZE = "porter unicode61"  # the index's chunks_fts tokenizer (index_store.py)
TERM_DF_KIND = "fts5-terms-1"  # what term_df counts; an index with another kind is recounted

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

COMMON_SHARE = 0.25  # a word in more than this share of chunks adds little to BM25
PRUNE_FROM_CHUNKS = 20_000  # below this every content word is kept: queries are fast anyway
MAX_QUERY_WORDS = 20
# FTS5 reads every posting of every query word (an OR query ranks all matches), so its cost
# grows with the sum of their document frequencies: words beyond the rarest two are kept only
# while that sum stays within this budget, which bounds a query however large the library.
POSTING_BUDGET = 40_000


def tokens_in_order(text: str) -> list[str]:
    """Lower-case words as FTS5's unicode61 tokenizer splits them (before stemming)."""
    return _TOKEN.findall(text.lower())


def _scratch() -> sqlite3.Connection:
    return sqlite3.connect(":memory:", isolation_level=None)


def document_frequencies(texts: Iterable[str]) -> Counter[str]:
    """How many of ``texts`` each index term occurs in (FTS5's own tokenizer and stemmer)."""
    conn = _scratch()
    try:
        conn.execute(f"CREATE VIRTUAL TABLE docs USING fts5(x, tokenize='{TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE docs_terms USING fts5vocab(docs, 'row')")
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO docs(x) VALUES (?)", ((t,) for t in texts))
        conn.execute("COMMIT")
        return Counter(dict(conn.execute("SELECT term, doc FROM docs_terms")))
    finally:
        conn.close()


def index_terms(words: Sequence[str]) -> list[str | None]:
    """Each word as the index stores it (its porter stem), None for a word it drops."""
    if not words:
        return []
    conn = _scratch()
    try:
        conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(x, tokenize='{TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE words_terms USING fts5vocab(words, 'instance')")
        conn.executemany(
            "INSERT INTO words(rowid, x) VALUES (?, ?)", [(i + 1, w) for i, w in enumerate(words)]
        )
        out: list[str | None] = [None] * len(words)
        for doc, term in conn.execute("SELECT doc, term FROM words_terms ORDER BY doc, offset"):
            if out[doc - 1] is None:
                out[doc - 1] = term
        return out
    finally:
        conn.close()


def chunk_text(text: str, section: str | None) -> str:
    """What the index tokenizes of a chunk (its text and section columns), for counting."""
    return f"{text}\n{section}" if section else text


def select_words(words: list[str], df: dict[str, int], total: int) -> list[str]:
    """The words worth sending to FTS5. In a library of PRUNE_FROM_CHUNKS chunks or more, drop
    those in more than COMMON_SHARE of them (unless that leaves nothing), then keep the rarest
    first: always two, more while their postings stay within POSTING_BUDGET, MAX_QUERY_WORDS at
    most (``df`` counts each word's index term). Measured on the 52 evaluation questions with
    the 3,300-PDF library as distractors (82k chunks), keyword only: recall@5/@20 0.731/0.865
    against 0.750/0.865 with no budget, at 20 ms a query; the earlier pruning (by words, 6% of
    chunks, 10 words) gave 0.731/0.808. See
    docs/benchmarks.md for the latency at 150k and 1M chunks."""
    if total < PRUNE_FROM_CHUNKS:
        return words
    ranked = sorted(words, key=lambda w: (df.get(w, 0), words.index(w)))
    kept = [w for w in ranked if df.get(w, 0) <= COMMON_SHARE * total] or ranked[:2]
    chosen: list[str] = []
    postings = 0
    for word in kept[:MAX_QUERY_WORDS]:
        if len(chosen) >= 2 and postings + df.get(word, 0) > POSTING_BUDGET:
            break
        chosen.append(word)
        postings += df.get(word, 0)
    return chosen
