"""python -m services.reranker: the reranker service (cross-encoder reranking and text
embeddings; the only process that loads ML models)."""

import asyncio

from services.common.cli import service_main
from services.reranker.config import RerankerSettings
from services.reranker.server import serve

if __name__ == "__main__":
    settings = service_main(RerankerSettings, "reranker", __doc__)
    asyncio.run(serve(settings))
