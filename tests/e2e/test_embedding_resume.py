"""The embedding phase survives `kill -9` of the library service: the real reranker and
library service as processes, four real papers; the keyword phase ends, the library service is
SIGKILLed while it embeds, and a restarted one continues from the queue on disk without
embedding any stored chunk again (counted by the reranker's own metrics)."""

from __future__ import annotations

import asyncio
import pathlib
import re
import sqlite3
import time

import httpx
import pytest

from services.common import ports
from services.library.client import LibraryClient
from services.library.library import INDEX_FILE
from tests.support import zotero_fixture as zf
from tests.support.ports import free_base_port
from tests.support.processes import spawn, stop, wait_http

PAPERS = (
    "lme4__lmer.pdf",
    "brms__brms_multilevel.pdf",
    "sandwich__sandwich-CL.pdf",
    "ordinal__clm_article.pdf",
)
BATCH = 64  # the embedding queue's batch: at most one batch was in flight at the kill

# Four papers (about 500 passages) embedded by the real model on 2 cores: a few minutes.
pytestmark = pytest.mark.timeout(900)


def _embedded_texts(metrics_url: str) -> float:
    """Texts the reranker has embedded so far (its batcher's item count)."""
    text = httpx.get(metrics_url, timeout=5).text
    found = re.findall(
        r'^zocrates_reranker_batch_items_sum\{batcher="embed\w*"\} (\S+)$', text, re.M
    )
    return sum(float(n) for n in found)


def _vectors(index: pathlib.Path) -> dict[int, bytes]:
    with sqlite3.connect(index) as conn:
        rows = conn.execute("SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL")
        return {int(cid): bytes(blob) for cid, blob in rows}


async def _status(address: str) -> dict:  # type: ignore[type-arg]
    client = LibraryClient(address, timeout=10)
    try:
        return await client.status()
    finally:
        await client.close()


async def _sync(address: str) -> dict:  # type: ignore[type-arg]
    client = LibraryClient(address, timeout=10)
    try:
        last: dict = {}  # type: ignore[type-arg]
        async for progress in client.sync():
            last = progress
        return last
    finally:
        await client.close()


def test_kill_9_of_the_library_mid_embedding_then_a_restart_continues(
    tmp_path: pathlib.Path,
) -> None:
    zotero_dir = zf.build_zotero_library(tmp_path / "Zotero", files=PAPERS)
    base = free_base_port()
    env = {
        "ZOCRATES_ZOTERO_DIR": str(zotero_dir),
        "ZOCRATES_PORT": str(base),
        "ZOCRATES_RERANKER_ADDR": f"127.0.0.1:{ports.service_port(base, 'reranker')}",
    }
    library_addr = f"127.0.0.1:{ports.service_port(base, 'library')}"
    library_health = f"http://127.0.0.1:{ports.admin_port(base, 'library')}/healthz"
    reranker_admin = f"http://127.0.0.1:{ports.admin_port(base, 'reranker')}"
    index = zotero_dir / "zocrates-data" / "library" / INDEX_FILE
    log = tmp_path / "services.log"
    reranker = spawn("services.reranker", env, log=log)
    library = None
    try:
        wait_http(f"{reranker_admin}/readyz", proc=reranker, timeout=120)
        library = spawn("services.library", env, log=log)
        wait_http(library_health, proc=library, timeout=120)

        done = asyncio.run(_sync(library_addr))
        assert done["phase"] == "done" and done["added"] == len(PAPERS), done
        status = asyncio.run(_status(library_addr))
        total = status["chunks"]
        assert status["items"] == len(PAPERS) and total > 4 * BATCH

        # SIGKILL while the embedding phase is part way
        deadline = time.monotonic() + 240
        while True:
            embedded = len(_vectors(index))
            if BATCH <= embedded <= total - 2 * BATCH:
                break
            assert embedded < total - 2 * BATCH, "embedding finished before the kill"
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.05)
        library.kill()
        library.wait()
        before = _vectors(index)
        texts_before = _embedded_texts(f"{reranker_admin}/metrics")
        assert 0 < len(before) < total

        library = spawn("services.library", env, log=log)
        wait_http(library_health, proc=library, timeout=120)
        deadline = time.monotonic() + 300
        while (status := asyncio.run(_status(library_addr)))["embedding_phase"]["chunks_pending"]:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        after = _vectors(index)
        assert len(after) == total == status["embedding_phase"]["chunks_embedded"]
        assert all(after[cid] == blob for cid, blob in before.items()), "stored vectors kept"
        again = _embedded_texts(f"{reranker_admin}/metrics") - texts_before
        # what was left, plus at most the batch that was in flight at the kill
        assert total - len(before) <= again <= total - len(before) + BATCH, (again, total)
        # and search uses them: the dense mode answers from the restarted library service
        hits = asyncio.run(_search(library_addr, "derivative-free optimizer for mixed models"))
        assert hits and hits[0]["item_key"] == zf.paper_item_key("lme4__lmer.pdf")
    finally:
        if library is not None:
            stop(library)
        stop(reranker)


