"""The reranker as the library and the agent use it: a protocol ``RerankerClient`` (the
reranker service's client) satisfies, so domain code and tests can pass any ranker."""

from __future__ import annotations

from typing import Protocol


class Reranker(Protocol):
    """What the library's search (with ``rerank``) and the research pipeline (before synthesis)
    ask of the reranker service (``RerankerClient``). Returns (id, score, word count) of
    ``candidates`` ((id, text) pairs), best first."""

    async def rerank(
        self,
        query: str,
        candidates: list[tuple[str, str]],
        *,
        max_chunks: int = 0,
        word_ceiling: int = 0,
    ) -> list[tuple[str, float, int]]: ...
