"""The reranker service: cross-encoder reranking and text embeddings over gRPC, with dynamic
batching; the only process that loads ML models."""
