"""``create_app(settings)``: the gateway's FastAPI application."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse
from fastapi.security import HTTPBearer

from services.agent.client import AgentClient
from services.common.app_config import ConfigStore
from services.common.errors import ZocratesError
from services.compactor.client import CompactorClient
from services.gateway.auth import TOKEN_FILE_NAME, ensure_token_file
from services.gateway.config import GatewaySettings
from services.gateway.errors import install_error_handlers
from services.gateway.locks.factory import make_chat_lock
from services.gateway.middleware import GatewayMiddleware
from services.gateway.routers import chat, library, models, sessions, system
from services.gateway.state import GatewayState
from services.library.client import LibraryClient
from services.sessions.client import SessionsClient

logger = logging.getLogger(__name__)

# Documents the scheme in OpenAPI; GatewayMiddleware enforces it on every route but /healthz.
_bearer = HTTPBearer(auto_error=False, description="Token from <data dir>/gateway.token")


async def _startup_maintenance(state: GatewayState) -> None:
    """Wait for the sessions service, run start-up maintenance, then accept chat.

    Fails open: if maintenance fails, chat is accepted anyway and the error is logged.
    """
    delay = 0.2
    while not await state.sessions.healthy():
        logger.info("waiting for the sessions service at %s", state.sessions.address)
        await asyncio.sleep(delay)
        delay = min(delay * 2, 5.0)
    try:
        state.last_startup_report = await state.run_maintenance(reason="startup")
    except ZocratesError as exc:
        logger.warning("start-up maintenance failed (%s); continuing", exc.message)
    finally:
        state.startup_done.set()


def create_app(settings: GatewaySettings) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        data_dir = settings.data_dir
        secret = settings.gateway_token.get_secret_value() if settings.gateway_token else None
        token = await asyncio.to_thread(ensure_token_file, data_dir, secret)
        config_store = ConfigStore(data_dir)
        await asyncio.to_thread(config_store.load)  # back-fill defaults; invalid file fails here
        state = GatewayState(
            settings=settings,
            data_dir=data_dir,
            token=token,
            sessions=SessionsClient(
                settings.sessions_addr,
                app_name=settings.app_name,
                user_id=settings.user_id,
                timeout=settings.rpc_timeout_seconds,
            ),
            agent=AgentClient(settings.agent_addr, timeout=max(30.0, settings.rpc_timeout_seconds)),
            library=LibraryClient(
                settings.library_addr, timeout=max(30.0, settings.rpc_timeout_seconds)
            ),
            chat_lock=make_chat_lock(
                settings.redis_url,
                key_prefix=settings.redis_key_prefix,
                ttl_seconds=settings.chat_lock_ttl_seconds,
            ),
            config_store=config_store,
            compactor=(
                CompactorClient(
                    settings.compactor_addr, timeout=settings.compaction_timeout_seconds
                )
                if settings.compactor_addr
                else None
            ),
        )
        if state.compactor is None:
            logger.warning("no compactor configured (ZOCRATES_COMPACTOR_ADDR): no compaction")
        app.state.gateway = state
        startup = asyncio.create_task(_startup_maintenance(state))
        try:
            yield
        finally:
            for task in (startup, state.deferred_vacuum):
                if task is not None:  # a cancelled VACUUM still ends its swap (sessions side)
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
            await state.chat_lock.close()
            await state.sessions.close()
            await state.agent.close()
            await state.library.close()
            if state.compactor is not None:
                await state.compactor.close()

    app = FastAPI(
        title="Zocrates gateway",
        version="0.1.0",
        description=(
            "REST and SSE API of Zocrates. Every route but /healthz needs "
            "'Authorization: Bearer <token>' (the token is in <data dir>/gateway.token)."
        ),
        lifespan=lifespan,
        dependencies=[Depends(_bearer)],
        # Named, not left to the default: with a response model FastAPI's default renders
        # through pydantic's JSON writer, which spells some numbers differently (0.0000312
        # for 3.12e-05). JSONResponse keeps json.dumps, as for the error bodies.
        default_response_class=JSONResponse,
    )
    install_error_handlers(app)
    app.include_router(system.router)
    app.include_router(sessions.router)
    app.include_router(library.router)
    app.include_router(chat.router)
    app.include_router(models.router)
    app.add_middleware(
        GatewayMiddleware,
        allowed_hosts=settings.allowed_hosts,
        allowed_origins=settings.allowed_origins,
        token=lambda: app.state.gateway.token,
        token_hint=lambda: str(app.state.gateway.data_dir / TOKEN_FILE_NAME),
    )
    return app
