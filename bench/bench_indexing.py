"""Indexing the 38-paper library (1,045 pages): cold, then again with nothing changed.

Goal (issue 3): cold under 2 minutes on a 2-core machine, unchanged re-sync under 5 seconds.
The reranker (embeddings) runs as its own process, as in `make run`.

    .venv/bin/python bench/bench_indexing.py [--embedding-model NAME] [--workdir DIR] [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import shutil
import sys
import tempfile
import time

from _stack import RerankerClient, open_library, reranker_process, zotero_copy
from goals import Goal, Result, add_check_flag, report

COLD = Goal("cold index of the 38 papers", 120.0, " s")
UNCHANGED = Goal("unchanged re-sync", 5.0, " s")


async def run(args: argparse.Namespace) -> list[Result]:
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="zocrates-bench-"))
    zotero_dir = zotero_copy(workdir)
    index_dir = workdir / "index-bench"
    shutil.rmtree(index_dir, ignore_errors=True)
    env = {"ZOCRATES_EMBEDDING_MODEL": args.embedding_model} if args.embedding_model else {}
    with reranker_process(**env) as address:
        reranker = RerankerClient(address, timeout=300)
        library = await open_library(index_dir, zotero_dir, reranker)
        rows = []
        for label in ("cold", "unchanged"):
            started = time.perf_counter()
            last = None
            async for progress in library.sync(follow_embedding=True):
                last = progress
            wall = time.perf_counter() - started
            assert last is not None
            pages = last.pages_done
            rows.append((label, wall, pages, last.added + last.updated, last.unchanged))
        status = await library.status()
        await library.aclose()
        await reranker.close()
    print(
        f"embedding model: {status['embedding_model']}; chunks: {status['chunks']}; index {status['index_bytes'] / 1e6:.1f} MB"
    )
    print(f"{'run':<10} {'wall s':>8} {'pages':>6} {'pages/s':>8} {'indexed':>8} {'skipped':>8}")
    for label, wall, pages, indexed, skipped in rows:
        rate = pages / wall if pages else 0.0
        print(f"{label:<10} {wall:>8.2f} {pages:>6} {rate:>8.1f} {indexed:>8} {skipped:>8}")
    walls = {label: wall for label, wall, *_ in rows}
    return [(COLD, walls["cold"]), (UNCHANGED, walls["unchanged"])]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--embedding-model", default=None, help="reranker embedding model (default: the service's)"
    )
    parser.add_argument(
        "--workdir",
        default=None,
        help="where to build the Zotero copy and index (default: a temp dir)",
    )
    add_check_flag(parser)
    args = parser.parse_args()
    sys.exit(report(asyncio.run(run(args)), check=args.check))


if __name__ == "__main__":
    main()
