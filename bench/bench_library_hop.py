"""search_corpus through the library service (one gRPC hop more) against in-process, at the
38 papers' ~1.9k chunks and at a grown index of 82k.

Before the library service, the agent's search_corpus tool searched an index open in its own
process; now it asks the library service over gRPC (``services/agent/research/library_tools.py``
over ``LibraryClient``). Both are measured here in one run, query by query in alternation (the
machine is shared: what slows one slows the other), on the same index and the same real
reranker process (the query's embedding is a gRPC call in both):

- **in-process**: ``LibrarySearch.search`` and the tool's result dicts, as the agent's tool did;
- **through gRPC**: the agent's tool over ``LibraryClient`` to ``LibraryServicer`` on loopback.

The grown index repeats the real chunks (``bench_search.grow``: real text for FTS5, blended
real vectors); at 82k it stays under the HNSW threshold, so dense search is exact, as it would be
for a library of that size. Goal (issue 26): p50 through gRPC at most 1.1x in-process.

    .venv/bin/python bench/bench_library_hop.py [--sizes 82000] [--workdir DIR] [--repeat 3] [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import statistics
import tempfile
import time
from typing import Any

from _stack import ROOT, RerankerClient, open_library, reranker_process, zotero_copy
from bench_search import grow
from goals import Goal, Result, add_check_flag, report

from services.agent.research.library_tools import make_library_tools
from services.library.client import LibraryClient
from services.library.dense import DenseIndex
from services.library.search import LibrarySearch
from tests.support.stack import serving_library

QUESTIONS = ROOT / "bench" / "data" / "retrieval_questions.jsonl"
RATIO_GOAL = 1.1


class Served:
    """What ``LibraryServicer.SearchLibrary`` asks of a library: its search."""

    def __init__(self, search: LibrarySearch) -> None:
        self.search = search.search


def in_process_tool(search: LibrarySearch) -> Any:
    """search_corpus as the agent's in-process tool ran it (before the library service)."""

    async def search_corpus(query: str, k: int = 10) -> dict[str, Any]:
        hits = await search.search(query, k=k)
        return {
            "status": "success",
            "results": [
                {
                    "chunk_id": h.chunk_id,
                    "item_key": h.item_key,
                    "attachment_key": h.attachment_key,
                    "title": h.title,
                    "authors": h.authors,
                    "year": h.year,
                    "page": h.page_start,
                    "page_end": h.page_end,
                    "section": h.section,
                    "score": h.score,
                    "word_count": h.word_count,
                    "text": h.text,
                }
                for h in hits
            ],
        }

    return search_corpus


async def measure(
    label: str, search: LibrarySearch, questions: list[str], repeat: int
) -> dict[str, float]:
    async with serving_library(Served(search)) as address:
        client = LibraryClient(address)
        try:
            return await _alternate(label, search, client, questions, repeat)
        finally:
            await client.close()


async def _alternate(
    label: str,
    search: LibrarySearch,
    client: LibraryClient,
    questions: list[str],
    repeat: int,
) -> dict[str, float]:
    local = in_process_tool(search)
    remote = make_library_tools(client)[0]
    for q in questions[:3]:  # warm caches and the channel
        await local(q)
        await remote(q)
    times: dict[str, list[float]] = {"in-process": [], "gRPC": []}
    for _ in range(repeat):
        for q in questions:
            for name, tool in (("in-process", local), ("gRPC", remote)):
                started = time.perf_counter()
                result = await tool(q, k=10)
                times[name].append((time.perf_counter() - started) * 1000)
                assert result["status"] == "success", result
    p50 = {name: statistics.median(t) for name, t in times.items()}
    p95 = {name: sorted(t)[int(0.95 * (len(t) - 1))] for name, t in times.items()}
    print(
        f"{label:>14} {p50['in-process']:>14.1f} {p95['in-process']:>14.1f} "
        f"{p50['gRPC']:>9.1f} {p95['gRPC']:>9.1f} {p50['gRPC'] / p50['in-process']:>7.2f}x"
    )
    return p50


async def run(args: argparse.Namespace) -> list[Result]:
    questions = [
        json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()
    ]
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="zocrates-bench-"))
    zotero_dir = zotero_copy(workdir)
    results: list[Result] = []
    with reranker_process() as address:
        reranker = RerankerClient(address, timeout=300)
        model = (await reranker.models())["embedding_model"]
        library = await open_library(
            workdir / f"index-{model.replace(':', '_').replace('/', '_')}", zotero_dir, reranker
        )
        async for _ in library.sync(follow_embedding=True):
            pass
        print(f"{len(questions)} questions x {args.repeat}, k=10, hybrid, query embedded each time")
        print(
            f"{'chunks':>14} {'in-process p50':>14} {'in-process p95':>14} "
            f"{'gRPC p50':>9} {'gRPC p95':>9} {'ratio':>8}"
        )
        real = library.store.counts()["chunks"]
        p50 = await measure(f"{real} (real)", library.searcher, questions, args.repeat)
        results.append(
            (Goal(f"search_corpus p50 through gRPC / in-process at {real} chunks", RATIO_GOAL, "x"),
             p50["gRPC"] / p50["in-process"])
        )  # fmt: skip
        for size in args.sizes:
            store = grow(library.store, workdir / f"grown-mix3-{size}.sqlite3", size)
            dense = DenseIndex(ann_from=10**12)
            dense.load(store)
            p50 = await measure(
                f"{size} (grown)", LibrarySearch(store, dense, reranker), questions, args.repeat
            )
            results.append(
                (Goal(f"search_corpus p50 through gRPC / in-process at {size} chunks",
                      RATIO_GOAL, "x"),
                 p50["gRPC"] / p50["in-process"])
            )  # fmt: skip
            dense.close()
            store.close()
        await library.aclose()
        await reranker.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="*", default=[82_000])
    parser.add_argument("--repeat", type=int, default=3, help="passes over the questions")
    parser.add_argument("--workdir", help="keeps the index and the grown copies between runs")
    add_check_flag(parser)
    args = parser.parse_args()
    raise SystemExit(report(asyncio.run(run(args)), check=args.check))


if __name__ == "__main__":
    main()