async def _search(address: str, query: str) -> list[dict]:  # type: ignore[type-arg]
    client = LibraryClient(address, timeout=30)
    try:
        hits, _ = await client.search(query, k=3, mode="dense")
        return hits
    finally:
        await client.close()


def test_the_reranker_killed_mid_embedding_then_back_the_phase_finishes(
    tmp_path: pathlib.Path,
) -> None:
    """SIGKILL of the embedder's process (the reranker service) part way through the embedding
    phase: the library service keeps its keyword index serving, waits, and once the reranker is
    back the phase finishes every chunk; nothing is lost or embedded into a broken state."""
    papers = PAPERS
    zotero_dir = zf.build_zotero_library(tmp_path / "Zotero", files=papers)
    base = free_base_port()
    env = {
        "ZOCRATES_ZOTERO_DIR": str(zotero_dir),
        "ZOCRATES_PORT": str(base),
        "ZOCRATES_RERANKER_ADDR": f"127.0.0.1:{ports.service_port(base, 'reranker')}",
    }
    library_addr = f"127.0.0.1:{ports.service_port(base, 'library')}"
    library_health = f"http://127.0.0.1:{ports.admin_port(base, 'library')}/healthz"
    reranker_ready = f"http://127.0.0.1:{ports.admin_port(base, 'reranker')}/readyz"
    index = zotero_dir / "zocrates-data" / "library" / INDEX_FILE
    log = tmp_path / "services.log"
    reranker = spawn("services.reranker", env, log=log)
    library = None
    try:
        wait_http(reranker_ready, proc=reranker, timeout=120)
        library = spawn("services.library", env, log=log)
        wait_http(library_health, proc=library, timeout=120)
        done = asyncio.run(_sync(library_addr))
        assert done["phase"] == "done" and done["added"] == len(papers), done
        total = asyncio.run(_status(library_addr))["chunks"]
        assert total > 4 * BATCH

        deadline = time.monotonic() + 240
        while not BATCH <= len(_vectors(index)) <= total - 2 * BATCH:
            assert len(_vectors(index)) < total - 2 * BATCH, "embedding finished before the kill"
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.05)
        reranker.kill()
        reranker.wait()
        time.sleep(3.0)  # the library meets the dead embedder and backs off
        stalled = len(_vectors(index))
        assert stalled < total
        # The library still answers, by keywords, while the embedder is away.
        hits = asyncio.run(_search_mode(library_addr, "derivative-free optimizer", "keyword"))
        assert hits, "the keyword index serves while the embedder is down"
        assert asyncio.run(_status(library_addr))["embedding_phase"]["chunks_pending"] > 0

        reranker = spawn("services.reranker", env, log=log)
        wait_http(reranker_ready, proc=reranker, timeout=120)
        deadline = time.monotonic() + 300
        while (status := asyncio.run(_status(library_addr)))["embedding_phase"]["chunks_pending"]:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        assert len(_vectors(index)) == total == status["embedding_phase"]["chunks_embedded"]
        assert "retrying" in log.read_text()  # it waited for the embedder, it did not give up
    finally:
        if library is not None:
            stop(library)
        stop(reranker)


async def _search_mode(address: str, query: str, mode: str) -> list[dict]:  # type: ignore[type-arg]
    client = LibraryClient(address, timeout=30)
    try:
        hits, _ = await client.search(query, k=3, mode=mode)
        return hits
    finally:
        await client.close()
