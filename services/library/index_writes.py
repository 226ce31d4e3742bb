"""Every write to the library index, each inside the caller's transaction
(``IndexStore.writer()``). The indexer decides what to write; this module knows the SQL."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping, Sequence

import numpy as np

from services.library import terms
from services.library.chunking import Chunk
from services.library.index_store import STATE_FAILED, STATE_INDEXED
from services.library.toc import TocEntry
from services.library.zotero import LibrarySnapshot

_UPSERT_ITEM = """
INSERT INTO items(item_key, library_id, item_type, title, authors, year, publication, doi,
                  abstract, tags, attachment_keys)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(item_key) DO UPDATE SET
    library_id = excluded.library_id, item_type = excluded.item_type, title = excluded.title,
    authors = excluded.authors, year = excluded.year, publication = excluded.publication,
    doi = excluded.doi, abstract = excluded.abstract, tags = excluded.tags,
    attachment_keys = excluded.attachment_keys
"""
_INSERT_MISSING = """
INSERT INTO attachments(attachment_key, item_key, path, source, page_count, error, state)
VALUES (?, ?, ?, 'none', 0, 'the file is missing and Zotero has no full-text cache of it',
        'missing')
"""
_INSERT_ATTACHMENT = """
INSERT INTO attachments(attachment_key, item_key, path, size, mtime_ns, content_hash, source,
                        page_count, embedding_model, indexed_at, error, state, empty_pages)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
_INSERT_CHUNK = """
INSERT INTO chunks(attachment_key, item_key, ordinal, page_start, page_end, section, text,
                   word_count, embedding)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""


def delete_attachment(conn: sqlite3.Connection, attachment_key: str) -> None:
    texts = conn.execute(
        "SELECT text, section FROM chunks WHERE attachment_key = ?", (attachment_key,)
    )
    counts = terms.document_frequencies(terms.chunk_text(r[0], r[1]) for r in texts)
    if counts:
        conn.executemany(
            "UPDATE term_df SET df = df - ? WHERE term = ?", [(n, t) for t, n in counts.items()]
        )
        conn.execute("DELETE FROM term_df WHERE df <= 0")
    for table in ("chunks", "pages", "toc", "attachments"):
        conn.execute(f"DELETE FROM {table} WHERE attachment_key = ?", (attachment_key,))


def replace_metadata(
    conn: sqlite3.Connection,
    snapshot: LibrarySnapshot,
    *,
    removed_attachments: Sequence[str],
    missing_attachments: Sequence[tuple[str, str, str | None]],
) -> None:
    """Items and collections as the snapshot has them; gone items and attachments deleted;
    attachments without a file recorded as missing (attachment key, item key, path)."""
    present = {item.key for item in snapshot.items}
    stale_items = [r[0] for r in conn.execute("SELECT item_key FROM items") if r[0] not in present]
    for key in removed_attachments:
        delete_attachment(conn, key)
    for key in stale_items:
        attachments = conn.execute(
            "SELECT attachment_key FROM attachments WHERE item_key = ?", (key,)
        ).fetchall()
        for (attachment_key,) in attachments:
            delete_attachment(conn, attachment_key)
        conn.execute("DELETE FROM items WHERE item_key = ?", (key,))
    conn.execute("DELETE FROM item_collections")
    conn.execute("DELETE FROM collections")
    conn.executemany(
        "INSERT INTO collections(collection_key, name, parent_key) VALUES (?, ?, ?)",
        [(c.key, c.name, c.parent_key) for c in snapshot.collections],
    )
    for item in snapshot.items:
        authors = json.dumps([c.display for c in item.authors])
        conn.execute(
            _UPSERT_ITEM,
            (
                item.key,
                item.library_id,
                item.item_type,
                item.title,
                authors,
                item.year,
                item.publication,
                item.doi,
                item.abstract,
                json.dumps(list(item.tags)),
                json.dumps([a.key for a in item.attachments]),
            ),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO item_collections(item_key, collection_key) VALUES (?, ?)",
            [(item.key, c) for c in item.collection_keys],
        )
    for attachment_key, item_key, path in missing_attachments:
        delete_attachment(conn, attachment_key)
        conn.execute(_INSERT_MISSING, (attachment_key, item_key, path))


def update_stat(
    conn: sqlite3.Connection, attachment_key: str, *, size: int, mtime_ns: int, path: str
) -> None:
    """A touched attachment whose content did not change: remember its new stat."""
    conn.execute(
        "UPDATE attachments SET size = ?, mtime_ns = ?, path = ? WHERE attachment_key = ?",
        (size, mtime_ns, path, attachment_key),
    )


def write_attachment(
    conn: sqlite3.Connection,
    *,
    attachment_key: str,
    item_key: str,
    path: str,
    size: int,
    mtime_ns: int,
    content_hash: str,
    source: str,
    pages: Sequence[str],
    entries: Sequence[TocEntry],
    chunks: Sequence[Chunk],
    state: str = STATE_INDEXED,
    error: str | None = None,
    empty_pages: int = 0,
    vectors: np.ndarray | None = None,
    term_counts: Mapping[str, int] | None = None,
) -> None:
    """Replace everything indexed for one attachment. Without ``vectors`` the chunks are
    keyword-searchable at once and wait in the embedding queue for theirs."""
    delete_attachment(conn, attachment_key)
    conn.execute(
        _INSERT_ATTACHMENT,
        (
            attachment_key,
            item_key,
            path,
            size,
            mtime_ns,
            content_hash,
            source,
            len(pages),
            None,
            time.time(),
            error,
            state,
            empty_pages,
        ),
    )
    conn.executemany(
        "INSERT INTO pages(attachment_key, page, text) VALUES (?, ?, ?)",
        [(attachment_key, i + 1, text) for i, text in enumerate(pages)],
    )
    conn.executemany(
        "INSERT INTO toc(attachment_key, ordinal, title, level, page) VALUES (?, ?, ?, ?, ?)",
        [(attachment_key, i, e.title, e.level, e.page) for i, e in enumerate(entries)],
    )
    conn.executemany(
        _INSERT_CHUNK,
        [
            (
                attachment_key,
                item_key,
                c.ordinal,
                c.page_start,
                c.page_end,
                c.section,
                c.text,
                c.word_count,
                None if vectors is None else np.asarray(vectors[i], dtype=np.float32).tobytes(),
            )
            for i, c in enumerate(chunks)
        ],
    )
    _add_term_df(conn, chunks, term_counts)


def _add_term_df(
    conn: sqlite3.Connection, chunks: Sequence[Chunk], counts: Mapping[str, int] | None
) -> None:
    if counts is None:
        counts = terms.document_frequencies(terms.chunk_text(c.text, c.section) for c in chunks)
    conn.executemany(
        "INSERT INTO term_df(term, df) VALUES (?, ?) "
        "ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
        counts.items(),
    )


def record_failure(
    conn: sqlite3.Connection,
    *,
    attachment_key: str,
    item_key: str,
    path: str,
    size: int,
    mtime_ns: int,
    content_hash: str,
    source: str,
    error: str,
) -> None:
    """An attachment that could not be read: nothing searchable, the reason kept. The next
    sync tries it again only once the file changed (or with ``full``)."""
    delete_attachment(conn, attachment_key)
    conn.execute(
        _INSERT_ATTACHMENT,
        (
            attachment_key,
            item_key,
            path,
            size,
            mtime_ns,
            content_hash,
            source,
            0,
            None,
            time.time(),
            error,
            STATE_FAILED,
            0,
        ),
    )
