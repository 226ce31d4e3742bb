"""python -m services.library: the library service (the one owner of the library index:
reading Zotero, text, chunks, the two-phase index, hybrid search)."""

import asyncio

from services.common.cli import service_main
from services.library.config import LibrarySettings
from services.library.server import serve

if __name__ == "__main__":
    settings = service_main(LibrarySettings, "library", __doc__)
    asyncio.run(serve(settings))
