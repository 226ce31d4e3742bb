"""The embedding phase: a background task of the library service that gives every chunk its vector.

The keyword phase writes chunks without vectors (``chunks.embedding IS NULL`` is the queue,
kept on disk), so the phase is resumable by construction: after a restart or a crash the
queue is what is left, and a chunk that has its vector is never embedded again. Batches are
committed as they come back from the embedder. Items that a chat's scope points at
(``prioritize``) go to the front of the queue. When the embedder is unreachable the phase
waits and tries again; search meanwhile uses keyword scores for the chunks still pending.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from services.library import metrics
from services.library.dense import DenseIndex
from services.library.index_store import IndexStore
from services.library.phase import BackgroundPhase, Rate
from services.library.search import Embedder

logger = logging.getLogger(__name__)

EMBED_BATCH = 64
MAX_PRIORITY_ITEMS = 200
_RATE_WINDOW_SECONDS = 60.0
_RETRY_MAX_SECONDS = 30.0


@dataclasses.dataclass
class EmbeddingProgress:
    """Chunks embedded of total, the rate over the last minute, and the time left."""

    chunks_total: int = 0
    chunks_embedded: int = 0
    chunks_pending: int = 0
    chunks_per_second: float = 0.0
    eta_seconds: float = 0.0
    running: bool = False
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class EmbeddingQueue(BackgroundPhase):
    """Drains the store's embedding queue into the store and the in-memory dense index."""

    task_name = "embedding-queue"

    def __init__(
        self,
        store: IndexStore,
        dense: DenseIndex,
        embedder: Embedder,
        *,
        dense_lock: asyncio.Lock,
        batch: int = EMBED_BATCH,
        hold_bulk: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__()
        self.store = store
        self.dense = dense
        self.embedder = embedder
        self.batch = batch
        self.dense_lock = dense_lock
        # While this says so (the keyword phase is running), only priority items are embedded:
        # on 2 cores the embedder would otherwise take the CPU that makes the library
        # searchable, and being searchable sooner matters more than embedding sooner.
        self.hold_bulk = hold_bulk or (lambda: False)
        self._priority: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._rate = Rate(_RATE_WINDOW_SECONDS)
        self._total = 0
        self._pending = 0
        self._error = ""

    # ---- control (start, stop, wake, wait_idle: BackgroundPhase) ----

    def prioritize(self, item_keys: Iterable[str]) -> None:
        """Embed these items' chunks before the rest (most recent request first)."""
        for key in item_keys:
            self._priority[key] = None
            self._priority.move_to_end(key, last=False)
        while len(self._priority) > MAX_PRIORITY_ITEMS:
            self._priority.popitem(last=True)
        if self._priority:
            self.wake()

    @property
    def chunks_total(self) -> int:
        """Chunks in the index when the counts were last refreshed."""
        return self._total

    @property
    def priority_items(self) -> list[str]:
        return list(self._priority)

    def progress(self) -> EmbeddingProgress:
        rate = self._rate.per_second()
        return EmbeddingProgress(
            chunks_total=self._total,
            chunks_embedded=max(0, self._total - self._pending),
            chunks_pending=self._pending,
            chunks_per_second=round(rate, 2),
            eta_seconds=round(self._pending / rate, 1) if rate > 0 and self._pending else 0.0,
            running=self._task is not None and not self._idle.is_set() and not self.hold_bulk(),
            error=self._error,
        )

    def refresh_counts(self) -> None:
        """Blocking: total and pending chunks from the store."""
        self._total, self._pending = self.store.queue_counts()

    # ---- the loop ----

    async def _next_batch(self) -> list[tuple[int, str, str]]:
        """The priority items' pending chunks first, then the oldest pending."""
        keys = list(self._priority)
        if keys:
            rows = await asyncio.to_thread(self.store.pending_chunks, self.batch, item_keys=keys)
            if rows:
                return rows
            for key in keys:  # all of them embedded
                self._priority.pop(key, None)
        if self.hold_bulk():
            return []
        return await asyncio.to_thread(self.store.pending_chunks, self.batch)

    async def _run(self) -> None:
        while True:
            try:
                await self._drain_forever()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug or a broken index must not end the phase for good
                logger.exception("the embedding queue failed; starting it again in 5 s")
                self._error = "the embedding queue failed (see the library service's log); retrying"
                await asyncio.sleep(5.0)
                self._wake.set()

    async def _drain_forever(self) -> None:
        delay = 1.0
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.to_thread(self.refresh_counts)
            self._rate.add(0)
            while True:
                rows = await self._next_batch()
                if not rows:
                    break
                try:
                    vectors = await self.embedder.embed(
                        [text for _, _, text in rows], background=True
                    )
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the embedder is down or restarting: wait, retry
                    self._error = f"{type(exc).__name__}: {exc}"
                    logger.warning("embedding failed (%s); retrying in %.0f s", self._error, delay)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, _RETRY_MAX_SECONDS)
                    continue
                delay, self._error = 1.0, ""
                await self._store(rows, np.asarray(vectors, dtype=np.float32))
            await asyncio.to_thread(self.refresh_counts)
            if self._pending:
                # Held by the keyword phase, or it ended (or new chunks came) after the last
                # look: not idle. Look again shortly; the queue is idle only when it is empty.
                await asyncio.sleep(1.0 if self.hold_bulk() else 0.2)
                self._wake.set()
            elif not self._wake.is_set():
                self._idle.set()

    async def _store(self, rows: list[tuple[int, str, str]], vectors: np.ndarray) -> None:
        ids = [cid for cid, _, _ in rows]
        async with self.dense_lock:
            written = set(await asyncio.to_thread(self.store.store_vectors, ids, vectors))
            keep = [i for i, cid in enumerate(ids) if cid in written]
            if keep:
                self.dense.append(
                    np.asarray([ids[i] for i in keep], dtype=np.int64),
                    vectors[keep],
                    [rows[i][1] for i in keep],
                )
        self._pending = max(0, self._pending - len(ids))
        metrics.EMBEDDED_CHUNKS.inc(len(written))
        self._rate.add(len(ids))
