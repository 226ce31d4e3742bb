"""The reranker service (not built yet): cross-encoder reranking and text embeddings; the only
process that loads ML models."""
