"""The two-phase index on real PDFs: the keyword phase makes every paper searchable before any
vector exists; the embedding phase fills the queue in the background, resumes where it
stopped, starts with the items a search is scoped to, and survives a failing embedder; hostile
files end in a clear per-item state without stopping the sync.

The embedder here stands at the model boundary (a deterministic hashing embedder that can be
held, counted and made to fail); tests/integration/test_library.py and
tests/e2e/test_embedding_resume.py run the same code with the real one.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import pathlib
import re
import signal
import sqlite3
from collections.abc import AsyncIterator

import numpy as np
import pypdf
import pytest
import pytest_asyncio

from services.library import extraction
from services.library.dense import DenseIndex
from services.library.index_store import STATE_FAILED, STATE_INDEXED, STATE_NO_TEXT
from services.library.indexer import SyncProgress
from services.library.library import INDEX_FILE, Library
from services.library.search import _fuse_with_stand_in, reciprocal_rank_fusion
from tests.support import zotero_fixture as zf

pytestmark = [pytest.mark.timeout(300)]

PAPERS = ("lme4__lmer.pdf", "sandwich__sandwich-CL.pdf", "brms__brms_multilevel.pdf")
DIM = 64


class HashingEmbedder:
    """Bag of hashed words, L2-normalised. ``hold`` blocks embedding until ``release``;
    ``fail`` makes calls raise; ``texts`` records every text embedded (not queries)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail = False
        self.batches_allowed: int | None = None

    def hold(self, batches: int | None = 0) -> None:
        self.batches_allowed = batches
        if batches == 0:
            self.gate.clear()

    def release(self) -> None:
        self.batches_allowed = None
        self.gate.set()

    async def embed(
        self, texts: list[str], *, is_query: bool = False, background: bool = False
    ) -> np.ndarray:
        if not is_query:
            await self.gate.wait()
            if self.fail:
                raise ConnectionError("the reranker is unreachable")
            self.texts.extend(texts)
            if self.batches_allowed is not None:
                self.batches_allowed -= 1
                if self.batches_allowed <= 0:
                    self.gate.clear()
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"[a-z]{3,}", text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % DIM] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)


def _blank_pdf(pages: int) -> bytes:
    writer = pypdf.PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(612, 792)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def _encrypted_pdf() -> bytes:
    writer = pypdf.PdfWriter()
    writer.add_blank_page(612, 792)
    writer.encrypt("secret")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


@pytest.fixture
def zotero_dir(tmp_path: pathlib.Path) -> pathlib.Path:
    """Three real papers plus a corrupt, an encrypted and a scanned (image-only) PDF."""
    zotero = zf.build_zotero_library(tmp_path / "Zotero", files=PAPERS)
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (hostile / "corrupt.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\ntruncated")
    (hostile / "encrypted.pdf").write_bytes(_encrypted_pdf())
    (hostile / "scanned.pdf").write_bytes(_blank_pdf(3))
    for name in ("corrupt.pdf", "encrypted.pdf", "scanned.pdf"):
        zf.add_standalone_pdf(zotero, hostile / name)
    return zotero


async def _open(
    tmp: pathlib.Path, zotero: pathlib.Path, embedder: HashingEmbedder, **kw
) -> Library:  # type: ignore[no-untyped-def]
    library = Library(
        index_dir=tmp / "index",
        zotero_dir=zotero,
        embedder=embedder,
        reranker=None,
        embedding_model=kw.pop("model", "hashing-64"),
        **kw,
    )
    await library.open()
    return library


async def _sync(library: Library, **kw: object) -> list[SyncProgress]:
    return [SyncProgress(**vars(p)) async for p in library.sync(**kw)]  # type: ignore[arg-type]


@pytest_asyncio.fixture
async def held(
    tmp_path: pathlib.Path, zotero_dir: pathlib.Path
) -> AsyncIterator[tuple[Library, HashingEmbedder]]:
    """A library whose keyword phase ran while the embedder was held."""
    embedder = HashingEmbedder()
    embedder.hold()
    library = await _open(tmp_path, zotero_dir, embedder)
    await _sync(library)
    yield library, embedder
    embedder.release()
    await library.aclose()


async def _status_chunks(tmp: pathlib.Path) -> int:
    with sqlite3.connect(tmp / "index" / INDEX_FILE) as conn:
        return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def _vectors(tmp: pathlib.Path) -> dict[int, bytes]:
    with sqlite3.connect(tmp / "index" / INDEX_FILE) as conn:
        rows = conn.execute("SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL")
        return {int(cid): bytes(blob) for cid, blob in rows}


