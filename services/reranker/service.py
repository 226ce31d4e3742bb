"""The reranker service's domain facade: validation, dynamic batching, ranking and trimming.

Models load once, in a thread, after the service is already reachable; until then calls fail
with ``Unavailable`` (``models_loading``). Both models share one inference thread, so their
calls never compete for the CPU cores that each call already uses in parallel.

Rerank scores are kept by (query, text) in a bounded LRU (:class:`ScoreCache`): a turn resumed
after its checkpoint, a follow-up on the same evidence, a second part of a question scoring
the same sentence against the same words, all pay for a pair once. A pair's score does not
depend on the other pairs of its call (``onnx_micro_batch`` 1, the default), so a cached score
is the score the model would give again.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from prometheus_client import Counter

from services.common.errors import InvalidArgument, Unavailable
from services.common.metrics import REGISTRY
from services.reranker.batching import DynamicBatcher
from services.reranker.models import CrossEncoder, Embedder

logger = logging.getLogger(__name__)

MAX_CANDIDATES = 1024
MAX_TEXTS = 512

CACHE_LOOKUPS = Counter(
    "zocrates_reranker_cache_lookups_total",
    "Rerank pairs looked up in the score cache, by result (hit, miss).",
    ["result"],
    registry=REGISTRY,
)


class ScoreCache:
    """Cross-encoder scores by (query, text), the ``capacity`` most recently used (0: none).
    Keys are digests: the cache holds no text. Used from the event loop only."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._scores: collections.OrderedDict[bytes, float] = collections.OrderedDict()

    @staticmethod
    def key(query: str, text: str) -> bytes:
        return hashlib.blake2b(f"{query}\x00{text}".encode(), digest_size=16).digest()

    def get(self, key: bytes) -> float | None:
        score = self._scores.get(key)
        if score is not None:
            self._scores.move_to_end(key)
        return score

    def put(self, key: bytes, score: float) -> None:
        if self.capacity <= 0:
            return
        self._scores[key] = score
        self._scores.move_to_end(key)
        while len(self._scores) > self.capacity:
            self._scores.popitem(last=False)

    def __len__(self) -> int:
        return len(self._scores)


@dataclass(frozen=True)
class ScoredCandidate:
    id: str
    score: float
    word_count: int


@dataclass(frozen=True)
class RerankResult:
    results: list[ScoredCandidate]
    model: str
    took_ms: float


@dataclass(frozen=True)
class EmbedResult:
    vectors: np.ndarray  # (count, dim) float32, rows L2-normalised
    model: str


@dataclass(frozen=True)
class ModelsInfo:
    reranker_model: str
    embedding_model: str
    embedding_dim: int
    ready: bool


def word_count(text: str) -> int:
    return len(text.split())


def trim_ranked(
    ranked: Sequence[ScoredCandidate], *, max_chunks: int = 0, word_ceiling: int = 0
) -> list[ScoredCandidate]:
    """The longest prefix of ``ranked`` with at most ``max_chunks`` entries whose words add up
    to at most ``word_ceiling`` (0 = no limit for either). The first entry is kept even when it
    alone exceeds the ceiling: the best passage, too long, beats no passage."""
    kept: list[ScoredCandidate] = []
    words = 0
    for candidate in ranked:
        if max_chunks and len(kept) >= max_chunks:
            break
        if word_ceiling and kept and words + candidate.word_count > word_ceiling:
            break
        kept.append(candidate)
        words += candidate.word_count
    return kept


