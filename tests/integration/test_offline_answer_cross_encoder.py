"""The offline synthesizer with the real cross-encoder over gRPC, on real pages: the sentence
that answers leads the answer, cited to its own page, and a question the papers do not answer
gets no citation."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.agent.research import offline_answer as oa
from services.agent.research import offline_sentences as sents
from services.library import chunking
from services.library.pdf_text import extract_pages
from services.reranker.client import RerankerClient
from services.reranker.models import CrossEncoder, Embedder
from tests.support.stack import running_reranker
from tests.support.zotero_fixture import default_papers_dir

ARIMA = (
    "When an ARIMA model is selected automatically for a seasonal series, how is the number "
    "of non-seasonal differences d chosen?"
)


@pytest.fixture
async def client(cross_encoder: CrossEncoder, embedder: Embedder) -> AsyncIterator[RerankerClient]:
    async with running_reranker(
        load_reranker=lambda: cross_encoder, load_embedder=lambda: embedder
    ) as server:
        client = RerankerClient(server.runtime.address)
        yield client
        await client.close()


def _forecast_blocks(first: int, last: int) -> tuple[list[sents.Block], dict[int, str]]:
    """The forecast paper's chunks that touch pages ``first``-``last``, as evidence blocks."""
    pages = extract_pages(default_papers_dir() / "forecast__JSS2008.pdf")
    chunks = [
        c
        for c in chunking.chunk_document(pages, [])
        if c.page_end >= first and c.page_start <= last
    ]
    blocks = [
        sents.Block(
            n,
            "Hyndman & Khandakar (2008)",
            "Automatic Time Series Forecasting",
            "FCST",
            c.page_start,
            c.page_end,
            c.text,
        )
        for n, c in enumerate(chunks, 1)
    ]
    return blocks, {i + 1: text for i, text in enumerate(pages)}


async def test_the_kpss_sentence_answers_the_arima_question(client: RerankerClient) -> None:
    blocks, pages = _forecast_blocks(8, 11)

    async def read_pages(key: str, first: int, last: int) -> dict[int, str]:
        assert key == "FCST"
        return {p: pages[p] for p in range(first, last + 1)}

    answer = await oa.compose_answer(
        ARIMA, blocks, [], oa.scorer_from_reranker(client), notice="*offline*",
        read_pages=read_pages,
    )  # fmt: skip
    lead = answer.splitlines()[2]
    first_quote = lead.split('" [', 1)[0]
    assert "KPSS" in first_quote, answer
    assert lead.split('" [', 1)[1].split("]", 1)[0].endswith("p. 10"), lead
    sentences = [line for line in answer.splitlines() if line.startswith(('"', '- "'))]
    quoted = [q for line in sentences for q in line.split('"')[1::2]]
    assert len(quoted) == len(set(quoted)), "a sentence quoted twice"


async def test_an_unrelated_question_is_not_answered_from_weak_passages(
    client: RerankerClient,
) -> None:
    blocks, _ = _forecast_blocks(8, 11)
    answer = await oa.compose_answer(
        "How does AlphaFold predict the structure of a protein from its sequence?",
        blocks,
        [],
        oa.scorer_from_reranker(client),
        notice="*offline*",
    )
    assert "Your library has no evidence on this" in answer
    assert "# Cited Sources" not in answer