async def test_keyword_phase_makes_every_paper_searchable_before_any_vector(held) -> None:  # type: ignore[no-untyped-def]
    library, embedder = held
    assert embedder.texts == []
    status = await library.status()
    embedding = status["embedding_phase"]
    assert embedding["chunks_total"] == status["chunks"] > 150
    assert embedding["chunks_pending"] == status["chunks"] and embedding["chunks_embedded"] == 0
    for query, paper in (
        ("clustered standard errors", "sandwich__sandwich-CL.pdf"),
        ("random effects variance components REML", "lme4__lmer.pdf"),
    ):
        for mode in ("keyword", "hybrid"):
            hits = await library.search(query, k=5, mode=mode)  # type: ignore[arg-type]
            assert hits and hits[0].item_key == zf.paper_item_key(paper), (query, mode)


async def test_hostile_files_end_in_a_state_with_a_reason_and_never_stop_the_sync(held) -> None:  # type: ignore[no-untyped-def]
    library, _ = held
    status = await library.status()
    assert status["attachment_states"] == {"indexed": 3, "no_text": 1, "failed": 2, "missing": 0}
    problems = status["problems"]
    by_file = {pathlib.Path(p["path"]).name: p for p in problems}
    assert [p["state"] for p in problems] == ["failed", "failed", "no_text"]  # worst first
    assert "encrypted" in by_file["encrypted.pdf"]["reason"]
    assert by_file["corrupt.pdf"]["reason"]
    scanned = by_file["scanned.pdf"]
    assert scanned["pages"] == 3 and scanned["pages_without_text"] == 3
    assert "OCR" in scanned["reason"]


async def test_embedding_phase_gives_every_chunk_one_vector(held, tmp_path) -> None:  # type: ignore[no-untyped-def]
    library, embedder = held
    embedder.release()
    assert await library.embedding.wait_idle(timeout=60)
    status = await library.status()
    assert status["embedding_phase"]["chunks_pending"] == 0
    assert status["embedding_phase"]["chunks_embedded"] == status["chunks"]
    assert len(_vectors(tmp_path)) == status["chunks"] == len(library.dense)
    assert len(embedder.texts) == status["chunks"], "each chunk embedded exactly once"
    assert status["embedding_dim"] == DIM


async def test_a_restart_continues_where_embedding_stopped(
    tmp_path: pathlib.Path, zotero_dir: pathlib.Path
) -> None:
    first = HashingEmbedder()
    first.hold(batches=2)  # two batches, then the agent "stops"
    library = await _open(tmp_path, zotero_dir, first)
    await _sync(library)
    for _ in range(200):
        if first.texts and len(_vectors(tmp_path)) == len(first.texts):
            break
        await asyncio.sleep(0.05)
    await library.aclose()
    before = _vectors(tmp_path)
    total = await _status_chunks(tmp_path)
    assert 0 < len(before) == len(first.texts) < total

    second = HashingEmbedder()
    library = await _open(tmp_path, zotero_dir, second)
    try:
        assert await library.embedding.wait_idle(timeout=60)
        after = _vectors(tmp_path)
        assert len(after) == total == (await library.status())["chunks"]
        assert len(second.texts) == total - len(before), "nothing embedded twice"
        assert all(after[cid] == blob for cid, blob in before.items())
        # an unchanged re-sync reads nothing again, the failed files included
        final = (await _sync(library))[-1]
        assert (final.unchanged, final.added, final.updated, final.failed) == (6, 0, 0, 0)
    finally:
        await library.aclose()


async def test_a_scoped_search_moves_its_items_to_the_front_of_the_queue(held, tmp_path) -> None:  # type: ignore[no-untyped-def]
    library, embedder = held
    brms = zf.paper_item_key("brms__brms_multilevel.pdf")
    # the brms paper's chunks come last in the queue (highest ids)
    hits = await library.search("Stan sampler priors", k=3, item_keys=[brms])
    assert hits and all(h.item_key == brms for h in hits)
    assert library.embedding.priority_items == [brms]
    embedder.hold(batches=1)
    embedder.gate.set()
    for _ in range(200):
        if _vectors(tmp_path):
            break
        await asyncio.sleep(0.05)
    with sqlite3.connect(tmp_path / "index" / INDEX_FILE) as conn:
        items = {
            r[0] for r in conn.execute("SELECT item_key FROM chunks WHERE embedding IS NOT NULL")
        }
    assert items == {brms}


