"""A real researcher's library, cold: about 3,250 PDFs (50,000 pages) with the 38 papers hidden
among them, indexed as `make run` does it (the reranker as its own process, the library in
this process with its extraction workers).

Prints the time until every item is keyword-searchable, the embedding phase's rate and how
long it takes (or would take: with --embed-minutes it stops after that long and extrapolates),
an unchanged re-sync, per-item states, and the peak RSS of this process, its worker processes
and the reranker together. Search latency is sampled while the embedding phase runs and again
once it is idle (or stopped), side by side.

Goals (issue 11): keyword-searchable in at most 3 minutes, every chunk embedded in at most 20,
unchanged re-sync at most 10 s, peak RSS at most 2 GB, search p50 during the background phase
at most 1.5x idle.

    ../shared/data/large-library/fetch.sh /work/large-library     # once, about 700 MB
    .venv/bin/python bench/bench_large_library.py --large /work/large-library \\
        [--limit N] [--embed-minutes M] [--workdir DIR] [--check]

``--check`` compares the run with those goals; an embedding phase stopped by --embed-minutes
is judged by its extrapolated end.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import pathlib
import random
import statistics
import sys
import tempfile
import threading
import time

from _stack import RerankerClient, open_library, reranker_process, tree_rss
from goals import Goal, Result, add_check_flag, report

from tests.support import zotero_fixture as zf

QUERIES = (
    "Which derivative-free optimizer is used by default when fitting linear mixed models?",
    "heteroskedasticity consistent covariance matrix estimators",
    "how to draw commutative diagrams",
    "cumulative link models for ordinal responses",
    "setting the page margins of a document",
    "Bayesian multilevel models fitted with Stan",
    "clustered standard errors",
    "bibliography styles for physics journals",
)


def build_library(large: pathlib.Path, workdir: pathlib.Path, limit: int) -> pathlib.Path:
    """The large library's PDFs and the 38 papers in one Zotero-shaped folder (built once)."""
    zotero_dir = workdir / f"Zotero-large-{limit or 'all'}"
    if (zotero_dir / "zotero.sqlite").exists():
        return zotero_dir
    merged = workdir / f"papers-large-{limit or 'all'}"
    merged.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, str]] = []
    for folder in (large, zf.default_papers_dir()):
        with (folder / "manifest.tsv").open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE):
                link = merged / row["file"]
                if not link.exists():
                    link.symlink_to(folder / row["file"])
                rows.append(row)
    papers = [r for r in rows if r["debian_package"].startswith("r-cran")]
    others = [r for r in rows if not r["debian_package"].startswith("r-cran")]
    others = others[:limit] if limit else others
    mixed = others + papers
    random.Random(11).shuffle(mixed)  # the 38 papers hidden among the rest
    with (merged / "manifest.tsv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(
            fh, fieldnames=list(rows[0]), delimiter="\t", quoting=csv.QUOTE_NONE, escapechar="\\"
        )
        writer.writeheader()
        writer.writerows(mixed)
    return zf.build_zotero_library(zotero_dir, papers_dir=merged, trashed=())


