"""The chunk vectors in memory and their nearest-neighbour search.

Below ``ANN_FROM`` vectors every search is exact: one float32 matrix times the query. From
``ANN_FROM`` on, a background thread puts the vectors into an HNSW graph (usearch, int8: 384
bytes a vector instead of 1,536) and they leave the matrix. The graph proposes candidates;
each is scored exactly with its float32 vector read from the index by primary key, so the
quantisation never decides the final order. Vectors written since the graph last grew (the
tail) are searched exactly until the thread adds them, a batch at a time.

The graph is saved next to the index and reused at the next start. Chunk ids can be reused
after a paper is re-indexed, so the thread checks the reused graph's vectors against the index
and re-adds any that differ; until then the exact rescoring keeps every score right. A vector
the graph does not hold yet (the graph is being built) counts as "not embedded yet", so the
keyword ranking stands in for it (see ``LibrarySearch``).
"""

from __future__ import annotations

import contextlib
import logging
import pathlib
import threading
import time
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from usearch.index import Index

from services.library.hnsw import EXPANSION_SEARCH, SavedGraph, new_graph, probe, stored

logger = logging.getLogger(__name__)

ANN_FROM = 100_000  # exact search below (about 10 ms at 100k here), the graph from here on
ANN_BATCH = 4_096  # tail vectors that wait before the graph takes them in
ADD_STEP = 512  # vectors per graph insertion; a search waits for at most one step
CHECK_STEP = 4_096  # reused graph vectors compared with the index per step
SCOPE_EXACT = 5_000  # a scope this small is scored exactly from the index directly
CANDIDATES = 3  # the graph proposes this many times the hits asked for (at least MIN_CANDIDATES)
MIN_CANDIDATES = 64
SAME_VECTOR = 0.95  # cosine between a graph vector (int8) and the index's above which they match
# How well the graph finds neighbours depends on the vectors, so it is measured, not assumed:
# probes (its own vectors, moved by noise about as far as a question is from its answer) are
# searched through the graph and exhaustively; if no expansion reaches RECALL_TARGET, search
# scans the graph's int8 vectors exhaustively instead (SIMD; about 65 ms at 1M here), still
# rescored exactly. Measured on synthetic libraries the graph gave 0.99 at 150k and 0.68 at 1M.
RECALL_TARGET = 0.98
CALIBRATE_FROM = 2_000  # a smaller graph is not probed
CALIBRATE_GROWTH = 1.25  # probed again once it grew by a quarter


class VectorStore(Protocol):
    """What the dense index reads from the library index (``IndexStore``)."""

    def queue_counts(self) -> tuple[int, int]: ...

    def all_embeddings(self) -> tuple[np.ndarray, np.ndarray, list[str]]: ...

    def embedded_chunks(self) -> tuple[np.ndarray, list[str]]: ...

    def vectors_of(self, ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def close(self) -> None: ...


def _top(ids: np.ndarray, scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    limit = min(limit, int(scores.shape[0]))
    if limit <= 0:
        return []
    top = np.argpartition(-scores, limit - 1)[:limit]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(ids[i]), float(scores[i])) for i in top]