async def test_an_unreachable_embedder_stalls_the_phase_with_a_reason_then_it_recovers(
    held,
) -> None:  # type: ignore[no-untyped-def]
    library, embedder = held
    embedder.fail = True
    embedder.release()
    for _ in range(100):
        if library.embedding.progress().error:
            break
        await asyncio.sleep(0.05)
    progress = library.embedding.progress()
    assert "unreachable" in progress.error and progress.chunks_pending > 0
    embedder.fail = False
    assert await library.embedding.wait_idle(timeout=60)
    assert library.embedding.progress().error == ""
    assert library.embedding.progress().chunks_pending == 0


async def test_bulk_embedding_waits_for_the_keyword_phase_to_finish(
    tmp_path: pathlib.Path, zotero_dir: pathlib.Path
) -> None:
    embedder = HashingEmbedder()  # not held: only the queue's own rule keeps it waiting
    library = await _open(tmp_path, zotero_dir, embedder)
    try:
        seen_during_sync = []
        async for progress in library.sync():
            seen_during_sync.append(len(embedder.texts))
            if progress.phase == "indexing" and progress.items_done:
                assert library.embedding.progress().running is False
        assert set(seen_during_sync) == {0}, "nothing embedded while the keyword phase ran"
        assert await library.embedding.wait_idle(timeout=60)
        assert len(embedder.texts) == (await library.status())["chunks"]
    finally:
        await library.aclose()


async def test_the_keyword_phase_ending_while_the_queue_looks_does_not_strand_it(
    tmp_path: pathlib.Path, zotero_dir: pathlib.Path
) -> None:
    """The hold is lifted between the queue's look (held: nothing to do) and its decision
    to rest: it must not declare itself idle with chunks still pending."""
    library = await _open(tmp_path, zotero_dir, HashingEmbedder(), embed_in_background=False)
    try:
        await _sync(library)
        looks = iter([True])  # held at the first look, free from then on
        library.embedding.hold_bulk = lambda: next(looks, False)
        library.embedding.start()
        assert await library.embedding.wait_idle(timeout=30)
        assert library.embedding.progress().chunks_pending == 0
        assert len(_vectors(tmp_path)) == (await library.status())["chunks"]
    finally:
        await library.aclose()


async def test_a_keyword_phase_cut_off_resumes_when_the_agent_starts_again(
    tmp_path: pathlib.Path, zotero_dir: pathlib.Path
) -> None:
    embedder = HashingEmbedder()
    embedder.hold()
    library = await _open(tmp_path, zotero_dir, embedder)
    stream = library.sync()
    async for progress in stream:
        if progress.items_done >= 2:
            break  # the agent dies here: the stream (and the keyword phase) are cut off
    await stream.aclose()  # type: ignore[attr-defined]
    written = (await library.status())["attachment_states"]
    assert 2 <= sum(written.values()) < 6
    assert library.indexer.interrupted_sync() == zotero_dir
    await library.aclose()

    library = await _open(tmp_path, zotero_dir, HashingEmbedder())
    try:
        assert library._resume is not None
        await asyncio.wait_for(library._resume, timeout=120)
        status = await library.status()
        assert status["attachment_states"] == {
            "indexed": 3,
            "no_text": 1,
            "failed": 2,
            "missing": 0,
        }
        assert library.indexer.interrupted_sync() is None
        final = (await _sync(library))[-1]
        assert final.unchanged == 6 and final.added == 0
    finally:
        await library.aclose()


async def test_sync_can_follow_the_embedding_phase_to_the_end(
    tmp_path: pathlib.Path, zotero_dir: pathlib.Path
) -> None:
    library = await _open(tmp_path, zotero_dir, HashingEmbedder())
    try:
        progress = await _sync(library, follow_embedding=True)
        phases = [p.phase for p in progress]
        assert phases[0] == "scanning" and phases[-1] == "done"
        assert phases.index("searchable") < len(phases) - 1
        assert set(phases) <= {"scanning", "indexing", "searchable", "embedding", "done"}
        assert progress[-1].embedding["chunks_pending"] == 0
        assert progress[-1].embedding["chunks_embedded"] == progress[-1].embedding["chunks_total"]
        assert progress[-1].no_text == 1 and progress[-1].failed == 2
    finally:
        await library.aclose()


