"""python -m services.gateway: the HTTP/SSE gateway the Zotero plugin talks to."""

import asyncio

from services.common.cli import service_main
from services.gateway.config import GatewaySettings
from services.gateway.server import serve

if __name__ == "__main__":
    settings = service_main(GatewaySettings, "gateway", __doc__)
    asyncio.run(serve(settings))
