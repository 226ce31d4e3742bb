"""Start the real services in-process on free ports."""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from services.gateway.config import GatewaySettings
from services.gateway.server import GatewayServer
from services.reranker.config import RerankerSettings
from services.reranker.server import RerankerServer
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
    zotero_dir: pathlib.Path,
    sessions_addr: str,
    agent_addr: str = "127.0.0.1:9",  # nothing listens: tests of the session API need no agent
    **overrides: Any,
) -> AsyncIterator[GatewayServer]:
    settings = GatewaySettings(
        zotero_dir=zotero_dir,
        port=free_base_port(),
        gateway_admin_port=0,
        sessions_addr=sessions_addr,
        agent_addr=agent_addr,
        **overrides,
    )
    server = GatewayServer(settings)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def running_reranker(
    *,
    wait_loaded: bool = True,
    load_reranker: Callable[[], Any] | None = None,
    load_embedder: Callable[[], Any] | None = None,
    **overrides: Any,
) -> AsyncIterator[RerankerServer]:
    """The reranker on free ports. ``load_*`` replace the configured model loaders (share
    models loaded once per test module, or hold the load back); ``wait_loaded`` returns only
    once the models are loaded."""
    settings = RerankerSettings(reranker_grpc_port=0, reranker_admin_port=0, **overrides)
    server = RerankerServer(settings, load_reranker=load_reranker, load_embedder=load_embedder)
    await server.start()
    try:
        if wait_loaded:
            await server.wait_loaded()
        yield server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def running_agent(
    zotero_dir: pathlib.Path, *, sessions_addr: str, reranker_addr: str, **overrides: Any
) -> AsyncIterator[Any]:
    """The agent service (library index + research turns) on free ports."""
    from services.agent.config import AgentSettings
    from services.agent.server import AgentServer

    settings = AgentSettings(
        zotero_dir=zotero_dir,
        agent_grpc_port=0,
        agent_admin_port=0,
        sessions_addr=sessions_addr,
        reranker_addr=reranker_addr,
        **overrides,
    )
    server = AgentServer(settings)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def running_compactor(
    zotero_dir: pathlib.Path, *, sessions_addr: str, reranker_addr: str, **overrides: Any
) -> AsyncIterator[Any]:
    """The compactor service on free ports."""
    from services.compactor.config import CompactorSettings
    from services.compactor.server import CompactorServer

    settings = CompactorSettings(
        zotero_dir=zotero_dir,
        compactor_grpc_port=0,
        compactor_admin_port=0,
        sessions_addr=sessions_addr,
        reranker_addr=reranker_addr,
        **overrides,
    )
    server = CompactorServer(settings)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