async def test_another_embedding_model_recomputes_the_vectors_and_keeps_the_text(
    tmp_path: pathlib.Path, zotero_dir: pathlib.Path
) -> None:
    library = await _open(tmp_path, zotero_dir, HashingEmbedder())
    await _sync(library, follow_embedding=True)
    chunks = (await library.status())["chunks"]
    await library.aclose()
    second = HashingEmbedder()
    second.hold()
    library = await _open(tmp_path, zotero_dir, second, model="hashing-64-v2")
    try:
        status = await library.status()
        assert status["chunks"] == chunks and status["embedding_phase"]["chunks_pending"] == chunks
        hits = await library.search("clustered standard errors", k=3)
        assert hits, "keyword search works while the new vectors are computed"
        second.release()
        assert await library.embedding.wait_idle(timeout=60)
        assert len(second.texts) == chunks
    finally:
        await library.aclose()


PAPER_QUERIES = {
    "lme4__lmer.pdf": "penalized least squares for linear mixed models",
    "sandwich__sandwich-CL.pdf": "clustered covariance and clustered standard errors",
    "brms__brms_multilevel.pdf": "Bayesian multilevel models in Stan",
}
QUERIES = (*PAPER_QUERIES.values(), "random effects variance components")


async def _answers(library: Library) -> list[list[tuple[str, int, int]]]:
    return [
        [(h.item_key, h.page_start, h.chunk_id) for h in await library.search(q, k=8)]
        for q in QUERIES
    ]


async def test_past_the_threshold_search_goes_through_the_saved_graph(
    tmp_path: pathlib.Path, zotero_dir: pathlib.Path
) -> None:
    """The graph's answers are exact search's; the next start reuses the saved graph; a paper
    re-indexed (its chunks replaced, under reused ids) is found through it afterwards."""
    library = await _open(tmp_path, zotero_dir, HashingEmbedder(), vector_graph_from=50)
    try:
        await _sync(library, follow_embedding=True)
        assert await asyncio.to_thread(library.dense.wait_built, 60)
        chunks = (await library.status())["chunks"]
        stats = library.dense.stats()
        # The first 50 built the graph; later vectors wait in the exact tail for a batch.
        assert stats["uses_graph"] and stats["graph"] >= 50
        assert stats["graph"] + stats["tail"] == chunks
        through_graph = await _answers(library)
    finally:
        await library.aclose()
    assert (tmp_path / "index" / "vectors.usearch").exists()

    exact = await _open(tmp_path, zotero_dir, HashingEmbedder(), vector_graph_from=10**9)
    try:
        assert not exact.dense.uses_graph
        assert await _answers(exact) == through_graph
    finally:
        await exact.aclose()
    assert not (tmp_path / "index" / "vectors.usearch").exists()  # exact: the graph is gone

    library = await _open(tmp_path, zotero_dir, HashingEmbedder(), vector_graph_from=50)
    try:
        assert await asyncio.to_thread(library.dense.wait_built, 60)
        assert await _answers(library) == through_graph
        await library.aclose()
        library = await _open(tmp_path, zotero_dir, HashingEmbedder(), vector_graph_from=50)
        assert library.dense.stats()["waiting"] == 0, "the saved graph was reused"
        # Re-index the paper that holds the highest chunk ids: SQLite hands its new chunks
        # the same ids, so the saved graph's vectors for them are stale until checked.
        with sqlite3.connect(tmp_path / "index" / INDEX_FILE) as conn:
            last_item = conn.execute("SELECT item_key FROM chunks ORDER BY id DESC").fetchone()[0]
        paper = next(f for f in PAPERS if zf.paper_item_key(f) == last_item)
        before = _vectors(tmp_path)
        zf.touch_attachment(zotero_dir, last_item)
        final = (await _sync(library, follow_embedding=True))[-1]
        assert final.updated == 1
        assert await asyncio.to_thread(library.dense.wait_built, 60)
        after = _vectors(tmp_path)
        assert set(after) & set(before), "chunk ids were reused"
        exact_dense = DenseIndex(ann_from=10**9)
        exact_dense.load(library.store)
        query = PAPER_QUERIES[paper]
        vector = (await HashingEmbedder().embed([query], is_query=True))[0]
        assert library.dense.search(vector, limit=10, item_keys=None) == exact_dense.search(
            vector, limit=10, item_keys=None
        )
        hits = await library.search(query, k=5)
        assert hits[0].item_key == last_item
        assert {h.chunk_id for h in hits} <= set(after)
    finally:
        await library.aclose()


