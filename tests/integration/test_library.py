"""The library index end to end on the real 38 papers: Zotero-shaped library -> sync with
progress -> hybrid search (embeddings through the real reranker service over gRPC) -> the
research tools. Incremental behaviour is checked on a small library of its own."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from services.common.errors import InvalidArgument, NotFound
from services.library.indexer import SyncProgress
from services.library.library import Library
from services.library.pdf_text import pdf_page_count
from services.reranker.client import RerankerClient
from tests.support import zotero_fixture as zf
from tests.support.stack import research_tools_over_grpc, running_reranker

# The first full index of the 38 papers takes about 100 s on 2 cores.
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(900)]

QUESTIONS = (
    pathlib.Path(__file__).resolve().parents[2] / "bench" / "data" / "retrieval_questions.jsonl"
)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def reranker() -> AsyncIterator[RerankerClient]:
    async with running_reranker() as server:
        client = RerankerClient(server.runtime.address, timeout=120)
        yield client
        await client.close()


async def _library(
    tmp: pathlib.Path, zotero_dir: pathlib.Path, reranker: RerankerClient
) -> Library:
    models = await reranker.models()
    library = Library(
        index_dir=tmp / "index",
        zotero_dir=zotero_dir,
        embedder=reranker,
        reranker=reranker,
        embedding_model=str(models["embedding_model"]),
    )
    await library.open()
    return library


async def _sync(library: Library, **kwargs: object) -> list[SyncProgress]:
    kwargs.setdefault("follow_embedding", True)
    return [SyncProgress(**vars(p)) async for p in library.sync(**kwargs)]  # type: ignore[arg-type]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def full(
    tmp_path_factory: pytest.TempPathFactory, reranker: RerankerClient
) -> AsyncIterator[tuple[Library, list[SyncProgress], pathlib.Path]]:
    tmp = tmp_path_factory.mktemp("full")
    zotero_dir = zf.build_zotero_library(tmp / "Zotero")
    library = await _library(tmp, zotero_dir, reranker)
    progress = await _sync(library)
    yield library, progress, zotero_dir
    await library.aclose()


def _key(file: str) -> str:
    return zf.paper_item_key(file)


async def test_first_sync_reports_progress_and_indexes_every_untrashed_paper(full) -> None:  # type: ignore[no-untyped-def]
    library, progress, _ = full
    papers = zf.read_manifest()
    trashed = [p for p in papers if p.file.startswith("zoo__")]
    expected_pages = sum(
        pdf_page_count(zf.default_papers_dir() / p.file) for p in papers if p not in trashed
    )
    assert progress[0].phase == "scanning"
    indexing = [p for p in progress if p.phase == "indexing"]
    assert indexing[0].items_total == len(papers) - len(trashed) == 37
    assert indexing[0].pages_total == expected_pages
    done = [p.pages_done for p in indexing]
    assert done == sorted(done) and done[-1] == expected_pages
    assert all(p.pages_per_second > 0 for p in indexing[1:])
    final = progress[-1]
    assert (final.phase, final.added, final.failed, final.removed) == ("done", 37, 0, 0)
    status = await library.status()
    assert status["items"] == 37 and status["pages"] == expected_pages and status["chunks"] > 1500
    assert status["embedding_dim"] == 384


async def test_paraphrased_question_finds_the_right_page(full) -> None:  # type: ignore[no-untyped-def]
    library, _, _ = full
    hits = await library.search(
        "Which derivative-free optimizer is used by default when fitting linear mixed models?", k=5
    )
    assert any(h.item_key == _key("lme4__lmer.pdf") for h in hits), [
        (h.title, h.page_start) for h in hits
    ]


# recall@20 of the 52 evaluation questions on this library (the zoo paper in the trash, so its
# two questions cannot be found; one question is 0.019), measured 2026-12 with bge-small:
# keyword 0.865, dense 0.865, hybrid 0.923. Each floor is about 0.05 (three questions) below.
RECALL_FLOORS = {"keyword": 0.81, "dense": 0.81, "hybrid": 0.87}


@pytest.mark.parametrize("mode", sorted(RECALL_FLOORS))
async def test_search_recalls_the_evaluation_questions(full, mode: str) -> None:  # type: ignore[no-untyped-def]
    library, _, _ = full
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    found = 0
    for q in questions:
        hits = await library.search(q["question"], k=20, mode=mode)  # type: ignore[arg-type]
        pages = set(q["pages"])
        if any(
            h.item_key == _key(q["file"]) and pages & set(range(h.page_start, h.page_end + 1))
            for h in hits
        ):
            found += 1
    recall = found / len(questions)
    assert recall >= RECALL_FLOORS[mode], f"{mode} recall@20 {recall:.3f}"


async def test_scoped_search_stays_in_scope(full) -> None:  # type: ignore[no-untyped-def]
    library, _, _ = full
    mixed = zf.collection_key("Mixed models")
    snapshot_keys = {
        _key(f)
        for f in (
            "lme4__lmer.pdf",
            "brms__brms_overview.pdf",
            "brms__brms_multilevel.pdf",
            "ordinal__clm_article.pdf",
        )
    }
    hits = await library.search(
        "robust standard errors for clustered data", k=20, collection_key=mixed
    )
    assert hits and {h.item_key for h in hits} <= snapshot_keys
    only = _key("sandwich__sandwich-CL.pdf")
    hits = await library.search("model fitting", k=10, item_keys=[only])
    assert hits and {h.item_key for h in hits} == {only}
    with pytest.raises(NotFound) as err:
        await library.search("anything", collection_key="NOPE1234")
    assert err.value.code == "collection_not_found"
    with pytest.raises(InvalidArgument):
        await library.search("   ")
    keyword = await library.search("BOBYQA", k=3, mode="keyword")
    assert keyword and keyword[0].item_key == _key("lme4__lmer.pdf")


async def test_research_tools(full) -> None:  # type: ignore[no-untyped-def]
    library, _, _ = full
    async with research_tools_over_grpc(library) as tools:
        search_corpus, get_document_toc, read_document = tools
        assert [t.__name__ for t in (search_corpus, get_document_toc, read_document)] == [
            "search_corpus",
            "get_document_toc",
            "read_document",
        ]
        result = await search_corpus("cumulative link models for ordinal responses", k=3)
        assert result["status"] == "success" and len(result["results"]) == 3
        first = result["results"][0]
        assert set(first) >= {
            "item_key",
            "title",
            "authors",
            "year",
            "page",
            "section",
            "score",
            "word_count",
            "text",
        }
        json.dumps(result)

        lme4 = _key("lme4__lmer.pdf")
        toc = await get_document_toc(lme4)
        assert toc["status"] == "success" and len(toc["sections"]) >= 5 and toc["page_count"] > 30
        section = toc["sections"][1]
        read = await read_document(lme4, section=section["title"])
        assert (
            read["status"] == "success"
            and read["start_page"] == section["page"]
            and read["word_count"] > 100
        )
        pages = await read_document(lme4, start_page=2, end_page=3)
        assert [p["page"] for p in pages["pages"]] == [2, 3]
        capped = await read_document(lme4, start_page=1, end_page=40)
        assert len(capped["pages"]) == 12
        assert (await read_document(lme4, start_page=999))["code"] == "invalid_pages"
        assert (await read_document(lme4, section="no such section"))["code"] == "section_not_found"
        assert (await get_document_toc("NOPE1234"))["code"] == "item_not_found"
        scoped = await search_corpus("optimizer", scope=[lme4], k=5)
        assert {r["item_key"] for r in scoped["results"]} == {lme4}


async def test_unchanged_resync_skips_everything(full) -> None:  # type: ignore[no-untyped-def]
    library, _, _ = full
    progress = await _sync(library)
    final = progress[-1]
    assert (final.added, final.updated, final.removed, final.failed, final.unchanged) == (
        0,
        0,
        0,
        0,
        37,
    )
    # How fast (under 5 s): bench/bench_indexing.py --check.


# ---- incremental behaviour on a small library ----


@pytest_asyncio.fixture(loop_scope="module")
async def small(
    tmp_path: pathlib.Path, reranker: RerankerClient
) -> AsyncIterator[tuple[Library, pathlib.Path]]:
    zotero_dir = zf.build_zotero_library(tmp_path / "Zotero", limit=5)
    library = await _library(tmp_path, zotero_dir, reranker)
    first = await _sync(library)
    assert first[-1].added == 5
    yield library, zotero_dir
    await library.aclose()


def _small_keys() -> list[str]:
    return [_key(p.file) for p in zf.read_manifest()[:5]]


async def test_changed_attachment_is_reindexed_and_touched_one_is_not(small) -> None:  # type: ignore[no-untyped-def]
    library, zotero_dir = small
    keys = _small_keys()
    zf.touch_attachment(zotero_dir, keys[0])  # new bytes
    pdf = next(
        (zotero_dir / "storage" / zf.paper_attachment_key(zf.read_manifest()[1].file)).glob("*.pdf")
    )
    os.utime(pdf, ns=(pdf.stat().st_atime_ns, pdf.stat().st_mtime_ns + 10**9))  # mtime only
    final = (await _sync(library))[-1]
    assert (final.updated, final.unchanged, final.added) == (1, 4, 0)


async def test_trashed_item_disappears_from_results(small) -> None:  # type: ignore[no-untyped-def]
    library, zotero_dir = small
    gone = _small_keys()[0]
    title = library.store.item(gone)["title"]
    assert any(h.item_key == gone for h in await library.search(title, k=10))
    zf.trash_item(zotero_dir, gone)
    final = (await _sync(library))[-1]
    assert final.removed == 1
    assert all(h.item_key != gone for h in await library.search(title, k=20))
    assert library.store.item(gone) is None


async def test_missing_pdf_falls_back_to_the_fulltext_cache(small) -> None:  # type: ignore[no-untyped-def]
    library, zotero_dir = small
    with_cache, without = _small_keys()[1], _small_keys()[2]
    zf.write_ft_cache(
        zotero_dir, with_cache, "Zebrafish husbandry protocols\fPage two on aquarium filtration"
    )
    zf.remove_attachment_file(zotero_dir, with_cache)
    zf.remove_attachment_file(zotero_dir, without)
    await _sync(library)
    hits = await library.search("zebrafish aquarium filtration", k=3, mode="keyword")
    assert hits and hits[0].item_key == with_cache
    assert all(h.item_key != without for h in await library.search("model", k=50))
    status = await library.status()
    assert status["attachments"] == 4


async def test_a_corrupt_pdf_fails_alone(small) -> None:  # type: ignore[no-untyped-def]
    library, zotero_dir = small
    broken = _small_keys()[3]
    pdf = next(
        (zotero_dir / "storage" / zf.paper_attachment_key(zf.read_manifest()[3].file)).glob("*.pdf")
    )
    pdf.write_bytes(b"%PDF-1.4 this is not a pdf")
    final = (await _sync(library))[-1]
    assert (final.failed, final.unchanged) == (1, 4)
    assert all(h.item_key != broken for h in await library.search("model", k=50))
    shutil.copyfile(zf.default_papers_dir() / zf.read_manifest()[3].file, pdf)
    again = (await _sync(library))[-1]
    assert (again.failed, again.updated) == (0, 1)  # retried once it is readable again
