"""search_corpus latency as the library grows: p50/p95 at 10k, 100k and 1M chunks.

The real index of the 38 papers (~2k chunks) is grown synthetically: its chunks are repeated,
their text kept so the FTS5 index has a realistic vocabulary and posting-list length, their
embedding a blend of three real chunks' (and a little noise), so that the vectors fill the space
that real ones span instead of forming islands of near-copies.

Above the dense index's threshold (services/library/dense.py) the HNSW graph is built
(or reused from a previous run) and its recall@20 against exact search is printed; "dense
exact" is the float32 matrix alone, for comparison. Queries are the evaluation questions. Query embeddings are computed once
through the reranker and reused, so the figures are the index's own latency; the embedding
call (a few ms) is reported separately.

Goals: p50 under 50 ms at 100k chunks (issue 3); at 150k at most 30 ms and at 1M at most
100 ms, index only, with recall@20 against exact search at least 0.98 (issue 11).

    .venv/bin/python bench/bench_search.py [--sizes 10000 100000 1000000] [--workdir DIR] [--check]

``--check`` holds every measured size to the goal of the smallest goal size at or above it
(what meets 30 ms at 150k must meet it at 10k too): hybrid (index only) p50 at most 30 ms up
to 150,000 chunks and at most 100 ms up to 1,000,000; search_corpus (all) p50 at most 50 ms up
to 100,000; recall@20 against exact search at least 0.98 wherever it is measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np
from _stack import ROOT, RerankerClient, open_library, reranker_process, zotero_copy
from goals import Goal, Result, add_check_flag, report

from services.library.dense import DenseIndex
from services.library.index_store import IndexStore
from services.library.search import LibrarySearch

QUESTIONS = ROOT / "bench" / "data" / "retrieval_questions.jsonl"
# (mode label, up to this many chunks) -> p50 ms at most, smallest size first.
P50_GOALS = {
    "hybrid (index only)": ((150_000, 30.0), (1_000_000, 100.0)),
    "search_corpus (all)": ((100_000, 50.0),),
}
GRAPH_RECALL = 0.98


class CachedEmbedder:
    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    async def embed(
        self, texts: list[str], *, is_query: bool = False, background: bool = False
    ) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])


def grow(base: IndexStore, target: pathlib.Path, size: int, *, seed: int = 7) -> IndexStore:
    """An index of ``size`` chunks made from ``base``'s chunks."""
    if target.exists():
        store = IndexStore(target)
        if store.counts()["chunks"] == size:
            return store
        store.close()
        target.unlink()
    store = IndexStore(target)
    conn = base.reader()
    for table in ("items", "collections", "item_collections", "attachments"):
        rows = conn.execute(f"SELECT * FROM {table}").fetchall()
        if rows:
            marks = ",".join("?" * len(rows[0]))
            with store.writer() as w:
                w.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    source = conn.execute(
        "SELECT attachment_key, item_key, ordinal, page_start, page_end, section, text, word_count, embedding FROM chunks"
    ).fetchall()
    rng = np.random.default_rng(seed)
    batch: list[tuple] = []  # type: ignore[type-arg]
    made = 0
    while made < size:
        for row in source:
            if made >= size:
                break
            vector = np.frombuffer(row[8], dtype=np.float32)
            if made >= len(source):
                # A blend of three real chunks' vectors (Dirichlet weights) and a little noise,
                # not a jittered copy: copies make islands of hundreds of near-duplicates that
                # no real library has (exact search's top 20 among them is a coin toss, and
                # they trap an approximate index's graph walk); blends fill the space that
                # real vectors span.
                weights = rng.dirichlet((1.0, 1.0, 1.0))
                others = rng.integers(len(source), size=2)
                vector = weights[0] * vector + sum(
                    w * np.frombuffer(source[int(o)][8], dtype=np.float32)
                    for w, o in zip(weights[1:], others, strict=True)
                )
                vector = vector + rng.normal(0, 0.02, vector.shape).astype(np.float32)
                vector /= np.linalg.norm(vector)
            batch.append((*row[:8], vector.astype(np.float32).tobytes()))
            made += 1
            if len(batch) == 20000:
                with store.writer() as w:
                    w.executemany(
                        "INSERT INTO chunks(attachment_key, item_key, ordinal, page_start, page_end, section, text, word_count, embedding) VALUES (?,?,?,?,?,?,?,?,?)",
                        batch,
                    )
                batch = []
    if batch:
        with store.writer() as w:
            w.executemany(
                "INSERT INTO chunks(attachment_key, item_key, ordinal, page_start, page_end, section, text, word_count, embedding) VALUES (?,?,?,?,?,?,?,?,?)",
                batch,
            )
    store.rebuild_term_df()
    return store


