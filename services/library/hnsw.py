"""The dense index's HNSW graph (usearch, int8): how one is made, and the copy saved next to
the library index so that the next start reuses it instead of building it again."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import pathlib
import threading

import numpy as np
from usearch.index import Index

logger = logging.getLogger(__name__)

CONNECTIVITY = 32
EXPANSION_ADD = 128
EXPANSION_SEARCH = 1024
PROBES = 32
PROBE_NOISE = 0.03  # moves a vector about as far as a question is from its answer
EXPANSIONS = (EXPANSION_SEARCH, 4 * EXPANSION_SEARCH)


def new_graph(dim: int) -> Index:
    return Index(
        ndim=dim,
        metric="cos",
        dtype="i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def stored(graph: Index, ids: np.ndarray) -> list[np.ndarray | None]:
    """The graph's (int8) vector of each id, None where it holds none."""
    got = graph.get(ids.astype(np.uint64))
    return list(got) if isinstance(got, tuple) else [got]


def probe(
    graph: Index,
    ids: np.ndarray,
    *,
    target: float,
    candidates: int,
    threads: int,
    lock: threading.Lock,
) -> tuple[float, int]:
    """(recall@20, the first of EXPANSIONS that reaches ``target`` or 0) of ``graph``'s walk
    against an exhaustive scan, on PROBES of its own vectors (of ``ids``) moved by noise.
    The walk's ``candidates`` count, as a search asks for them. Leaves the chosen expansion
    set (the last one tried if none reached it); ``lock`` guards it against searches."""
    rng = np.random.default_rng(len(ids))
    sample = stored(graph, ids[rng.integers(0, len(ids), PROBES)])
    probes = np.vstack([v for v in sample if v is not None]).astype(np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    probes += rng.normal(0, PROBE_NOISE, probes.shape).astype(np.float32)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    truth = [set(np.asarray(graph.search(p, 20, exact=True, threads=threads).keys)) for p in probes]
    recall = 0.0
    for expansion in EXPANSIONS:
        with lock:
            graph.expansion_search = expansion  # type: ignore[misc]  # has a setter
            found = [set(np.asarray(graph.search(p, candidates, threads=1).keys)) for p in probes]
        recall = float(np.mean([len(t & f) / len(t) for t, f in zip(truth, found, strict=True)]))
        if recall >= target:
            return recall, expansion
    return recall, 0


class SavedGraph:
    """``path`` and, beside it, ``path.json`` naming the embedding model (``tag``) and the
    dimension; both replaced atomically. No path: nothing is saved or read."""

    def __init__(self, path: pathlib.Path | None, tag: str) -> None:
        self.path = path
        self.tag = tag

    def _meta(self, path: pathlib.Path) -> pathlib.Path:
        return path.with_name(path.name + ".json")

    def restore(self) -> Index | None:
        """The saved graph, or None if there is none, it is another model's, or unreadable."""
        if self.path is None or not self.path.exists():
            return None
        try:
            meta = json.loads(self._meta(self.path).read_text())
            if meta.get("tag") != self.tag:
                logger.info("dense index: the saved graph is of another model; building anew")
                return None
            graph = new_graph(int(meta["dim"]))
            graph.load(str(self.path))
        except Exception as exc:  # unreadable or half-written: build anew
            logger.warning("dense index: cannot reuse the saved graph (%s); building anew", exc)
            return None
        logger.info("dense index: reusing the saved graph of %d vectors", len(graph))
        return graph

    def save(self, graph: Index) -> bool:
        """Write ``graph`` (no insertion may run meanwhile; searches may). False on failure."""
        if self.path is None:
            return False
        meta = self._meta(self.path)
        tmp = self.path.with_name(self.path.name + ".tmp")
        meta_tmp = meta.with_name(meta.name + ".tmp")
        try:
            graph.save(str(tmp))
            meta_tmp.write_text(json.dumps({"tag": self.tag, "dim": int(graph.ndim)}))
            os.replace(tmp, self.path)
            os.replace(meta_tmp, meta)
        except OSError as exc:
            logger.warning("dense index: could not save the graph to %s: %s", self.path, exc)
            return False
        return True

    def remove(self) -> None:
        if self.path is None:
            return
        for path in (self.path, self._meta(self.path)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
