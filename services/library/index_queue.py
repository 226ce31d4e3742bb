"""The embedding queue's side of the index (``IndexStore`` inherits it): chunks without a
vector are the queue, kept on disk, so the embedding phase resumes where it stopped."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np


def embedding_text(title: str, section: str | None, text: str) -> str:
    """What the embedder reads for a chunk: where it is (paper and section), then the text."""
    head = f"{title} - {section}" if section else title
    return f"{head}\n{text}"


class EmbeddingQueueStore:
    """Reads and writes of the embedding queue, on the store's connections."""

    def reader(self) -> sqlite3.Connection:
        raise NotImplementedError

    def writer(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def get_meta(self, key: str) -> str | None:
        raise NotImplementedError

    def set_meta(self, conn: sqlite3.Connection, key: str, value: str) -> None:
        raise NotImplementedError

    def reset_embeddings(self, model: str) -> int:
        """Forget every vector if they were made by another model than ``model``; the
        embedding phase then recomputes them while keyword search keeps working. Returns how
        many vectors were dropped."""
        if self.get_meta("embedding_model") in (None, model):
            with self.writer() as conn:
                self.set_meta(conn, "embedding_model", model)
            return 0
        with self.writer() as conn:
            dropped = conn.execute(
                "UPDATE chunks SET embedding = NULL WHERE embedding IS NOT NULL"
            ).rowcount
            self.set_meta(conn, "embedding_model", model)
        return int(dropped)

    def queue_counts(self) -> tuple[int, int]:
        """(chunks, chunks without a vector)."""
        conn = self.reader()
        total = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        pending = int(
            conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone()[0]
        )
        return total, pending

    def pending_chunks(
        self, limit: int, *, item_keys: Sequence[str] | None = None
    ) -> list[tuple[int, str, str]]:
        """Up to ``limit`` chunks without a vector, oldest first (of ``item_keys`` only, when
        given): (chunk id, item key, the text to embed: title - section, then the passage)."""
        conn = self.reader()
        sql = (
            "SELECT c.id, c.item_key, coalesce(i.title, ''), c.section, c.text FROM chunks c "
            "LEFT JOIN items i ON i.item_key = c.item_key WHERE c.embedding IS NULL"
        )
        params: list[Any] = []
        if item_keys is not None:
            keys = list(item_keys)
            if not keys:
                return []
            sql += f" AND c.item_key IN ({','.join('?' * len(keys))})"
            params.extend(keys)
        sql += " ORDER BY c.id LIMIT ?"
        params.append(limit)
        return [
            (int(cid), item_key, embedding_text(title, section, text))
            for cid, item_key, title, section, text in conn.execute(sql, params)
        ]

    def pending_count(self, item_keys: Sequence[str]) -> int:
        """Chunks of these items still without a vector."""
        keys = list(item_keys)
        marks = ",".join("?" * len(keys))
        row = (
            self.reader()
            .execute(
                f"SELECT count(*) FROM chunks WHERE embedding IS NULL AND item_key IN ({marks})",
                keys,
            )
            .fetchone()
        )
        return int(row[0])

    def store_vectors(self, ids: Sequence[int], vectors: np.ndarray) -> list[int]:
        """Write the vectors of chunks that still exist and still have none; returns the ids
        written (a chunk re-indexed meanwhile has a new id and is skipped)."""
        written: list[int] = []
        with self.writer() as conn:
            for cid, vector in zip(ids, vectors, strict=True):
                cur = conn.execute(
                    "UPDATE chunks SET embedding = ? WHERE id = ? AND embedding IS NULL",
                    (np.asarray(vector, dtype=np.float32).tobytes(), int(cid)),
                )
                if cur.rowcount:
                    written.append(int(cid))
        return written

    def embedded_chunks(self) -> tuple[np.ndarray, list[str]]:
        """(chunk ids, item key of each) of every chunk with a vector, by id; no vectors read."""
        rows = (
            self.reader()
            .execute("SELECT id, item_key FROM chunks WHERE embedding IS NOT NULL ORDER BY id")
            .fetchall()
        )
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)), [
            r[1] for r in rows
        ]

    def vectors_of(self, ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(chunk ids found, float32 matrix) of those of ``ids`` that have a vector."""
        found: list[int] = []
        blobs: list[bytes] = []
        conn = self.reader()
        for start in range(0, len(ids), 900):
            part = [int(i) for i in ids[start : start + 900]]
            marks = ",".join("?" * len(part))
            for cid, blob in conn.execute(
                f"SELECT id, embedding FROM chunks WHERE id IN ({marks}) AND embedding IS NOT NULL",
                part,
            ):
                found.append(cid)
                blobs.append(blob)
        if not blobs:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        return np.asarray(found, dtype=np.int64), matrix
