"""python -m services.compactor: the compactor service (post-turn adaptive compaction)."""

import asyncio

from services.common.cli import service_main
from services.compactor.config import CompactorSettings
from services.compactor.server import serve

if __name__ == "__main__":
    settings = service_main(CompactorSettings, "compactor", __doc__)
    asyncio.run(serve(settings))
