"""The library index on disk: one SQLite file (``<data dir>/library/index.sqlite3``).

Tables: ``items`` (Zotero metadata), ``collections`` and ``item_collections``, ``attachments``
(one row per indexed PDF with its fingerprint), ``pages`` (text per page, for reading),
``toc`` (table of contents per attachment), ``chunks`` (text, page range, section, embedding)
and ``chunks_fts`` (FTS5 over chunk text and section, kept in sync by triggers).

What the user wrote in Zotero (:mod:`services.library.own_reading`) is in ``chunks`` too, a
passage each, with its ``kind`` (``highlight``, ``comment``, ``note``; the paper's own text is
``text``) and ``details`` (JSON: the PDF, page label, colour, tags, ...); its ``attachment_key``
is the annotation's or note's own key, so nothing done to a PDF's chunks touches them.
``user_passages`` keeps each one's fingerprint, so a sync rewrites only those that changed.

Blocking sqlite3 calls: the indexer and the searcher run them in threads. WAL mode lets searches
read while a sync writes.
"""

from __future__ import annotations

import json
import pathlib
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from services.library import terms
from services.library.index_queue import EmbeddingQueueStore

SCHEMA_VERSION = "3"

# What became of an attachment (``attachments.state``); ``error`` says why for the last three.
STATE_INDEXED = "indexed"  # text, TOC and chunks written: keyword-searchable
STATE_NO_TEXT = "no_text"  # a PDF without a text layer (scanned pages): it needs OCR
STATE_FAILED = "failed"  # unreadable: corrupt, encrypted, the reader crashed or timed out
STATE_MISSING = "missing"  # the file is gone and there is no full-text cache
ATTACHMENT_STATES = (STATE_INDEXED, STATE_NO_TEXT, STATE_FAILED, STATE_MISSING)

# What a chunk is (``chunks.kind``): the paper's own text, or what the user wrote in Zotero.
KIND_TEXT = "text"
KIND_HIGHLIGHT = "highlight"  # a highlight or underline: the text under it (and a comment)
KIND_COMMENT = "comment"  # an annotation of the user's own words (note, text, image, ink)
KIND_NOTE = "note"  # a Zotero note: a child of an item, or standalone
USER_KINDS = (KIND_HIGHLIGHT, KIND_COMMENT, KIND_NOTE)
KINDS = (KIND_TEXT, *USER_KINDS)

