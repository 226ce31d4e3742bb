"""Retrieval quality on the 38 papers: recall@5 and recall@20 by page for keyword-only,
dense-only, fused (reciprocal rank fusion) and fused + cross-encoder rerank, over the
questions in bench/data/retrieval_questions.jsonl.

A question counts as recalled at k when one of the top-k passages comes from the right paper
and its page range covers one of the answer pages.

    .venv/bin/python bench/bench_retrieval.py [--embedding-model NAME] [--workdir DIR] [--show-misses]

With --zotero-dir and --index-dir it runs on an existing library and index (say the large
library of bench_large_library.py, the 38 papers among thousands of distractors) without
syncing or embedding anything; --modes picks the retrievals.

``--check``: fused + rerank (what a research turn uses) at least as high as keyword only and
as dense only, on recall@5 and on recall@20 (docs/benchmarks.md); it needs every mode.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import sys
import tempfile
import time

from _stack import ROOT, RerankerClient, open_library, reranker_process, zotero_copy
from goals import Goal, Result, add_check_flag, report

from services.library import terms
from tests.support.zotero_fixture import paper_item_key

QUESTIONS = ROOT / "bench" / "data" / "retrieval_questions.jsonl"
MODES = [
    ("keyword", {"mode": "keyword"}),
    ("keyword + rerank", {"mode": "keyword", "rerank": True}),
    ("dense", {"mode": "dense"}),
    ("fused (RRF)", {"mode": "hybrid"}),
    ("fused + rerank", {"mode": "hybrid", "rerank": True}),
]


def _hit(question: dict, hits: list) -> int | None:  # type: ignore[type-arg]
    """1-based rank of the first passage that answers, or None."""
    key, pages = paper_item_key(question["file"]), set(question["pages"])
    for rank, hit in enumerate(hits, 1):
        if hit.item_key == key and pages & set(range(hit.page_start, hit.page_end + 1)):
            return rank
    return None


def goals(recalls: dict[str, tuple[float, float]]) -> list[Result]:
    """Fused + rerank against each single retrieval, at 5 and at 20 (``recalls``: label ->
    (recall@5, recall@20) of the modes that ran)."""
    best = recalls.get("fused + rerank")
    out: list[Result] = []
    for other in ("keyword", "dense"):
        for at, name in ((0, "recall@5"), (1, "recall@20")):
            theirs = recalls.get(other)
            goal = Goal(
                f"fused + rerank {name}, against {other} only"
                + (f" ({theirs[at]:.3f})" if theirs else " (not run)"),
                theirs[at] if theirs else float("nan"),
                at_least=True,
            )
            out.append((goal, best[at] if best and theirs else None))
    return out


async def run(args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    workdir = pathlib.Path(args.workdir or tempfile.mkdtemp(prefix="zocrates-bench-"))
    existing = args.zotero_dir is not None and args.index_dir is not None
    zotero_dir = pathlib.Path(args.zotero_dir) if existing else zotero_copy(workdir)
    env = {"ZOCRATES_EMBEDDING_MODEL": args.embedding_model} if args.embedding_model else {}
    with reranker_process(**env) as address:
        reranker = RerankerClient(address, timeout=300)
        model = (await reranker.models())["embedding_model"]
        index_dir = (
            pathlib.Path(args.index_dir)
            if existing
            else workdir / f"index-{model.replace(':', '_').replace('/', '_')}"
        )
        library = await open_library(
            index_dir, zotero_dir, reranker, embed_in_background=not existing
        )
        if existing:
            status = await library.status()
            print(
                f"existing index: {status['chunks']} chunks, "
                f"{status['embedding_phase']['chunks_embedded']} with vectors"
            )
        else:
            async for _ in library.sync(follow_embedding=True):
                pass
        print(
            f"{len(questions)} questions over {len({q['file'] for q in questions})} papers; embedding model {model}"
        )
        print(f"{'retrieval':<18} {'recall@5':>9} {'recall@20':>10} {'MRR@20':>7} {'ms/query':>9}")
        recalls: dict[str, tuple[float, float]] = {}
        for label, options in MODES:
            if args.no_rerank and options.get("rerank"):
                continue
            if args.modes and options["mode"] not in args.modes:
                continue
            ranks: list[int | None] = []
            started = time.perf_counter()
            for q in questions:
                hits = await library.search(q["question"], k=20, **options)
                ranks.append(_hit(q, hits))
            per_query = (time.perf_counter() - started) * 1000 / len(questions)
            r5 = sum(1 for r in ranks if r is not None and r <= 5) / len(ranks)
            r20 = sum(1 for r in ranks if r is not None) / len(ranks)
            mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
            print(f"{label:<18} {r5:>9.3f} {r20:>10.3f} {mrr:>7.3f} {per_query:>9.1f}")
            recalls[label] = (r5, r20)
            if args.show_misses:
                for q, r in zip(questions, ranks, strict=True):
                    if r is None or r > 5:
                        print(
                            f"    miss@5 {q['id']} ({q['file']} p{q['pages']}): {q['question'][:90]}"
                        )
        await library.aclose()
        await reranker.close()
    return recalls


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--embedding-model", default=None, help="reranker embedding model (default: the service's)"
    )
    parser.add_argument(
        "--workdir", default=None, help="reuse a folder between runs (the index is kept per model)"
    )
    parser.add_argument("--show-misses", action="store_true", help="list the questions missed at 5")
    parser.add_argument("--no-rerank", action="store_true", help="skip the (slow) reranked run")
    parser.add_argument("--zotero-dir", default=None, help="an existing Zotero-shaped library")
    parser.add_argument("--index-dir", default=None, help="its existing index (with --zotero-dir)")
    parser.add_argument(
        "--modes",
        nargs="*",
        choices=["keyword", "dense", "hybrid"],
        default=None,
        help="only these retrievals (hybrid: fused, and fused + rerank)",
    )
    parser.add_argument(
        "--posting-budget",
        type=int,
        default=None,
        help=f"keyword postings a query may read (default {terms.POSTING_BUDGET}; large libraries)",
    )
    add_check_flag(parser)
    args = parser.parse_args()
    if args.posting_budget is not None:
        terms.POSTING_BUDGET = args.posting_budget
    sys.exit(report(goals(asyncio.run(run(args))), check=args.check))


if __name__ == "__main__":
    main()
