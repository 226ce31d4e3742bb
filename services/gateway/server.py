"""Runs the gateway: the FastAPI app on the main port and the admin port beside it."""

from __future__ import annotations

import asyncio
import logging

import uvicorn

from services.common.admin import AdminServer, EmbeddedServer, bind_socket
from services.common.app_config import ConfigError, ConfigStore
from services.common.runtime import wait_for_shutdown_signal
from services.common.settings import SettingsError
from services.common.telemetry import setup_tracing, shutdown_tracing
from services.gateway.app import create_app
from services.gateway.config import GatewaySettings

logger = logging.getLogger(__name__)


class GatewayServer:
    """The gateway, startable in-process (tests) or from ``__main__``."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self.app = create_app(settings)
        self._socket = bind_socket(settings.bind_host, settings.port)
        self.port: int = self._socket.getsockname()[1]
        assert settings.gateway_admin_port is not None
        self.admin = AdminServer(
            service="gateway",
            host=settings.bind_host,
            port=settings.gateway_admin_port,
            readiness=self._readiness,
        )
        self._server = EmbeddedServer(
            uvicorn.Config(
                self.app,
                log_level="warning",
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=5,
            )
        )
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.settings.bind_host}:{self.port}"

    async def _readiness(self) -> dict[str, bool]:
        state = getattr(self.app.state, "gateway", None)
        if state is None:
            return {"started": False}
        sessions_ok, agent_ok, library_ok, lock_ok = await asyncio.gather(
            state.sessions.healthy(),
            state.agent.healthy(),
            state.library.healthy(),
            state.chat_lock.ping(),
        )
        checks = {
            "sessions": sessions_ok,
            "agent": agent_ok,
            "library": library_ok,
            "chat_lock": lock_ok,
            "startup_maintenance": state.startup_done.is_set(),
        }
        if state.compactor is not None:
            checks["compactor"] = await state.compactor.healthy()
        return checks

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # re-raise a start-up failure
                raise RuntimeError("gateway exited during start-up (see the log above)")
            await asyncio.sleep(0.02)
        await self.admin.start()
        logger.info(
            "gateway listening on %s (admin http://%s:%d)",
            self.url,
            self.settings.bind_host,
            self.admin.port,
        )

    async def stop(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await self._task
        await self.admin.stop()
        self._socket.close()


def check_user_config(settings: GatewaySettings) -> None:
    """Refuse to start on an invalid zocrates_config.json, with a message naming key and file."""
    try:
        ConfigStore(settings.data_dir).load()
    except ConfigError as exc:
        raise SettingsError(f"gateway: {exc.message}") from None


async def serve(settings: GatewaySettings) -> None:
    check_user_config(settings)
    setup_tracing(service_name="gateway", otlp_endpoint=settings.otlp_endpoint)
    server = GatewayServer(settings)
    await server.start()
    try:
        waiter = asyncio.create_task(wait_for_shutdown_signal())
        assert server._task is not None
        await asyncio.wait({waiter, server._task}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
    finally:
        await server.stop()
        shutdown_tracing()
