"""The admin HTTP port every service has: ``/healthz`` (process alive), ``/readyz``
(dependencies reachable, ready for traffic) and Prometheus ``/metrics``. No auth: it binds
127.0.0.1 by default and exposes no data."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable, Iterator

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from services.common.metrics import REGISTRY

logger = logging.getLogger(__name__)

ReadinessCheck = Callable[[], Awaitable[dict[str, bool]]]


class EmbeddedServer(uvicorn.Server):
    """A uvicorn server that leaves signal handling to the service that embeds it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (0 picks a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def admin_app(service: str, readiness: ReadinessCheck) -> Starlette:
    async def healthz(_: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "service": service})

    async def readyz(_: Request) -> JSONResponse:
        try:
            checks = await readiness()
        except Exception as exc:  # a failing check means not ready, never a 500
            logger.warning("readiness check raised: %s", exc)
            checks = {"readiness_check": False}
        ready = all(checks.values())
        return JSONResponse(
            {"status": "ready" if ready else "not_ready", "service": service, "checks": checks},
            status_code=200 if ready else 503,
        )

    async def metrics(_: Request) -> Response:
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)

    return Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/readyz", readyz),
            Route("/metrics", metrics),
        ]
    )


class AdminServer:
    """Serves :func:`admin_app` on its own port inside the service's event loop."""

    def __init__(self, *, service: str, host: str, port: int, readiness: ReadinessCheck) -> None:
        self._socket = bind_socket(host, port)
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(
            admin_app(service, readiness), log_level="warning", access_log=False, lifespan="off"
        )
        self._server = EmbeddedServer(config)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await self._task
        self._socket.close()