def goals(p50: dict[tuple[int, str], float], recall: dict[int, float]) -> list[Result]:
    """The goals that apply to the sizes measured (``p50``: (size, mode) -> ms, ``recall``:
    size -> recall@20 against exact search)."""
    out: list[Result] = []
    for label, limits in P50_GOALS.items():
        for size in sorted({s for s, _ in p50}):
            limit = next((ms for up_to, ms in limits if size <= up_to), None)
            if limit is not None:
                goal = Goal(f"{label} p50 at {size:,} chunks", limit, " ms")
                out.append((goal, p50.get((size, label))))
    for size, value in sorted(recall.items()):
        goal = Goal(f"recall@20 against exact at {size:,} chunks", GRAPH_RECALL, at_least=True)
        out.append((goal, value))
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(args: argparse.Namespace) -> list[Result]:
    questions = [
        json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()
    ]
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="zocrates-bench-"))
    zotero_dir = zotero_copy(workdir)
    with reranker_process() as address:
        reranker = RerankerClient(address, timeout=300)
        model = (await reranker.models())["embedding_model"]
        library = await open_library(
            workdir / f"index-{model.replace(':', '_').replace('/', '_')}", zotero_dir, reranker
        )
        async for _ in library.sync(follow_embedding=True):
            pass
        embed_ms = []
        vectors = {}
        for q in questions:
            started = time.perf_counter()
            vectors[q] = (await reranker.embed([q], is_query=True))[0]
            embed_ms.append((time.perf_counter() - started) * 1000)
        print(
            f"query embedding through gRPC alone: p50 {statistics.median(embed_ms):.1f} ms, p95 {percentile(embed_ms, 0.95):.1f} ms"
        )
        print(
            f"{'chunks':>9} {'build s':>8} {'load s':>7} {'mode':<24} {'p50 ms':>7} {'p95 ms':>7} {'vectors MB':>11}"
        )
        cached = CachedEmbedder(vectors)
        p50: dict[tuple[int, str], float] = {}
        graph_recall: dict[int, float] = {}
        for size in args.sizes:
            started = time.perf_counter()
            store = grow(library.store, workdir / f"grown-mix3-{size}.sqlite3", size)
            built = time.perf_counter() - started
            started = time.perf_counter()
            exact = DenseIndex(ann_from=10**12)  # every vector in one float32 matrix
            exact.load(store)
            loaded = time.perf_counter() - started
            graph_path = workdir / f"graph-{size}.usearch"
            if args.cold_graph:
                graph_path.unlink(missing_ok=True)
            started = time.perf_counter()
            dense = DenseIndex(graph_path=graph_path, graph_tag=model, build_threads=2)
            dense.load(store)
            reused = dense.uses_graph and dense.stats()["waiting"] == 0
            dense.wait_built(7200)
            graph_s = time.perf_counter() - started
            if dense.uses_graph:
                assert dense._graph is not None
                vectors_mb = dense._graph.memory_usage / 1e6
                recalls = []
                for q in questions:
                    want = {c for c, _ in exact.search(vectors[q], limit=20, item_keys=None)}
                    got = {c for c, _ in dense.search(vectors[q], limit=20, item_keys=None)}
                    recalls.append(len(want & got) / len(want))
                graph_recall[size] = statistics.mean(recalls)
                print(
                    f"{size:>9} graph of {len(dense)} vectors ready in {graph_s:.1f} s "
                    f"({'reused, checked' if reused else 'built'}); "
                    f"recall@20 against exact search {statistics.mean(recalls):.4f} "
                    f"(lowest {min(recalls):.2f})"
                )
            else:
                vectors_mb = exact.stats()["tail"] * exact.dim * 4 / 1e6
            exact_mb = len(exact) * exact.dim * 4 / 1e6
            runs = [
                ("keyword", LibrarySearch(store, dense, cached), "keyword", vectors_mb),
                (
                    "dense exact (index only)",
                    LibrarySearch(store, exact, cached),
                    "dense",
                    exact_mb,
                ),
                ("dense (index only)", LibrarySearch(store, dense, cached), "dense", vectors_mb),
                ("hybrid (index only)", LibrarySearch(store, dense, cached), "hybrid", vectors_mb),
                (
                    "search_corpus (all)",
                    LibrarySearch(store, dense, reranker),
                    "hybrid",
                    vectors_mb,
                ),
            ]
            for label, search, mode, mb in runs:
                for q in questions[:3]:  # warm caches
                    await search.search(q, k=10, mode=mode)
                times = []
                for _ in range(args.repeat):
                    for q in questions:
                        t0 = time.perf_counter()
                        await search.search(q, k=10, mode=mode)
                        times.append((time.perf_counter() - t0) * 1000)
                p50[(size, label)] = statistics.median(times)
                print(
                    f"{size:>9} {built:>8.1f} {loaded:>7.1f} {label:<24} {statistics.median(times):>7.1f} "
                    f"{percentile(times, 0.95):>7.1f} {mb:>11.0f}"
                )
            dense.close()
            store.close()
        await library.aclose()
        await reranker.close()
    return goals(p50, graph_recall)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument(
        "--repeat", type=int, default=2, help="passes over the questions per size and mode"
    )
    parser.add_argument(
        "--workdir", default=None, help="reuse a folder between runs (grown indexes are kept)"
    )
    parser.add_argument(
        "--cold-graph",
        action="store_true",
        help="build the graphs anew (else a saved one is reused)",
    )
    add_check_flag(parser)
    args = parser.parse_args()
    sys.exit(report(asyncio.run(run(args)), check=args.check))


if __name__ == "__main__":
    main()
