"""An index whose text an older cleaning recipe made (written before ``text_version`` existed,
running headers in its chunks) is extracted again at the next sync, though no file changed;
chunks that come out the same keep their vectors, and the sync after that reads nothing."""

from __future__ import annotations

import pathlib
import sqlite3

import numpy as np

from services.library import pdf_text
from services.library.index_store import IndexStore
from services.library.indexer import LibraryIndexer, SyncProgress
from tests.support import zotero_fixture as zf

PAPERS = ("lme4__lmer.pdf", "AER__AER.pdf")
STALE_TEXT = "Douglas Bates, Martin Mächler, Ben Bolker, Steve Walker 3 In a linear mixed model"


async def _sync(indexer: LibraryIndexer, zotero: pathlib.Path) -> SyncProgress:
    last = None
    async for progress in indexer.sync(zotero):
        last = progress
    assert last is not None and last.phase == "done"
    return last


def _as_the_previous_release_left_it(path: pathlib.Path) -> int:
    """No ``text_version`` column, a vector on every chunk, and one chunk of lme4 holding a
    running header in its text; returns that chunk's ordinal."""
    vector = np.ones(8, dtype=np.float32).tobytes()
    key = zf.paper_attachment_key("lme4__lmer.pdf")
    with sqlite3.connect(path) as conn:
        conn.execute("ALTER TABLE attachments DROP COLUMN text_version")
        conn.execute("UPDATE chunks SET embedding = ?", (vector,))
        row = conn.execute(
            "SELECT id, item_key, ordinal, page_start, page_end, section, text, word_count "
            "FROM chunks WHERE attachment_key = ? ORDER BY ordinal LIMIT 1 OFFSET 3",
            (key,),
        ).fetchone()
        conn.execute("DELETE FROM chunks WHERE id = ?", (row[0],))  # triggers keep FTS right
        conn.execute(
            "INSERT INTO chunks (attachment_key, item_key, ordinal, page_start, page_end, "
            "section, text, word_count, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, *row[1:6], f"{STALE_TEXT} {row[6]}", row[7], vector),
        )
    return int(row[2])


async def test_an_older_text_version_is_extracted_again_keeping_unchanged_vectors(
    tmp_path: pathlib.Path,
) -> None:
    zotero = zf.build_zotero_library(tmp_path / "Zotero", files=PAPERS)
    path = tmp_path / "index" / "index.sqlite3"
    store = IndexStore(path)
    first = await _sync(LibraryIndexer(store, workers=1), zotero)
    assert first.added == 2
    chunks = store.queue_counts()[0]
    store.close()
    stale = _as_the_previous_release_left_it(path)

    store = IndexStore(path)  # adds the column: the rows count as the first recipe
    try:
        assert {r["text_version"] for r in store.attachment_rows().values()} == {1}
        indexer = LibraryIndexer(store, workers=1)
        second = await _sync(indexer, zotero)
        assert (second.updated, second.unchanged, second.added) == (2, 0, 0)
        rows = store.attachment_rows()
        assert {r["text_version"] for r in rows.values()} == {pdf_text.TEXT_VERSION}
        key = zf.paper_attachment_key("lme4__lmer.pdf")
        texts = store.reader().execute(
            "SELECT ordinal, text, embedding IS NOT NULL FROM chunks WHERE attachment_key = ?",
            (key,),
        )
        by_ordinal = {ordinal: (text, embedded) for ordinal, text, embedded in texts}
        assert all(STALE_TEXT not in text for text, _ in by_ordinal.values())
        assert by_ordinal[stale][1] == 0  # its text changed: queued for a new vector
        assert store.queue_counts() == (chunks, 1)  # every other chunk kept its vector

        third = await _sync(indexer, zotero)
        assert (third.updated, third.unchanged) == (0, 2)
    finally:
        store.close()
