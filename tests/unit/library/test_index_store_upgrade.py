"""An index written before the two-phase sync (schema 1: no attachment states, every chunk with
its vector) opens under the current code with its states derived, nothing re-read, and the
embedding queue empty; a change of embedding model then empties only the vectors."""

from __future__ import annotations

import pathlib
import sqlite3

import numpy as np

from services.library.index_store import IndexStore

SCHEMA_1_ATTACHMENTS = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE attachments (
    attachment_key TEXT PRIMARY KEY, item_key TEXT NOT NULL, path TEXT, size INTEGER,
    mtime_ns INTEGER, content_hash TEXT, source TEXT NOT NULL,
    page_count INTEGER NOT NULL DEFAULT 0, embedding_model TEXT, indexed_at REAL, error TEXT
);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY, attachment_key TEXT NOT NULL, item_key TEXT NOT NULL,
    ordinal INTEGER NOT NULL, page_start INTEGER NOT NULL, page_end INTEGER NOT NULL,
    section TEXT, text TEXT NOT NULL, word_count INTEGER NOT NULL, embedding BLOB
);
"""


def _schema_1_index(path: pathlib.Path) -> None:
    vector = np.ones(4, dtype=np.float32).tobytes()
    with sqlite3.connect(path) as conn:
        conn.executescript(SCHEMA_1_ATTACHMENTS)
        conn.executemany(
            "INSERT INTO attachments (attachment_key, item_key, path, source, page_count, "
            "embedding_model, error) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                ("GOOD2345", "ITEM2345", "/z/a.pdf", "pdf", 12, "bge", None),
                ("GONE2345", "ITEM3456", "/z/b.pdf", "none", 0, None, "file missing"),
                ("BAD23456", "ITEM4567", "/z/c.pdf", "pdf", 0, None, "Cannot read c.pdf"),
            ],
        )
        conn.executemany(
            "INSERT INTO chunks (attachment_key, item_key, ordinal, page_start, page_end, "
            "section, text, word_count, embedding) VALUES (?, ?, ?, 1, 1, NULL, ?, 3, ?)",
            [("GOOD2345", "ITEM2345", i, f"chunk number {i}", vector) for i in range(3)],
        )
        conn.execute("INSERT INTO meta VALUES ('embedding_model', 'bge')")


def test_a_schema_1_index_opens_with_states_and_nothing_pending(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "index.sqlite3"
    _schema_1_index(path)
    store = IndexStore(path)
    try:
        rows = store.attachment_rows()
        assert {k: r["state"] for k, r in rows.items()} == {
            "GOOD2345": "indexed",
            "GONE2345": "missing",
            "BAD23456": "failed",
        }
        counts = store.counts()
        assert counts["attachment_states"] == {
            "indexed": 1,
            "no_text": 0,
            "failed": 1,
            "missing": 1,
        }
        assert store.queue_counts() == (3, 0)
        assert [p["state"] for p in store.problem_attachments()] == ["failed", "missing"]
        assert store.reset_embeddings("bge") == 0  # the same model: vectors kept
        assert store.reset_embeddings("minilm") == 3  # another: recomputed in the background
        assert store.queue_counts() == (3, 3)
        assert [cid for cid, _, _ in store.pending_chunks(10)] == [1, 2, 3]
    finally:
        store.close()
    IndexStore(path).close()  # opening it again changes nothing
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM attachments").fetchone()[0] == 3


def test_term_statistics_that_counted_words_are_recounted_by_stem(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "index.sqlite3"
    store = IndexStore(path)
    with store.writer() as conn:
        conn.executemany(
            "INSERT INTO chunks (attachment_key, item_key, ordinal, page_start, page_end, "
            "section, text, word_count) VALUES ('A', 'I', ?, 1, 1, ?, ?, 3)",
            [
                (0, None, "Mixed models for students"),
                (1, "Modelling", "a student modelled it"),
                (2, None, "regressions"),
            ],
        )
        # As an index of the previous release left them: words, not stems, and no kind.
        conn.execute("DELETE FROM term_df")
        conn.executemany(
            "INSERT INTO term_df VALUES (?, ?)", [("models", 1), ("modelled", 1), ("students", 1)]
        )
        conn.execute("DELETE FROM meta WHERE key = 'term_df'")
    store.close()
    store = IndexStore(path)
    try:
        assert store.term_df(["model", "student", "regress", "models"]) == {
            "model": 2,  # models, modelled, Modelling (a section): two chunks
            "student": 2,
            "regress": 1,
        }
        assert store.get_meta("term_df") == "fts5-terms-1"
    finally:
        store.close()
