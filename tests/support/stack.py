"""Start the real services in-process on free ports."""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import AsyncIterator
from typing import Any

from services.gateway.config import GatewaySettings
from services.gateway.server import GatewayServer
from services.sessions.config import SessionsSettings
from services.sessions.server import SessionsServer
from tests.support.ports import free_base_port


@contextlib.asynccontextmanager
async def running_sessions(
    zotero_dir: pathlib.Path, **overrides: Any
) -> AsyncIterator[SessionsServer]:
    settings = SessionsSettings(
        zotero_dir=zotero_dir, sessions_grpc_port=0, sessions_admin_port=0, **overrides
    )
    server = SessionsServer(settings)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def running_gateway(
    zotero_dir: pathlib.Path, sessions_addr: str, **overrides: Any
) -> AsyncIterator[GatewayServer]:
    settings = GatewaySettings(
        zotero_dir=zotero_dir,
        port=free_base_port(),
        gateway_admin_port=0,
        sessions_addr=sessions_addr,
        **overrides,
    )
    server = GatewayServer(settings)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