class DenseIndex:
    """Every chunk vector, searched exactly or through the graph (see the module doc).

    ``load`` and ``append`` may run while searches run in other threads: a search works on a
    snapshot of the arrays taken under a short lock."""

    def __init__(
        self,
        *,
        graph_path: pathlib.Path | None = None,
        graph_tag: str = "",
        ann_from: int = ANN_FROM,
        ann_batch: int = ANN_BATCH,
        build_threads: int = 1,
    ) -> None:
        # Saved with the embedding model's name: a saved graph of another model is ignored.
        self._saved = SavedGraph(graph_path, graph_tag)
        self.ann_from = ann_from
        self.ann_batch = ann_batch
        self.build_threads = build_threads
        self._lock = threading.Lock()  # the fields below
        self._graph_lock = threading.Lock()  # graph insertions and removals against searches
        self._store: VectorStore | None = None
        self._codes: dict[str, int] = {}
        # The tail: float32 rows, searched exactly (every vector, below ANN_FROM).
        self._t_ids = np.zeros(0, dtype=np.int64)
        self._t_items = np.zeros(0, dtype=np.int32)
        self._t_vec = np.zeros((0, 0), dtype=np.float32)
        self._t_rows = 0
        self._t_set: set[int] = set()
        # The graph and which chunks (and items) it holds.
        self._graph: Index | None = None
        self._g_ids = np.zeros(0, dtype=np.int64)
        self._g_items = np.zeros(0, dtype=np.int32)
        # Chunks with a vector in the index but not in memory yet: the thread adds them.
        self._cold_ids = np.zeros(0, dtype=np.int64)
        self._cold_items = np.zeros(0, dtype=np.int32)
        self._unchecked = np.zeros(0, dtype=np.int64)  # reused graph vectors not yet compared
        self._dirty = False  # the graph changed since it was saved
        self._exhaustive = False  # probes found the graph's recall too low: scan it instead
        self._calibrated_at = 0  # the graph's size when it was last probed
        self.probe_recall: float | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self.build_error = ""

    # -- reading --------------------------------------------------------------------------

    @property
    def dim(self) -> int:
        if self._t_rows:
            return int(self._t_vec.shape[1])
        graph = self._graph
        return int(graph.ndim) if graph is not None and len(self._g_ids) else 0

    def __len__(self) -> int:
        """Chunks with a vector (searchable or about to be)."""
        return self._t_rows + len(self._g_ids) + len(self._cold_ids)

    @property
    def uses_graph(self) -> bool:
        return self._graph is not None

    def stats(self) -> dict[str, int | bool]:
        return {
            "graph": len(self._g_ids),
            "tail": self._t_rows,
            "waiting": len(self._cold_ids),
            "unchecked": len(self._unchecked),
            "uses_graph": self.uses_graph,
            "exhaustive": self._exhaustive,
        }

    def has_vectors(self, chunk_ids: Sequence[int]) -> np.ndarray:
        """Which of ``chunk_ids`` a search can find by vector now (bool per id)."""
        ids = np.asarray(chunk_ids, dtype=np.int64)
        if not ids.size:
            return np.zeros(0, dtype=bool)
        with self._lock:
            graph, tail = self._graph, self._t_set
            found = np.fromiter((int(i) in tail for i in ids), dtype=bool, count=ids.size)
        if graph is not None:
            with self._graph_lock:
                found |= np.asarray(graph.contains(ids.astype(np.uint64)), dtype=bool)
        return found

    def search(
        self, query: np.ndarray, *, limit: int, item_keys: set[str] | None
    ) -> list[tuple[int, float]]:
        query = np.asarray(query, dtype=np.float32)
        with self._lock:
            n, store, graph = self._t_rows, self._store, self._graph
            t_ids, t_items, t_vec = self._t_ids[:n], self._t_items[:n], self._t_vec[:n]
            g_ids, g_items = self._g_ids, self._g_items
            codes = None
            if item_keys is not None:
                codes = np.asarray(
                    [self._codes[k] for k in item_keys if k in self._codes], dtype=np.int32
                )
        if codes is not None and codes.size == 0:
            return []
        parts: list[tuple[np.ndarray, np.ndarray]] = []
        if n:
            if codes is None:
                parts.append((t_ids, t_vec @ query))
            else:
                rows = np.flatnonzero(np.isin(t_items, codes))
                if rows.size:
                    parts.append((t_ids[rows], t_vec[rows] @ query))
        if graph is not None and store is not None and len(g_ids):
            wanted = max(limit * CANDIDATES, MIN_CANDIDATES)
            if codes is None:
                with self._graph_lock:
                    matches = graph.search(
                        query, min(wanted, len(graph)), exact=self._exhaustive, threads=1
                    )
                candidates = np.asarray(matches.keys, dtype=np.int64)
            else:
                candidates = g_ids[np.isin(g_items, codes)]
                if candidates.size > SCOPE_EXACT:
                    candidates = self._coarse(graph, candidates, query, wanted)
            if candidates.size:
                found, vectors = store.vectors_of(candidates)
                if found.size:
                    parts.append((found, vectors @ query))
        if len(parts) == 1:
            return _top(*parts[0], limit)
        # A vector being moved from the tail into the graph can be in both for a moment.
        best: dict[int, float] = {}
        for part in parts:
            for cid, score in _top(*part, limit):
                best[cid] = max(score, best.get(cid, score))
        return sorted(best.items(), key=lambda kv: kv[1], reverse=True)[:limit]

    def _coarse(self, graph: Index, ids: np.ndarray, query: np.ndarray, keep: int) -> np.ndarray:
        """The ``keep`` of ``ids`` nearest ``query`` by the graph's int8 vectors."""
        with self._graph_lock:
            got = stored(graph, ids)
        pairs = [(cid, v) for cid, v in zip(ids, got, strict=True) if v is not None]
        if not pairs:
            return np.zeros(0, dtype=np.int64)
        matrix = np.vstack([v for _, v in pairs]).astype(np.float32)
        scores = matrix @ query
        kept = np.asarray([cid for cid, _ in pairs], dtype=np.int64)
        return np.asarray([cid for cid, _ in _top(kept, scores, keep)], dtype=np.int64)

    # -- writing --------------------------------------------------------------------------

    def load(self, store: VectorStore) -> None:
        """Every vector of ``store``: in memory below ANN_FROM, else through the graph (the
        one in memory or the saved one, reused where it still matches, or a new one)."""
        self._stop_thread()
        total, pending = store.queue_counts()
        codes: dict[str, int] = {}
        if total - pending < self.ann_from:  # exact: every vector into the matrix
            all_ids, matrix, all_items = store.all_embeddings()
            exact_codes = np.fromiter(
                (codes.setdefault(k, len(codes)) for k in all_items),
                dtype=np.int32,
                count=len(all_items),
            )
            with self._lock:
                self._store, self._codes = store, codes
                self._set_tail(all_ids, exact_codes, matrix)
                self._drop_graph()
            self._saved.remove()
            return
        ids, items = store.embedded_chunks()  # through the graph: ids only, vectors later
        item_codes = np.fromiter(
            (codes.setdefault(k, len(codes)) for k in items), dtype=np.int32, count=len(items)
        )
        graph = self._graph if self._graph is not None else self._saved.restore()
        unchecked = np.zeros(0, dtype=np.int64)
        in_graph = np.zeros(len(ids), dtype=bool)
        if graph is not None:
            keys = np.asarray(graph.keys, dtype=np.int64)
            present = np.isin(keys, ids)
            if not present.all():
                graph.remove(keys[~present].astype(np.uint64))
                self._dirty = True
            unchecked = keys[present]
            in_graph = np.isin(ids, unchecked)
        else:
            graph = new_graph(int(store.vectors_of(ids[:1])[1].shape[1]))
        with self._lock:
            self._store, self._codes = store, codes
            self._set_tail(
                np.zeros(0, dtype=np.int64),
                np.zeros(0, dtype=np.int32),
                np.zeros((0, graph.ndim), dtype=np.float32),
            )
            self._graph = graph
            self._g_ids, self._g_items = ids[in_graph], item_codes[in_graph]
            self._cold_ids, self._cold_items = ids[~in_graph], item_codes[~in_graph]
            self._unchecked = unchecked
            self._exhaustive, self._calibrated_at = False, 0
        logger.info(
            "dense index: %d vectors through the graph (%d in it, %d to add)",
            len(ids),
            int(in_graph.sum()),
            int((~in_graph).sum()),
        )
        self._start_thread()

    def append(self, ids: np.ndarray, vectors: np.ndarray, item_keys: Sequence[str]) -> None:
        """New vectors (the embedding phase's): searched exactly until the graph takes them."""
        n = int(ids.shape[0])
        if n == 0:
            return
        with self._lock:
            if self._t_rows + n > self._t_ids.shape[0] or self._t_vec.shape[1] != vectors.shape[1]:
                capacity = max(self._t_rows + n, int(self._t_ids.shape[0] * 1.5), 1024)
                matrix = np.zeros((capacity, vectors.shape[1]), dtype=np.float32)
                grown_ids = np.zeros(capacity, dtype=np.int64)
                grown_items = np.zeros(capacity, dtype=np.int32)
                if self._t_rows:
                    matrix[: self._t_rows] = self._t_vec[: self._t_rows]
                    grown_ids[: self._t_rows] = self._t_ids[: self._t_rows]
                    grown_items[: self._t_rows] = self._t_items[: self._t_rows]
                self._t_vec, self._t_ids, self._t_items = matrix, grown_ids, grown_items
            end = self._t_rows + n
            self._t_vec[self._t_rows : end] = vectors
            self._t_ids[self._t_rows : end] = ids
            self._t_items[self._t_rows : end] = [
                self._codes.setdefault(k, len(self._codes)) for k in item_keys
            ]
            self._t_rows = end
            self._t_set.update(int(i) for i in ids)
            wants_graph = self._next_task_locked() is not None
        if wants_graph:
            self._start_thread()

    def wait_built(self, timeout: float = 600.0) -> bool:
        """Wait until the thread has nothing left to do (tests, benchmarks); False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._idle.wait(max(0.0, deadline - time.monotonic())):
                with self._lock:
                    if self._next_task_locked() is None:
                        return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        """Stop the thread and save the graph if it changed."""
        self._stop_thread()
        self._save()

    def _save(self) -> None:
        graph = self._graph
        if graph is not None and self._dirty and self._saved.save(graph):
            self._dirty = False

    # -- the thread -----------------------------------------------------------------------

    def _set_tail(self, ids: np.ndarray, items: np.ndarray, matrix: np.ndarray) -> None:
        self._t_ids, self._t_items, self._t_rows = ids, items, int(ids.shape[0])
        self._t_vec = matrix if self._t_rows else np.zeros((0, 0), dtype=np.float32)
        self._t_set = {int(i) for i in ids}

    def _drop_graph(self) -> None:
        self._graph, self._dirty = None, False
        self._exhaustive, self._calibrated_at, self.probe_recall = False, 0, None
        self._g_ids = self._cold_ids = self._unchecked = np.zeros(0, dtype=np.int64)
        self._g_items = self._cold_items = np.zeros(0, dtype=np.int32)

    def _next_task_locked(self) -> str | None:
        if self._graph is None:
            return "create" if self._t_rows >= self.ann_from else None
        if len(self._unchecked):
            return "check"
        if len(self._cold_ids):
            return "cold"
        if len(self._g_ids) >= max(1, CALIBRATE_GROWTH * self._calibrated_at):
            return "calibrate"
        if self._t_rows >= self.ann_batch:
            return "absorb"
        return None

    def _start_thread(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._idle.clear()
            self._wake.set()
            return
        self._stop.clear()
        self._idle.clear()
        self._thread = threading.Thread(target=self._run, name="dense-graph", daemon=True)
        self._thread.start()

    def _stop_thread(self) -> None:
        thread = self._thread
        if thread is None:
            return
        self._stop.set()
        self._wake.set()
        thread.join()
        self._thread = None
        self._idle.set()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                with self._lock:
                    task = self._next_task_locked()
                if task is None:
                    self._save()
                    self._idle.set()
                    self._wake.wait()
                    self._wake.clear()
                    self._idle.clear()
                    continue
                getattr(self, f"_{task}")()
        except Exception as exc:
            self.build_error = f"{type(exc).__name__}: {exc}"
            logger.exception("dense index: the graph thread failed; searches stay exact or partial")
        finally:
            self._idle.set()
            store = self._store
            if store is not None:
                store.close()  # this thread's connection only

    def _add(self, graph: Index, ids: np.ndarray, vectors: np.ndarray, *, live: bool) -> bool:
        """Insert in steps (a search waits for one step at most); False if told to stop."""
        for start in range(0, len(ids), ADD_STEP):
            if self._stop.is_set():
                return False
            part = slice(start, start + ADD_STEP)
            with self._graph_lock if live else contextlib.nullcontext():
                graph.add(ids[part].astype(np.uint64), vectors[part], threads=self.build_threads)
        return True

    def _create(self) -> None:
        """The tail reached ANN_FROM: build the graph off to the side, then switch to it."""
        with self._lock:
            n = self._t_rows
            ids, vectors = self._t_ids[:n].copy(), self._t_vec[:n]
        started = time.monotonic()
        graph = new_graph(int(vectors.shape[1]))
        if not self._add(graph, ids, vectors, live=False):
            return
        with self._lock:
            self._graph, self._dirty = graph, True
            self._g_ids, self._g_items = ids, self._t_items[:n].copy()
            self._shift_tail_locked(n)
        logger.info(
            "dense index: graph of %d vectors built in %.1f s", n, time.monotonic() - started
        )

    def _absorb(self) -> None:
        with self._lock:
            n, graph = self._t_rows, self._graph
            ids, items, vectors = self._t_ids[:n].copy(), self._t_items[:n].copy(), self._t_vec[:n]
        assert graph is not None
        if not self._add(graph, ids, vectors, live=True):
            return
        with self._lock:
            self._g_ids = np.concatenate([self._g_ids, ids])
            self._g_items = np.concatenate([self._g_items, items])
            self._shift_tail_locked(n)
            self._dirty = True

    def _shift_tail_locked(self, n: int) -> None:
        """Drop the first ``n`` tail rows (now in the graph); later appends stay."""
        rest = self._t_rows - n
        capacity = max(rest, 1024)
        dim = self._t_vec.shape[1]
        matrix = np.zeros((capacity, dim), dtype=np.float32)
        ids = np.zeros(capacity, dtype=np.int64)
        items = np.zeros(capacity, dtype=np.int32)
        matrix[:rest] = self._t_vec[n : self._t_rows]
        ids[:rest] = self._t_ids[n : self._t_rows]
        items[:rest] = self._t_items[n : self._t_rows]
        self._t_set.difference_update(int(i) for i in self._t_ids[:n])
        self._t_vec, self._t_ids, self._t_items, self._t_rows = matrix, ids, items, rest

    def _cold(self) -> None:
        """Add vectors that are only in the index (after a start) to the graph."""
        with self._lock:
            ids, items, graph, store = (
                self._cold_ids[:CHECK_STEP],
                self._cold_items[:CHECK_STEP],
                self._graph,
                self._store,
            )
        assert graph is not None and store is not None
        found, vectors = store.vectors_of(ids)
        order = {int(c): i for i, c in enumerate(ids)}
        found_items = items[[order[int(c)] for c in found]] if found.size else items[:0]
        if found.size and not self._add(graph, found, vectors, live=True):
            return
        with self._lock:
            self._cold_ids, self._cold_items = (
                self._cold_ids[len(ids) :],
                self._cold_items[len(ids) :],
            )
            self._g_ids = np.concatenate([self._g_ids, found])
            self._g_items = np.concatenate([self._g_items, found_items])
            self._dirty = True

    def _calibrate(self) -> None:
        """Probe the graph's recall; pick the expansion that reaches RECALL_TARGET, or scan."""
        with self._lock:
            graph, ids = self._graph, self._g_ids
        assert graph is not None
        size = len(ids)
        recall, chosen = 1.0, EXPANSION_SEARCH
        if size >= CALIBRATE_FROM:
            recall, chosen = probe(
                graph,
                ids,
                target=RECALL_TARGET,
                candidates=MIN_CANDIDATES,
                threads=self.build_threads,
                lock=self._graph_lock,
            )
            logger.info(
                "dense index: graph of %d vectors, probe recall@20 %.3f: %s",
                size,
                recall,
                f"graph search, expansion {chosen}" if chosen else "exhaustive int8 scan",
            )
        with self._lock:
            self._exhaustive = chosen == 0
            self._calibrated_at = size
            self.probe_recall = recall

    def _check(self) -> None:
        """Compare reused graph vectors with the index; re-add those that differ."""
        with self._lock:
            ids, graph, store = self._unchecked[:CHECK_STEP], self._graph, self._store
        assert graph is not None and store is not None
        found, vectors = store.vectors_of(ids)
        with self._graph_lock:
            got = stored(graph, found) if found.size else []
        stale = [
            i
            for i, v in enumerate(got)
            if v is None or float(_unit(v.astype(np.float32)) @ vectors[i]) < SAME_VECTOR
        ]
        if stale:
            stale_ids = found[stale]
            with self._graph_lock:
                graph.remove(stale_ids.astype(np.uint64))
            if not self._add(graph, stale_ids, vectors[stale], live=True):
                return
            logger.info("dense index: %d reused graph vectors were stale; re-added", len(stale))
        with self._lock:
            self._unchecked = self._unchecked[len(ids) :]
            self._dirty = self._dirty or bool(stale)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector
