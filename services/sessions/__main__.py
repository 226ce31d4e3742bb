"""python -m services.sessions: the sessions service (sole owner of sessions.db)."""

import asyncio

from services.common.cli import service_main
from services.sessions.config import SessionsSettings
from services.sessions.server import serve

if __name__ == "__main__":
    settings = service_main(SessionsSettings, "sessions", __doc__)
    asyncio.run(serve(settings))