# Vectors of an attachment's chunks by (section, text): what the embedder read besides the title.
ChunkVectors = dict[tuple[str | None, str], bytes]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    item_key TEXT PRIMARY KEY,
    library_id INTEGER NOT NULL,
    item_type TEXT NOT NULL,
    title TEXT NOT NULL,
    authors TEXT NOT NULL,          -- JSON list of "Last, First"
    year INTEGER,
    publication TEXT,
    doi TEXT,
    abstract TEXT,
    tags TEXT NOT NULL,             -- JSON list
    attachment_keys TEXT NOT NULL DEFAULT '[]'  -- JSON list, Zotero's best attachment first
);
CREATE TABLE IF NOT EXISTS collections (
    collection_key TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    parent_key TEXT
);
CREATE TABLE IF NOT EXISTS item_collections (
    item_key TEXT NOT NULL,
    collection_key TEXT NOT NULL,
    PRIMARY KEY (item_key, collection_key)
);
CREATE TABLE IF NOT EXISTS attachments (
    attachment_key TEXT PRIMARY KEY,
    item_key TEXT NOT NULL,
    path TEXT,
    size INTEGER,
    mtime_ns INTEGER,
    content_hash TEXT,
    source TEXT NOT NULL,           -- "pdf", "ft-cache" or "none"
    page_count INTEGER NOT NULL DEFAULT 0,
    embedding_model TEXT,
    indexed_at REAL,
    error TEXT,
    state TEXT NOT NULL DEFAULT 'indexed',
    empty_pages INTEGER NOT NULL DEFAULT 0,
    text_version INTEGER NOT NULL DEFAULT 1, -- pdf_text.TEXT_VERSION its text was made with
    ocr_pages INTEGER NOT NULL DEFAULT 0,   -- pages whose text OCR read (ocr_phase.py)
    ocr_done TEXT                           -- "<content hash>:<languages>" once OCR is done
);
CREATE INDEX IF NOT EXISTS attachments_item ON attachments(item_key);
CREATE TABLE IF NOT EXISTS pages (
    attachment_key TEXT NOT NULL,
    page INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (attachment_key, page)
);
CREATE TABLE IF NOT EXISTS toc (
    attachment_key TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    title TEXT NOT NULL,
    level INTEGER NOT NULL,
    page INTEGER NOT NULL,
    PRIMARY KEY (attachment_key, ordinal)
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    attachment_key TEXT NOT NULL,
    item_key TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    page_start INTEGER NOT NULL,
    page_end INTEGER NOT NULL,
    section TEXT,
    text TEXT NOT NULL,
    word_count INTEGER NOT NULL,
    embedding BLOB,
    kind TEXT NOT NULL DEFAULT 'text',
    details TEXT                    -- JSON, for what the user wrote (own_reading.py)
);
CREATE INDEX IF NOT EXISTS chunks_attachment ON chunks(attachment_key);
CREATE INDEX IF NOT EXISTS chunks_item ON chunks(item_key);
-- What the user wrote: a few hundred passages among a library's tens of thousands.
CREATE INDEX IF NOT EXISTS chunks_user ON chunks(kind) WHERE kind != 'text';
-- The embedding queue: chunks written by the keyword phase that have no vector yet.
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(id) WHERE embedding IS NULL;
CREATE INDEX IF NOT EXISTS chunks_pending_item ON chunks(item_key, id) WHERE embedding IS NULL;
CREATE TABLE IF NOT EXISTS user_passages (
    source_key TEXT PRIMARY KEY,    -- the annotation's or note's key
    kind TEXT NOT NULL,
    item_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL
);
-- What OCR read, by the PDF's content (a re-index or a moved file reads nothing again).
CREATE TABLE IF NOT EXISTS ocr_pages (
    content_hash TEXT NOT NULL,
    page INTEGER NOT NULL,
    languages TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (content_hash, languages, page)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS term_df (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, section, content='chunks', content_rowid='id', tokenize='{tokenize}'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text, section)
    VALUES (new.id, new.text, coalesce(new.section, ''));
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, section)
    VALUES ('delete', old.id, old.text, coalesce(old.section, ''));
END;
"""
_SCHEMA = _SCHEMA.replace("{tokenize}", terms.TOKENIZE)


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """Columns added since schema 1, for an index written by an older version."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "items" in tables:
        item_columns = {r[1] for r in conn.execute("PRAGMA table_info(items)")}
        if "attachment_keys" not in item_columns:  # filled in by the next sync
            conn.execute("ALTER TABLE items ADD COLUMN attachment_keys TEXT NOT NULL DEFAULT '[]'")
    if "chunks" in tables:
        chunk_columns = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
        if "kind" not in chunk_columns:  # schema 3: what the user wrote is indexed too
            conn.execute("ALTER TABLE chunks ADD COLUMN kind TEXT NOT NULL DEFAULT 'text'")
            conn.execute("ALTER TABLE chunks ADD COLUMN details TEXT")
    if "attachments" not in tables:
        return
    columns = {r[1] for r in conn.execute("PRAGMA table_info(attachments)")}
    if "state" not in columns:
        conn.execute("ALTER TABLE attachments ADD COLUMN state TEXT NOT NULL DEFAULT 'indexed'")
        conn.execute("UPDATE attachments SET state = 'missing' WHERE source = 'none'")
        conn.execute(
            "UPDATE attachments SET state = 'failed' WHERE error IS NOT NULL AND source != 'none'"
        )
    if "empty_pages" not in columns:
        conn.execute("ALTER TABLE attachments ADD COLUMN empty_pages INTEGER NOT NULL DEFAULT 0")
    if "text_version" not in columns:  # text made before versions were kept: the first recipe
        conn.execute("ALTER TABLE attachments ADD COLUMN text_version INTEGER NOT NULL DEFAULT 1")
    if "ocr_pages" not in columns:  # schema 3: OCR of pages without a text layer
        conn.execute("ALTER TABLE attachments ADD COLUMN ocr_pages INTEGER NOT NULL DEFAULT 0")
        conn.execute("ALTER TABLE attachments ADD COLUMN ocr_done TEXT")