class InteractiveGate:
    """Counts interactive calls in flight; the background lane waits while there are any.

    ``busy()`` is entered on the event loop around an interactive call; ``wait_until_clear``
    blocks the background thread between two texts (at most ``max_wait_s``, so a stream of
    interactive calls slows bulk work down but never stops it)."""

    def __init__(self, max_wait_s: float = 5.0) -> None:
        self._cond = threading.Condition()
        self._inflight = 0
        self._closed = False
        self.max_wait_s = max_wait_s

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        with self._cond:
            self._inflight += 1
        try:
            yield
        finally:
            with self._cond:
                self._inflight -= 1
                self._cond.notify_all()

    @property
    def inflight(self) -> int:
        return self._inflight

    def wait_until_clear(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._inflight == 0 or self._closed, self.max_wait_s)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class RerankerService:
    """Rerank and embed over models loaded by ``load()``."""

    def __init__(
        self,
        *,
        reranker_model: str,
        embedding_model: str,
        load_reranker: Callable[[], CrossEncoder],
        load_embedder: Callable[[], Embedder],
        max_batch_size: int = 32,
        batch_wait_ms: float = 5.0,
        score_cache_size: int = 0,
    ) -> None:
        self.reranker_model = reranker_model
        self.scores = ScoreCache(score_cache_size)
        self.embedding_model = embedding_model
        self._load_reranker = load_reranker
        self._load_embedder = load_embedder
        self._max_batch_size = max_batch_size
        self._max_wait_s = batch_wait_ms / 1000.0
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="reranker-inference"
        )
        # Bulk embedding runs in a thread of its own and steps aside for interactive calls.
        self._background_executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="reranker-background"
        )
        self._interactive = InteractiveGate()
        self._cross_encoder: CrossEncoder | None = None
        self._embedder: Embedder | None = None
        self._rerank_batcher: DynamicBatcher[tuple[str, str], float] | None = None
        self._embed_batcher: DynamicBatcher[str, np.ndarray] | None = None
        self._background_batcher: DynamicBatcher[str, np.ndarray] | None = None
        self.load_error: Exception | None = None
        self.load_seconds: dict[str, float] = {}

    @property
    def ready(self) -> bool:
        return self._rerank_batcher is not None and self._embed_batcher is not None

    def _load_blocking(self) -> tuple[CrossEncoder, Embedder]:
        started = time.perf_counter()
        cross_encoder = self._load_reranker()
        self.load_seconds["reranker"] = time.perf_counter() - started
        logger.info(
            "reranker model %s loaded in %.2f s", self.reranker_model, self.load_seconds["reranker"]
        )
        started = time.perf_counter()
        embedder = self._load_embedder()
        self.load_seconds["embedding"] = time.perf_counter() - started
        logger.info(
            "embedding model %s (%d dimensions) loaded in %.2f s",
            self.embedding_model,
            embedder.dim,
            self.load_seconds["embedding"],
        )
        return cross_encoder, embedder

    async def load(self) -> None:
        """Load both models in a thread. On failure ``load_error`` is set and re-raised."""
        try:
            cross_encoder, embedder = await asyncio.to_thread(self._load_blocking)
        except Exception as exc:
            self.load_error = exc
            raise
        self._cross_encoder, self._embedder = cross_encoder, embedder

        def score(pairs: list[tuple[str, str]]) -> list[float]:
            return [float(s) for s in cross_encoder.score(pairs)]

        def encode(texts: list[str]) -> list[np.ndarray]:
            return list(embedder.encode(texts))

        gate = self._interactive

        def encode_in_background(texts: list[str]) -> list[np.ndarray]:
            rows: list[np.ndarray] = []
            for text in texts:  # one text at a time: the most an interactive call waits for
                gate.wait_until_clear()
                rows.extend(embedder.encode([text]))
            return rows

        self._rerank_batcher = DynamicBatcher(
            score,
            max_batch_size=self._max_batch_size,
            max_wait_s=self._max_wait_s,
            executor=self._executor,
            name="rerank",
        )
        self._embed_batcher = DynamicBatcher(
            encode,
            max_batch_size=self._max_batch_size,
            max_wait_s=self._max_wait_s,
            executor=self._executor,
            name="embed",
        )
        self._background_batcher = DynamicBatcher(
            encode_in_background,
            max_batch_size=self._max_batch_size,
            max_wait_s=0.0,
            executor=self._background_executor,
            name="embed_background",
        )

    def _require_ready(self) -> None:
        if self.ready:
            return
        if self.load_error is not None:
            raise Unavailable(
                f"The reranker's models failed to load: {self.load_error}", code="models_failed"
            )
        raise Unavailable(
            "The reranker's models are still loading; retry in a few seconds.",
            code="models_loading",
        )

    async def rerank(
        self,
        *,
        query: str,
        candidates: Sequence[tuple[str, str]],
        max_chunks: int = 0,
        word_ceiling: int = 0,
    ) -> RerankResult:
        """``candidates`` ((id, text) pairs) by relevance to ``query``, best first, trimmed
        by :func:`trim_ranked`."""
        started = time.perf_counter()
        if not query.strip():
            raise InvalidArgument("Rerank needs a non-empty query.", code="empty_query")
        if len(candidates) > MAX_CANDIDATES:
            raise InvalidArgument(
                f"Rerank takes at most {MAX_CANDIDATES} candidates per call, got "
                f"{len(candidates)}; pre-filter them or split the call.",
                code="too_many_candidates",
            )
        if max_chunks < 0 or word_ceiling < 0:
            raise InvalidArgument(
                "max_chunks and word_ceiling must be 0 (no limit) or positive.",
                code="invalid_limit",
            )
        if not candidates:
            return RerankResult([], self.reranker_model, (time.perf_counter() - started) * 1e3)
        self._require_ready()
        assert self._rerank_batcher is not None
        scores = await self._scores_of(query, [text for _, text in candidates])
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
        ranked = [
            ScoredCandidate(
                id=candidates[i][0], score=scores[i], word_count=word_count(candidates[i][1])
            )
            for i in order
        ]
        return RerankResult(
            trim_ranked(ranked, max_chunks=max_chunks, word_ceiling=word_ceiling),
            self.reranker_model,
            (time.perf_counter() - started) * 1e3,
        )

    async def _scores_of(self, query: str, texts: list[str]) -> list[float]:
        """The cross-encoder's score of each text: cached ones as kept, the rest (each distinct
        text once) from the model."""
        assert self._rerank_batcher is not None
        keys = [self.scores.key(query, text) for text in texts]
        found: dict[bytes, float] = {}
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            score = self.scores.get(key)
            if score is not None:
                found[key] = score
            elif key not in missing:
                missing[key] = text
        CACHE_LOOKUPS.labels("hit").inc(len(texts) - len(missing))
        CACHE_LOOKUPS.labels("miss").inc(len(missing))
        if missing:
            with self._interactive.busy():
                computed = await self._rerank_batcher.submit(
                    [(query, text) for text in missing.values()]
                )
            for key, score in zip(missing, computed, strict=True):
                found[key] = score
                self.scores.put(key, score)
        return [found[key] for key in keys]

    async def embed(
        self, *, texts: Sequence[str], is_query: bool = False, background: bool = False
    ) -> EmbedResult:
        """One L2-normalised vector per text; queries get the model's query instruction.
        ``background`` work yields, text by text, to interactive calls."""
        if len(texts) > MAX_TEXTS:
            raise InvalidArgument(
                f"Embed takes at most {MAX_TEXTS} texts per call, got {len(texts)}; split the "
                "call.",
                code="too_many_texts",
            )
        if not texts:
            dim = self._embedder.dim if self._embedder is not None else 0
            return EmbedResult(np.zeros((0, dim), dtype=np.float32), self.embedding_model)
        self._require_ready()
        assert self._embed_batcher is not None and self._embedder is not None
        assert self._background_batcher is not None
        prefix = self._embedder.query_prefix if is_query else ""
        if background:
            rows = await self._background_batcher.submit([prefix + t for t in texts])
        else:
            with self._interactive.busy():
                rows = await self._embed_batcher.submit([prefix + t for t in texts])
        return EmbedResult(np.stack(rows).astype(np.float32, copy=False), self.embedding_model)

    def models(self) -> ModelsInfo:
        return ModelsInfo(
            reranker_model=self.reranker_model,
            embedding_model=self.embedding_model,
            embedding_dim=self._embedder.dim if self._embedder is not None else 0,
            ready=self.ready,
        )

    async def close(self) -> None:
        for batcher in (self._rerank_batcher, self._embed_batcher, self._background_batcher):
            if batcher is not None:
                await batcher.close()
        self._interactive.close()
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._background_executor.shutdown(wait=False, cancel_futures=True)