class RssSampler:
    """Peak resident memory of this process and all its descendants, sampled every 0.5 s."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.peak = max(self.peak, tree_rss(os.getpid()))


async def search_latencies(library, rounds: int) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        for query in QUERIES:
            started = time.perf_counter()
            await library.search(query, k=10)
            times.append((time.perf_counter() - started) * 1000)
    return times


SEARCHABLE = Goal("every item keyword-searchable", 180.0, " s")
EMBEDDED = Goal("every chunk embedded, after searchable", 20.0, " min")
RESYNC = Goal("unchanged re-sync", 10.0, " s")
PEAK_RSS = Goal("peak RSS: process, workers, reranker", 2.0, " GB")
BUSY_SEARCH = Goal("search p50 while embedding / idle", 1.5, "x")


def p50(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


async def run(args: argparse.Namespace) -> list[Result]:
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="zocrates-large-"))
    zotero_dir = build_library(pathlib.Path(args.large), workdir, args.limit)
    index_dir = workdir / f"index-{args.limit or 'all'}"
    if not args.keep_index:
        import shutil

        shutil.rmtree(index_dir, ignore_errors=True)
    with reranker_process() as address, RssSampler() as rss:
        reranker = RerankerClient(address, timeout=300)
        library = await open_library(index_dir, zotero_dir, reranker)
        started = time.perf_counter()
        searchable_at = None
        last = None
        async for progress in library.sync():
            last = progress
        searchable_at = time.perf_counter() - started
        assert last is not None
        status = await library.status()
        print(
            f"keyword phase: {last.items_total} attachments, {last.pages_done} pages, "
            f"{status['chunks']} chunks in {searchable_at:.1f} s "
            f"({last.pages_done / searchable_at:.0f} pages/s); states {status['attachment_states']}"
        )
        for problem in status["problems"][:5]:
            print(
                f"  {problem['state']}: {pathlib.Path(problem['path'] or '').name}: {problem['reason'][:100]}"
            )

        # search while the embedding phase runs in the background
        busy = await search_latencies(library, args.search_rounds)
        embed_started = time.perf_counter()
        deadline = embed_started + args.embed_minutes * 60 if args.embed_minutes else None
        finished = False
        while True:
            if await library.embedding.wait_idle(timeout=10):
                finished = True
                break
            if deadline and time.perf_counter() > deadline:
                break
        embedding = library.embedding.progress()
        embed_seconds = time.perf_counter() - embed_started
        if not finished:
            await library.embedding.stop()
        idle = await search_latencies(library, args.search_rounds)
        done = embedding.chunks_embedded
        rate = embedding.chunks_per_second or (done / embed_seconds if embed_seconds else 0)
        if finished:
            print(f"embedding phase: all {done} chunks in {embed_seconds:.0f} s after searchable")
            embedded_in = embed_seconds
        else:
            left = embedding.chunks_pending / rate if rate else float("inf")
            embedded_in = embed_seconds + left
            print(
                f"embedding phase (stopped after {embed_seconds:.0f} s): {done} of "
                f"{embedding.chunks_total} chunks, {rate:.1f} chunks/s, "
                f"{left / 60:.0f} more minutes for the rest"
            )
        print(
            f"search p50 during the embedding phase {p50(busy):.1f} ms, idle {p50(idle):.1f} ms "
            f"(ratio {p50(busy) / p50(idle):.2f})"
        )
        again_started = time.perf_counter()
        final = None
        async for progress in library.sync():
            final = progress
        assert final is not None
        resync = time.perf_counter() - again_started
        print(
            f"unchanged re-sync: {resync:.2f} s "
            f"({final.unchanged} unchanged, {final.added + final.updated} indexed)"
        )
        await library.aclose()
        await reranker.close()
    print(f"peak RSS (this process, its workers, the reranker): {rss.peak / 2**30:.2f} GiB")
    return [
        (SEARCHABLE, searchable_at),
        (EMBEDDED, embedded_in / 60),
        (RESYNC, resync),
        (PEAK_RSS, rss.peak / 1e9),
        (BUSY_SEARCH, p50(busy) / p50(idle)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--large", required=True, help="folder written by fetch.sh")
    parser.add_argument("--limit", type=int, default=0, help="only the first N large PDFs")
    parser.add_argument(
        "--embed-minutes",
        type=float,
        default=0,
        help="stop the embedding phase after this long and extrapolate (0: to the end)",
    )
    parser.add_argument("--search-rounds", type=int, default=3, help="rounds of the 8 queries")
    parser.add_argument("--workdir", default=None, help="keep the library and index here")
    parser.add_argument("--keep-index", action="store_true", help="do not start cold")
    add_check_flag(parser)
    args = parser.parse_args()
    sys.exit(report(asyncio.run(run(args)), check=args.check))


if __name__ == "__main__":
    main()
