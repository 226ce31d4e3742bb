"""Free ports for servers started by tests."""

from __future__ import annotations

import random
import socket

from services.common.ports import PORT_SPAN


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_base_port() -> int:
    """A base port whose whole span (base .. base + PORT_SPAN) is free right now."""
    for _ in range(200):
        base = random.randrange(20000, 60000 - PORT_SPAN)
        if all(_free(base + i) for i in range(PORT_SPAN)):
            return base
    raise RuntimeError("no free port range found")


def free_port() -> int:
    """One port of 127.0.0.1 that is free right now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
