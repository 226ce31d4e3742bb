"""Where each service listens, derived from one base port so two stacks never collide.

With base port P (``ZOCRATES_PORT``, default 8765): the gateway serves HTTP on P and every
gRPC service takes P + its offset; admin ports (``/healthz``, ``/readyz``, ``/metrics``) are
P + 10 + the same offset. Two stacks whose base ports differ by 20 or more never share a port.
"""

from __future__ import annotations

from typing import Final

DEFAULT_BASE_PORT: Final = 8765
ADMIN_OFFSET: Final = 10
PORT_SPAN: Final = 20  # ports a stack uses above its base

SERVICE_OFFSETS: Final[dict[str, int]] = {
    "gateway": 0,
    "sessions": 1,
    "agent": 2,
    "reranker": 3,
    "compactor": 4,
    "library": 5,
}


def service_port(base: int, service: str) -> int:
    """The main port (HTTP for the gateway, gRPC for the others) of ``service``."""
    return base + SERVICE_OFFSETS[service]


def admin_port(base: int, service: str) -> int:
    """The admin HTTP port of ``service``."""
    return base + ADMIN_OFFSET + SERVICE_OFFSETS[service]
