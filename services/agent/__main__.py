"""python -m services.agent: the agent service (research turns)."""

import asyncio

from services.agent.config import AgentSettings
from services.agent.server import serve
from services.common.cli import service_main

if __name__ == "__main__":
    settings = service_main(AgentSettings, "agent", __doc__)
    asyncio.run(serve(settings))