class IndexStore(EmbeddingQueueStore):
    """Thread-safe access to the index file: one writer connection, readers per thread."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._write_lock = threading.Lock()
        conn = self._connect()
        try:  # executescript commits by itself; each statement is idempotent
            _add_missing_columns(conn)
            conn.executescript(_SCHEMA)
            conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                (SCHEMA_VERSION,),
            )
            row = conn.execute("SELECT value FROM meta WHERE key = 'term_df'").fetchone()
            has_chunks = conn.execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None
            if row is None and not has_chunks:
                self.set_meta(conn, "term_df", terms.TERM_DF_KIND)
        finally:
            conn.close()
        if has_chunks and (row is None or row[0] != terms.TERM_DF_KIND):
            # Written before term statistics existed, or when they counted words, not stems.
            self.rebuild_term_df()

    def rebuild_term_df(self) -> None:
        """Recount every index term's document frequency, from the FTS5 index itself."""
        with self.writer() as conn:
            conn.execute("DELETE FROM term_df")
            conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_terms "
                "USING fts5vocab(main, 'chunks_fts', 'row')"
            )
            conn.execute("INSERT INTO term_df(term, df) SELECT term, doc FROM temp.chunks_terms")
            conn.execute("DROP TABLE temp.chunks_terms")
            self.set_meta(conn, "term_df", terms.TERM_DF_KIND)

    def term_df(self, words: list[str]) -> dict[str, int]:
        if not words:
            return {}
        marks = ",".join("?" * len(words))
        rows = (
            self.reader()
            .execute(f"SELECT term, df FROM term_df WHERE term IN ({marks})", words)
            .fetchall()
        )
        return {r[0]: int(r[1]) for r in rows}

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=OFF")
        return conn

    def reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    @contextmanager
    def writer(self) -> Iterator[sqlite3.Connection]:
        """One transaction on a dedicated connection; concurrent writers queue."""
        with self._write_lock:
            conn = self._connect()
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            finally:
                conn.close()

    # ---- meta ----

    def get_meta(self, key: str) -> str | None:
        row = self.reader().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # ---- reads ----

    def attachment_rows(self) -> dict[str, dict[str, Any]]:
        cur = self.reader().execute(
            "SELECT attachment_key, item_key, path, size, mtime_ns, content_hash, source, "
            "page_count, embedding_model, error, state, text_version FROM attachments"
        )
        cols = [d[0] for d in cur.description]
        return {row[0]: dict(zip(cols, row, strict=True)) for row in cur.fetchall()}

    def set_text_version(self, conn: sqlite3.Connection, attachment_key: str, version: int) -> None:
        """Record the text-cleaning recipe (``pdf_text.TEXT_VERSION``) an attachment was
        extracted with; the indexer re-extracts it when the recipe changes."""
        conn.execute(
            "UPDATE attachments SET text_version = ? WHERE attachment_key = ?",
            (version, attachment_key),
        )

    def chunk_vectors(self, conn: sqlite3.Connection, attachment_key: str) -> ChunkVectors:
        """The vectors of an attachment's chunks, by what the embedder read of each (section
        and text; the title is the item's), before the attachment is written anew."""
        rows = conn.execute(
            "SELECT section, text, embedding FROM chunks "
            "WHERE attachment_key = ? AND embedding IS NOT NULL",
            (attachment_key,),
        )
        return {(section, text): bytes(blob) for section, text, blob in rows}

    def restore_vectors(
        self, conn: sqlite3.Connection, attachment_key: str, vectors: ChunkVectors
    ) -> int:
        """Give the attachment's new chunks the vectors of old chunks with the same section
        and text (``chunk_vectors``), so re-extraction re-embeds only what changed. Returns
        how many chunks got one."""
        if not vectors:
            return 0
        rows = conn.execute(
            "SELECT id, section, text FROM chunks WHERE attachment_key = ? AND embedding IS NULL",
            (attachment_key,),
        ).fetchall()
        kept = [(vectors[(s, t)], cid) for cid, s, t in rows if (s, t) in vectors]
        conn.executemany("UPDATE chunks SET embedding = ? WHERE id = ?", kept)
        return len(kept)

    def counts(self) -> dict[str, int]:
        conn = self.reader()
        out = {}
        for name, sql in (
            ("items", "SELECT count(*) FROM items"),
            ("attachments", "SELECT count(*) FROM attachments WHERE source != 'none'"),
            ("pages", "SELECT coalesce(sum(page_count), 0) FROM attachments"),
            ("chunks", "SELECT count(*) FROM chunks"),
        ):
            out[name] = int(conn.execute(sql).fetchone()[0])
        states = dict.fromkeys(ATTACHMENT_STATES, 0)
        for state, n in conn.execute("SELECT state, count(*) FROM attachments GROUP BY state"):
            states[state] = int(n)
        out["attachment_states"] = states  # type: ignore[assignment]
        return out

    def problem_attachments(self, limit: int = 10) -> list[dict[str, Any]]:
        """The attachments that are not fully searchable, worst first: unreadable ones, then
        PDFs without a text layer (biggest first: the most to lose), then missing files, then
        those indexed in part (pages without text, or text cut: see ``reason``)."""
        cur = self.reader().execute(
            "SELECT a.attachment_key, a.item_key, coalesce(i.title, ''), a.path, a.state, "
            "a.error, a.page_count, a.empty_pages FROM attachments a "
            "LEFT JOIN items i ON i.item_key = a.item_key "
            "WHERE a.state != 'indexed' OR a.empty_pages > 0 OR a.error IS NOT NULL "
            "ORDER BY CASE a.state WHEN 'failed' THEN 0 WHEN 'no_text' THEN 1 "
            "WHEN 'missing' THEN 2 ELSE 3 END, a.empty_pages DESC, a.page_count DESC, "
            "a.attachment_key LIMIT ?",
            (limit,),
        )
        cols = ("attachment_key", "item_key", "title", "path", "state", "reason", "pages")
        out = []
        for row in cur.fetchall():
            data = dict(zip(cols, row[:7], strict=True))
            data["pages_without_text"] = int(row[7])
            data["reason"] = data["reason"] or ""
            out.append(data)
        return out

    def item(self, item_key: str) -> dict[str, Any] | None:
        cur = self.reader().execute(
            "SELECT item_key, title, authors, year, publication, doi, abstract, tags, item_type "
            "FROM items WHERE item_key = ?",
            (item_key,),
        )
        row = cur.fetchone()
        if row is None:
            return None
        cols = [d[0] for d in cur.description]
        data = dict(zip(cols, row, strict=True))
        data["authors"] = json.loads(data["authors"])
        data["tags"] = json.loads(data["tags"])
        return data

    def attachments_of(self, item_key: str) -> list[str]:
        """The item's attachments with text, in Zotero's best-attachment order (the first is
        the one Zotero opens for the item)."""
        conn = self.reader()
        row = conn.execute(
            "SELECT attachment_keys FROM items WHERE item_key = ?", (item_key,)
        ).fetchone()
        order = {key: i for i, key in enumerate(json.loads(row[0]) if row else [])}
        rows = conn.execute(
            "SELECT attachment_key FROM attachments WHERE item_key = ? AND page_count > 0",
            (item_key,),
        ).fetchall()
        return sorted((r[0] for r in rows), key=lambda key: (order.get(key, len(order)), key))

    def toc(self, attachment_key: str) -> list[tuple[str, int, int]]:
        rows = (
            self.reader()
            .execute(
                "SELECT title, level, page FROM toc WHERE attachment_key = ? ORDER BY ordinal",
                (attachment_key,),
            )
            .fetchall()
        )
        return [(r[0], int(r[1]), int(r[2])) for r in rows]

    def page_texts(self, attachment_key: str, first: int, last: int) -> list[tuple[int, str]]:
        rows = (
            self.reader()
            .execute(
                "SELECT page, text FROM pages WHERE attachment_key = ? AND page BETWEEN ? AND ? "
                "ORDER BY page",
                (attachment_key, first, last),
            )
            .fetchall()
        )
        return [(int(r[0]), r[1]) for r in rows]

    def page_count(self, attachment_key: str) -> int:
        row = (
            self.reader()
            .execute(
                "SELECT page_count FROM attachments WHERE attachment_key = ?", (attachment_key,)
            )
            .fetchone()
        )
        return int(row[0]) if row else 0

    def collection_tree(self) -> dict[str, list[str]]:
        children: dict[str, list[str]] = {}
        for key, parent in (
            self.reader().execute("SELECT collection_key, parent_key FROM collections").fetchall()
        ):
            children.setdefault(parent or "", []).append(key)
        return children

    def items_in_collections(self, collection_keys: Iterable[str]) -> set[str]:
        keys = list(collection_keys)
        if not keys:
            return set()
        marks = ",".join("?" * len(keys))
        rows = (
            self.reader()
            .execute(
                f"SELECT item_key FROM item_collections WHERE collection_key IN ({marks})", keys
            )
            .fetchall()
        )
        return {r[0] for r in rows}

    def collection_exists(self, collection_key: str) -> bool:
        return (
            self.reader()
            .execute("SELECT 1 FROM collections WHERE collection_key = ?", (collection_key,))
            .fetchone()
            is not None
        )

    def all_embeddings(self) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """(chunk ids, float32 matrix, item key per row) of every embedded chunk."""
        ids: list[int] = []
        items: list[str] = []
        vectors: list[bytes] = []
        for cid, item_key, blob in self.reader().execute(
            "SELECT id, item_key, embedding FROM chunks WHERE embedding IS NOT NULL ORDER BY id"
        ):
            ids.append(cid)
            items.append(item_key)
            vectors.append(blob)
        if not vectors:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32), []
        matrix = np.frombuffer(b"".join(vectors), dtype=np.float32).reshape(len(vectors), -1)
        return np.asarray(ids, dtype=np.int64), matrix, items

    def chunks_by_id(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        cur = self.reader().execute(
            "SELECT c.id, c.item_key, c.attachment_key, c.page_start, c.page_end, c.section, "
            "c.text, c.word_count, i.title, i.authors, i.year, c.kind, c.details "
            f"FROM chunks c JOIN items i ON i.item_key = c.item_key WHERE c.id IN ({marks})",
            ids,
        )
        cols = [d[0] for d in cur.description]
        out = {}
        for row in cur.fetchall():
            data = dict(zip(cols, row, strict=True))
            data["authors"] = json.loads(data["authors"])
            data["details"] = json.loads(data["details"]) if data["details"] else {}
            out[int(data["id"])] = data
        return out

    def user_passage_fingerprints(self) -> dict[str, str]:
        """The fingerprint of every annotation and note in the index, by its key."""
        rows = self.reader().execute("SELECT source_key, fingerprint FROM user_passages")
        return {r[0]: r[1] for r in rows}

    # ---- OCR (ocr_phase.py) ----

    _OCR_TODO = (
        "FROM attachments WHERE source = 'pdf' AND path IS NOT NULL AND content_hash IS NOT NULL "
        "AND (state = 'no_text' OR (state = 'indexed' AND empty_pages > 0)) "
        "AND coalesce(ocr_done, '') != content_hash || ':' || ?"
    )

    def ocr_todo(self, languages: str) -> list[dict[str, Any]]:
        """The PDFs with pages without text that OCR has not read (in ``languages``): scans
        (no text at all) first, then the PDFs with some pages without text (often a figure);
        the shortest first within each, so most become searchable soonest."""
        cur = self.reader().execute(
            "SELECT attachment_key, item_key, path, size, mtime_ns, content_hash, state, "
            f"page_count, empty_pages {self._OCR_TODO} "
            "ORDER BY state != 'no_text', page_count, attachment_key",
            (languages,),
        )
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]

    def ocr_pending(self, languages: str) -> tuple[int, int]:
        """(PDFs, pages) that OCR still has to read."""
        row = (
            self.reader()
            .execute(
                "SELECT count(*), coalesce(sum(CASE state WHEN 'no_text' THEN page_count "
                f"ELSE empty_pages END), 0) {self._OCR_TODO}",
                (languages,),
            )
            .fetchone()
        )
        cached = (
            self.reader()
            .execute(
                "SELECT count(*) FROM ocr_pages o JOIN attachments a "
                "ON a.content_hash = o.content_hash AND o.languages = ? "
                "WHERE a.source = 'pdf' AND (a.state = 'no_text' OR a.empty_pages > 0) "
                "AND coalesce(a.ocr_done, '') != a.content_hash || ':' || ?",
                (languages, languages),
            )
            .fetchone()[0]
        )
        return int(row[0]), max(0, int(row[1]) - int(cached))

    def pages_without_text(self, attachment_key: str, min_words: int) -> list[int]:
        rows = self.reader().execute(
            "SELECT page, text FROM pages WHERE attachment_key = ? ORDER BY page",
            (attachment_key,),
        )
        return [int(page) for page, text in rows if len(text.split()) < min_words]

    def ocr_read(self, content_hash: str, languages: str) -> dict[int, str]:
        rows = self.reader().execute(
            "SELECT page, text FROM ocr_pages WHERE content_hash = ? AND languages = ?",
            (content_hash, languages),
        )
        return {int(page): text for page, text in rows}

    def save_ocr_page(self, content_hash: str, languages: str, page: int, text: str) -> None:
        with self.writer() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO ocr_pages(content_hash, page, languages, text) "
                "VALUES (?, ?, ?, ?)",
                (content_hash, page, languages, text),
            )

    def mark_ocr_done(
        self, conn: sqlite3.Connection, attachment_key: str, done: str, pages: int
    ) -> None:
        conn.execute(
            "UPDATE attachments SET ocr_done = ?, ocr_pages = ? WHERE attachment_key = ?",
            (done, pages, attachment_key),
        )

    def forget_unused_ocr(self) -> int:
        """Drop what OCR read of PDFs no longer in the index (deleted, or changed since)."""
        with self.writer() as conn:
            return conn.execute(
                "DELETE FROM ocr_pages WHERE content_hash NOT IN "
                "(SELECT content_hash FROM attachments WHERE content_hash IS NOT NULL)"
            ).rowcount

    def kind_counts(self) -> dict[str, int]:
        """Chunks by kind (the paper's text, highlights, comments, notes)."""
        counts = dict.fromkeys(KINDS, 0)
        for kind, n in self.reader().execute("SELECT kind, count(*) FROM chunks GROUP BY kind"):
            counts[kind] = int(n)
        return counts

    def keyword_search(
        self,
        match: str,
        *,
        limit: int,
        item_keys: set[str] | None,
        kinds: Sequence[str] | None = None,
    ) -> list[tuple[int, float]]:
        """(chunk id, bm25 score; lower is better in SQLite, negated here) best first; of the
        chunks of ``item_keys`` and of ``kinds`` only, when given."""
        conn = self.reader()
        if item_keys is None and kinds is None:
            rows = conn.execute(
                "SELECT rowid, -bm25(chunks_fts, 1.0, 0.5) AS s FROM chunks_fts "
                "WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, 1.0, 0.5) LIMIT ?",
                (match, limit),
            ).fetchall()
        else:
            where, params = [], []
            if item_keys is not None:
                keys = sorted(item_keys)
                where.append(f"c.item_key IN ({','.join('?' * len(keys))})")
                params += keys
            if kinds is not None:
                where.append(f"c.kind IN ({','.join('?' * len(kinds))})")
                params += list(kinds)
            rows = conn.execute(
                "SELECT f.rowid, -bm25(chunks_fts, 1.0, 0.5) AS s FROM chunks_fts f "
                "JOIN chunks c ON c.id = f.rowid "
                f"WHERE chunks_fts MATCH ? AND {' AND '.join(where)} "
                "ORDER BY bm25(chunks_fts, 1.0, 0.5) LIMIT ?",
                (match, *params, limit),
            ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def chunk_ids_of_kinds(self, kinds: Sequence[str], item_keys: set[str] | None) -> list[int]:
        """Every chunk of ``kinds`` (of ``item_keys`` when given): for what the user wrote, a
        small part of an index."""
        sql = f"SELECT id FROM chunks WHERE kind IN ({','.join('?' * len(kinds))})"
        params = list(kinds)
        if item_keys is not None:
            sql += f" AND item_key IN ({','.join('?' * len(item_keys))})"
            params += sorted(item_keys)
        return [int(r[0]) for r in self.reader().execute(sql, params)]

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            p = self.path.with_name(self.path.name + suffix)
            if p.exists():
                total += p.stat().st_size
        return total

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
