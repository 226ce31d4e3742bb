"""Start the real services in-process on free ports."""

from __future__ import annotations

import contextlib
import pathlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
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
    library_addr: str = "127.0.0.1:9",  # ... nor a library
    **overrides: Any,
) -> AsyncIterator[GatewayServer]:
    settings = GatewaySettings(
        zotero_dir=zotero_dir,
        port=free_base_port(),
        gateway_admin_port=0,
        sessions_addr=sessions_addr,
        agent_addr=agent_addr,
        library_addr=library_addr,
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
async def running_library(
    zotero_dir: pathlib.Path, *, reranker_addr: str, **overrides: Any
) -> AsyncIterator[Any]:
    """The library service (the index; ``.library`` is its ``Library``) on free ports."""
    from services.library.config import LibrarySettings
    from services.library.server import LibraryServer

    settings = LibrarySettings(
        zotero_dir=zotero_dir,
        library_grpc_port=0,
        library_admin_port=0,
        reranker_addr=reranker_addr,
        **overrides,
    )
    server = LibraryServer(settings)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@contextlib.asynccontextmanager
async def running_agent(
    zotero_dir: pathlib.Path,
    *,
    sessions_addr: str,
    reranker_addr: str,
    library_addr: str,
    **overrides: Any,
) -> AsyncIterator[Any]:
    """The agent service (research turns) on free ports."""
    from services.agent.config import AgentSettings
    from services.agent.server import AgentServer

    settings = AgentSettings(
        zotero_dir=zotero_dir,
        agent_grpc_port=0,
        agent_admin_port=0,
        sessions_addr=sessions_addr,
        reranker_addr=reranker_addr,
        library_addr=library_addr,
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


@dataclass
class IndexedStack:
    """The research services on free ports, the library synced to its end."""

    reranker: RerankerServer
    sessions: SessionsServer
    library: Any
    agent: Any
    gateway: GatewayServer | None  # None when started with ``gateway=False``
    token: str  # the gateway's bearer token


@contextlib.asynccontextmanager
async def running_indexed_stack(
    zotero_dir: pathlib.Path, *, gateway: bool = True
) -> AsyncIterator[IndexedStack]:
    """Reranker, sessions, library, agent and (unless ``gateway=False``) the gateway with its
    start-up maintenance done; the library synced through its client, embeddings included."""
    from services.library.client import LibraryClient

    async with contextlib.AsyncExitStack() as stack:
        reranker = await stack.enter_async_context(running_reranker())
        sessions = await stack.enter_async_context(running_sessions(zotero_dir))
        library = await stack.enter_async_context(
            running_library(zotero_dir, reranker_addr=reranker.runtime.address)
        )
        agent = await stack.enter_async_context(
            running_agent(
                zotero_dir,
                sessions_addr=sessions.runtime.address,
                reranker_addr=reranker.runtime.address,
                library_addr=library.runtime.address,
            )
        )
        served = None
        if gateway:
            served = await stack.enter_async_context(
                running_gateway(
                    zotero_dir,
                    sessions.runtime.address,
                    agent_addr=agent.runtime.address,
                    library_addr=library.runtime.address,
                )
            )
            await served.app.state.gateway.startup_done.wait()
        client = LibraryClient(library.runtime.address)
        last: dict[str, Any] = {}
        try:
            async for progress in client.sync(follow_embedding=True):
                last = progress
        finally:
            await client.close()
        assert last.get("phase") == "done" and last["failed"] == 0, last
        token_file = zotero_dir / "zocrates-data" / "gateway.token"
        token = token_file.read_text().strip() if token_file.exists() else ""
        yield IndexedStack(reranker, sessions, library, agent, served, token)


@contextlib.asynccontextmanager
async def serving_library(library: Any) -> AsyncIterator[str]:
    """``library`` (an open ``Library``, or anything with its methods the RPCs call) behind the
    library service's own servicer on a free loopback port; its address."""
    from zocrates.library.v1 import library_pb2_grpc

    from services.common.runtime import GrpcServiceRuntime
    from services.library.server import SERVICE_NAME
    from services.library.servicer import LibraryServicer

    runtime = GrpcServiceRuntime(
        service="library",
        service_names=[SERVICE_NAME],
        host="127.0.0.1",
        grpc_port=0,
        admin_port=0,
        readiness=_ready,
    )
    library_pb2_grpc.add_LibraryServiceServicer_to_server(
        LibraryServicer(library), runtime.grpc.server
    )
    await runtime.start()
    try:
        yield runtime.address
    finally:
        await runtime.stop()


@contextlib.asynccontextmanager
async def research_tools_over_grpc(library: Any) -> AsyncIterator[list[Any]]:
    """The agent's library tools (search_corpus, get_document_toc, read_document) reaching
    ``library`` (an open ``Library``) as in the stack: through the library service's servicer
    on a free port and its client."""
    from services.agent.research.library_tools import make_library_tools
    from services.library.client import LibraryClient

    async with serving_library(library) as address:
        client = LibraryClient(address)
        try:
            yield make_library_tools(client)
        finally:
            await client.close()


async def _ready() -> dict[str, bool]:
    return {"index": True}