def test_fusion_lets_a_chunk_without_a_vector_compete_on_its_keyword_rank() -> None:
    keyword, dense = [1, 2, 3], [2, 1, 4]
    plain = dict(reciprocal_rank_fusion([keyword, dense]))
    fused = dict(_fuse_with_stand_in(keyword, dense, waiting={3}))
    assert fused[1] == plain[1] and fused[2] == plain[2] and fused[4] == plain[4]
    assert fused[3] == pytest.approx(2 * plain[3])
    assert [cid for cid, _ in _fuse_with_stand_in(keyword, dense, {3})].index(3) < 3


# ---- the extraction pool: crashes and hangs cost one worker, not the sync ----


def _long_pdf(path: pathlib.Path, copies: int) -> pathlib.Path:
    """A real paper repeated ``copies`` times: a long document that takes a while to read."""
    writer = pypdf.PdfWriter()
    for _ in range(copies):
        writer.append(str(zf.default_papers_dir() / "lme4__lmer.pdf"))
    with path.open("wb") as fh:
        writer.write(fh)
    return path


async def test_a_file_that_takes_too_long_and_a_crashing_worker_cost_that_file_only(
    tmp_path: pathlib.Path,
) -> None:
    good = zf.default_papers_dir() / "sandwich__sandwich-CL.pdf"
    long = _long_pdf(tmp_path / "long.pdf", 12)
    pool = extraction.ExtractorPool(1)
    try:
        warm = dict([r async for r in pool.map([extraction.Job("pdf", str(good))])])
        assert warm[0].state == STATE_INDEXED

        pool.timeout = 0.05  # a reader stuck in a file: stopped, the next file goes on
        jobs = [extraction.Job("pdf", str(long))]
        results = dict([r async for r in pool.map(jobs)])
        assert results[0].state == STATE_FAILED and "took longer than" in (results[0].error or "")
        assert pool.busy_pids() == [] and pool._idle == []  # that worker is gone
        pool.timeout = 120.0

        # a worker killed mid-file (as a PDFium crash would) fails that file only
        async def kill_soon() -> None:
            for _ in range(200):
                await asyncio.sleep(0.05)
                if pool.busy_pids():
                    await asyncio.sleep(0.5)  # the job is in the worker's hands
                    os.kill(pool.busy_pids()[0], signal.SIGKILL)
                    return

        killer = asyncio.create_task(kill_soon())
        crashed = dict([r async for r in pool.map(jobs)])
        await killer
        assert crashed[0].state == STATE_FAILED and "crashed" in (crashed[0].error or "")
        again = dict([r async for r in pool.map([extraction.Job("pdf", str(good))])])
        assert again[0].state == STATE_INDEXED and again[0].chunks

        # a worker that died while idle is replaced; its next file is not blamed
        (idle,) = pool._idle
        os.kill(idle.process.pid, signal.SIGKILL)
        idle.process.join(timeout=5)
        after = dict([r async for r in pool.map([extraction.Job("pdf", str(good))])])
        assert after[0].state == STATE_INDEXED and after[0].chunks
    finally:
        pool.close()
    assert pool.busy_pids() == []


def test_a_pdf_without_a_text_layer_is_reported_for_ocr(tmp_path: pathlib.Path) -> None:
    scanned = tmp_path / "scanned.pdf"
    scanned.write_bytes(_blank_pdf(2))
    result = extraction.extract(extraction.Job("pdf", str(scanned)))
    assert result.state == STATE_NO_TEXT and result.empty_pages == 2 and not result.chunks


async def test_extraction_workers_yield_the_cpu_to_research_turns() -> None:
    """The keyword phase's workers run niced: on a busy machine a turn's cross-encoder and the
    agent go first, while an idle core is still theirs."""
    good = zf.default_papers_dir() / "sandwich__sandwich-CL.pdf"
    pool = extraction.ExtractorPool(1)
    try:
        done = dict([r async for r in pool.map([extraction.Job("pdf", str(good))])])
        assert done[0].state == STATE_INDEXED
        (worker,) = pool._idle  # kept for the next file
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, worker.process.pid) == min(
            19, mine + extraction.WORKER_NICENESS
        )
    finally:
        pool.close()
