"""The researcher's own reading and scanned papers (issue 27), measured as a user meets them.

1. **Scanned papers**: six of the 38 papers (those of seven retrieval questions) replaced by
   image-only copies (each page rendered to a greyscale image, no text layer:
   ``zotero_fixture.image_only_pdf``), the rest as they are. Recall@5 and @20 of those
   questions (fused + rerank, what a research turn uses) before OCR (the keyword phase leaves
   the scans ``no_text``), after the OCR phase has read them (with their vectors), and on the
   text-layer originals; the OCR phase's pages/s on this machine.
2. **Highlights, comments and notes**: the annotations and notes of
   ``bench/data/own_reading.jsonl`` (a child note, a standalone note in a collection, two
   highlights with comments, a comment on a page) added to the 38 papers, each with a question
   only it answers. Recall@5/@20 of the passage itself; then each question asked of the whole
   stack (`zocrates run`, no key: the offline model) and scored as a reader would: does the
   answer quote the written sentence, cited to that annotation or note, checked as verified.
3. **Re-sync after one new annotation** on the 38-paper library and (``--large``) on the large
   library (``../shared/data/large-library/fetch.sh``, keyword phase only): seconds from the
   new highlight to it being searchable.

    .venv/bin/python bench/bench_own_reading.py --workdir /tmp/own [--large DIR] [--check]

``--check``: recall after OCR at least 80% of the text layer's at 20, the own passages' recall@5
1.0, every answer quoting its sentence with a verified citation of the right origin, and each
re-sync at most 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import shutil
import statistics
import sys
import time
from typing import Any

import pypdfium2 as pdfium
from _stack import ROOT, RerankerClient, open_library, reranker_process
from goals import Goal, Result, add_check_flag, report

from services.agent.research.citations import normalise
from services.library.library import Library, OcrSettings
from tests.support import zotero_fixture as zf

QUESTIONS = ROOT / "bench" / "data" / "retrieval_questions.jsonl"
OWN = ROOT / "bench" / "data" / "own_reading.jsonl"
SCANNED = (
    "lmtest__lmtest-intro.pdf",
    "AER__AER.pdf",
    "mvtnorm__MVT_Rnews.pdf",
    "glmnet__Coxnet.pdf",
    "RcppArmadillo__RcppArmadillo-intro.pdf",
    "strucchange__strucchange-intro.pdf",
)
RESYNC = Goal("re-sync after one new annotation", 2.0, " s")


def read_jsonl(path: pathlib.Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def scanned_library(workdir: pathlib.Path, dpi: int) -> pathlib.Path:
    """The 38 papers with ``SCANNED`` as image-only copies (same keys, same storage paths)."""
    zotero = zf.every_paper_library(workdir / "Zotero-scanned")
    for file in SCANNED:
        stored = zotero / "storage" / zf.paper_attachment_key(file) / file
        marker = stored.with_suffix(".scanned")
        if not marker.exists():
            zf.image_only_pdf(zf.default_papers_dir() / file, stored, dpi=dpi)
            marker.touch()
    return zotero


async def synced(library: Library, *, embeddings: bool = True) -> None:
    async for _ in library.sync(follow_embedding=embeddings):
        pass


def _recalled(question: dict[str, Any], hits: list[Any]) -> int | None:
    key, pages = zf.paper_item_key(question["file"]), set(question["pages"])
    for rank, hit in enumerate(hits, 1):
        if hit.item_key == key and pages & set(range(hit.page_start, hit.page_end + 1)):
            return rank
    return None


async def recall(library: Library, questions: list[dict[str, Any]]) -> tuple[float, float]:
    ranks = []
    for q in questions:
        hits = await library.search(q["question"], k=20, rerank=True)
        ranks.append(_recalled(q, hits))
    r5 = sum(1 for r in ranks if r is not None and r <= 5) / len(ranks)
    r20 = sum(1 for r in ranks if r is not None) / len(ranks)
    return r5, r20


async def scans(args: argparse.Namespace, reranker: RerankerClient) -> list[Result]:
    questions = [q for q in read_jsonl(QUESTIONS) if q["file"] in SCANNED]
    pages = sum(len(pdfium.PdfDocument(zf.default_papers_dir() / f)) for f in SCANNED)
    print(f"\n== scanned papers: {len(SCANNED)} PDFs, {pages} pages, {len(questions)} questions")
    # The text-layer originals: the index of part 2 (the same papers, with the notes) when it
    # ran, else the 38 papers as they are.
    own = args.workdir / "Zotero-own"
    if (args.workdir / "index-own").is_dir() and own.is_dir():
        original = await open_library(args.workdir / "index-own", own, reranker)
    else:
        original = await open_library(
            args.workdir / "index-text", zf.every_paper_library(args.workdir / "Zotero"), reranker
        )
    await synced(original)
    text = await recall(original, questions)
    await original.aclose()

    zotero = scanned_library(args.workdir, dpi=200)
    index = args.workdir / "index-scanned"
    shutil.rmtree(index, ignore_errors=True)
    # OCR off until the scans' "before" is measured: the keyword phase finds them without text.
    library = await open_library(
        index, zotero, reranker, ocr=OcrSettings(dpi=args.dpi, enabled=False)
    )
    started = time.perf_counter()
    await synced(library)
    states = (await library.status())["attachment_states"]
    before = await recall(library, questions)
    ocr_started = time.perf_counter()
    library.ocr.enabled = True
    library.ocr.start()
    while not await library.ocr.wait_idle(timeout=10):
        pass
    ocr_seconds = time.perf_counter() - ocr_started
    read = library.ocr.progress().pages_done
    while not await library.embedding.wait_idle(timeout=10):
        pass
    after = await recall(library, questions)
    status = await library.status()
    await library.aclose()
    rate = read / ocr_seconds if ocr_seconds else float("nan")
    print(f"keyword phase: {states}; then OCR read {read} pages in {ocr_seconds:.0f} s")
    print(f"OCR: {rate:.3f} pages/s ({ocr_seconds / max(1, read):.1f} s a page, {args.dpi} dpi)")
    print(f"after OCR: {status['attachment_states']}, ocr_phase {status['ocr_phase']}")
    print(f"{'recall (fused + rerank)':<26}{'@5':>8}{'@20':>8}")
    for label, (r5, r20) in (
        ("scans, before OCR", before),
        ("scans, after OCR", after),
        ("text-layer originals", text),
    ):
        print(f"{label:<26}{r5:>8.3f}{r20:>8.3f}")
    print(f"(whole run {time.perf_counter() - started:.0f} s)")
    return [
        (Goal("recall@20 after OCR / text layer", 0.8, at_least=True), after[1] / text[1]),
        (Goal("recall@5 after OCR / text layer", 0.8, at_least=True), after[0] / text[0]),
    ]


def add_own_reading(zotero: pathlib.Path) -> dict[str, str]:
    """The annotations and notes of own_reading.jsonl, added once; their keys by id."""
    keys = {}
    for entry in read_jsonl(OWN):
        kind = entry["kind"]
        if kind in ("note", "standalone"):
            parent = zf.paper_item_key(entry["file"]) if kind == "note" else None
            collections = (entry["collection"],) if kind == "standalone" else ()
            keys[entry["id"]] = zf.add_note(zotero, parent, entry["html"], collections=collections)
        else:
            keys[entry["id"]] = zf.add_annotation(
                zotero,
                zf.paper_attachment_key(entry["file"]),
                text=entry.get("text", ""),
                comment=entry["comment"],
                page=entry["page"],
                annotation_type="highlight" if kind == "highlight" else "note",
            )
    return keys


async def own_reading(args: argparse.Namespace, reranker: RerankerClient) -> list[Result]:
    entries = read_jsonl(OWN)
    zotero = args.workdir / "Zotero-own"
    shutil.rmtree(zotero, ignore_errors=True)
    zf.every_paper_library(zotero)
    library = await open_library(args.workdir / "index-own", zotero, reranker)
    await synced(library)
    keys = add_own_reading(zotero)
    started = time.perf_counter()
    await synced(library, embeddings=False)
    first = time.perf_counter() - started
    while not await library.embedding.wait_idle(timeout=10):
        pass
    ranks = []
    for entry in entries:
        hits = await library.search(entry["question"], k=20, rerank=True)
        found = [i for i, h in enumerate(hits, 1) if h.source_key == keys[entry["id"]]]
        ranks.append(found[0] if found else None)
    r5 = sum(1 for r in ranks if r is not None and r <= 5) / len(ranks)
    r20 = sum(1 for r in ranks if r is not None) / len(ranks)
    print(f"\n== highlights, comments, notes: {len(entries)} written, indexed in {first:.2f} s")
    print(f"the written passage in the top 5: {r5:.3f}, top 20: {r20:.3f} (ranks {ranks})")
    resync = await one_more_annotation(library, zotero, "lme4__lmer.pdf")
    await library.aclose()
    answered = answers(args, zotero, entries, keys)
    return [
        (Goal("own passage recall@5", 1.0, at_least=True), r5),
        (Goal("answers quoting the written sentence, cited and verified", 1.0, at_least=True),
         answered),
        (RESYNC, resync),
    ]  # fmt: skip


async def one_more_annotation(library: Library, zotero: pathlib.Path, file: str) -> float:
    """Seconds from a new highlight in zotero.sqlite to its passage being searchable."""
    added = zf.add_annotation(
        zotero, zf.paper_attachment_key(file), page=2,
        text=f"A highlight added at {time.time():.0f}", comment="resynchronised quickly",
    )  # fmt: skip
    started = time.perf_counter()
    await synced(library, embeddings=False)
    hits = await library.search("resynchronised quickly", k=5, mode="keyword", kinds=["highlight"])
    seconds = time.perf_counter() - started
    assert any(h.source_key == added for h in hits), hits
    print(f"re-sync after one new highlight ({library.zotero_dir.name}): {seconds:.2f} s")
    return seconds


def answers(
    args: argparse.Namespace,
    zotero: pathlib.Path,
    entries: list[dict[str, Any]],
    keys: dict[str, str],
) -> float:
    """Each question of own_reading.jsonl through `zocrates run` (the offline model): the share
    whose answer quotes the written sentence with a verified citation of it."""
    from bench_answers import Stack, ask

    for stale in ("sessions.db", "sessions.db-wal", "sessions.db-shm"):
        (zotero / "zocrates-data" / stale).unlink(missing_ok=True)
    good = 0
    seconds = []
    log = args.workdir / "stack-own.log"
    log.unlink(missing_ok=True)  # Stack waits for "Zocrates is running" in it: not last run's
    stack = Stack(zotero, ROOT, log)
    stack.env["ZOCRATES_INDEX_DIR"] = str(args.workdir / "index-own")
    with stack, stack.client() as api:
        for entry in entries:
            session = api.post("/sessions", json={"title": entry["id"]}).json()["session"]["id"]
            started = time.perf_counter()
            done = ask(api, session, entry["question"])
            seconds.append(time.perf_counter() - started)
            quoted = normalise(entry["gold"]) in normalise(done["answer"])
            cited = [
                c
                for c in done["citations"]
                if c.get("source_key") == keys[entry["id"]] and c.get("verified") is True
            ]
            ok = quoted and bool(cited)
            good += ok
            print(
                f"  {entry['id']} {'ok  ' if ok else 'MISS'} quoted={quoted} "
                f"cited={[(c['origin'], c['verified']) for c in done['citations'] if c.get('origin')]}"
                f" {seconds[-1]:.1f} s: {entry['question']}"
            )
            if not ok and args.show:
                print("    " + done["answer"].replace("\n", "\n    ")[:1500])
    print(
        f"answers quoting the written sentence, cited and verified: {good}/{len(entries)}; "
        f"median {statistics.median(seconds):.1f} s a turn"
    )
    return good / len(entries)


async def large_resync(args: argparse.Namespace, reranker: RerankerClient) -> list[Result]:
    from bench_large_library import build_library

    zotero = build_library(args.large.resolve(), args.workdir, 0)
    index = args.workdir / "index-large"
    library = await open_library(index, zotero, reranker, embed_in_background=False)
    started = time.perf_counter()
    await synced(library, embeddings=False)  # the keyword phase (kept for the next run)
    status = await library.status()
    print(
        f"\n== large library: {status['items']} items, {status['chunks']} chunks "
        f"(sync {time.perf_counter() - started:.0f} s)"
    )
    seconds = await one_more_annotation(library, zotero, "lme4__lmer.pdf")
    again = await one_more_annotation(library, zotero, "forecast__JSS2008.pdf")
    await library.aclose()
    return [
        (Goal("re-sync after one new annotation, large library", 2.0, " s"), max(seconds, again))
    ]


async def run(args: argparse.Namespace) -> list[Result]:
    results: list[Result] = []
    with reranker_process() as address:
        reranker = RerankerClient(address, timeout=300)
        if "own" in args.parts:
            results += await own_reading(args, reranker)
        if "scans" in args.parts:
            results += await scans(args, reranker)
        if args.large is not None:
            results += await large_resync(args, reranker)
        await reranker.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workdir", required=True, type=pathlib.Path)
    parser.add_argument("--large", type=pathlib.Path, default=None, help="fetch.sh's folder")
    parser.add_argument("--dpi", type=int, default=300, help="OCR's rendering resolution")
    parser.add_argument(
        "--parts", default="own,scans", help="which parts: own, scans (comma-separated)"
    )
    parser.add_argument("--show", action="store_true", help="print the answers that miss")
    add_check_flag(parser)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    args.parts = set(args.parts.split(","))
    sys.exit(report(asyncio.run(run(args)), check=args.check))


if __name__ == "__main__":
    main()
