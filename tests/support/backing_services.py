"""Where the real Redis and PostgreSQL for tests come from.

1. ``ZOCRATES_TEST_REDIS_URL`` / ``ZOCRATES_TEST_POSTGRES_URL`` (CI and this machine set them);
2. else, when a Docker engine answers, a throwaway container through testcontainers;
3. else the test fails with a message saying what to set. Nothing is skipped.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest


def _docker_available() -> bool:
    try:
        import docker

        docker.from_env(timeout=3).ping()
        return True
    except Exception:
        return False


@contextlib.contextmanager
def redis_server_url() -> Iterator[str]:
    url = os.environ.get("ZOCRATES_TEST_REDIS_URL")
    if url:
        yield url
        return
    if _docker_available():
        from testcontainers.redis import RedisContainer

        with RedisContainer("redis:7-alpine") as container:
            host = container.get_container_host_ip()
            yield f"redis://{host}:{container.get_exposed_port(6379)}/0"
        return
    pytest.fail(
        "These tests need a real Redis. Set ZOCRATES_TEST_REDIS_URL "
        "(e.g. redis://127.0.0.1:6379/0) or start a Docker engine for testcontainers."
    )


@contextlib.contextmanager
def postgres_server_url() -> Iterator[str]:
    """A postgresql+asyncpg:// URL of a database the tests may create databases from."""
    url = os.environ.get("ZOCRATES_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    if _docker_available():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("postgres:16-alpine", driver="asyncpg") as container:
            yield container.get_connection_url()
        return
    pytest.fail(
        "These tests need a real PostgreSQL. Set ZOCRATES_TEST_POSTGRES_URL "
        "(e.g. postgresql+asyncpg://postgres@127.0.0.1:5432/test) or start a Docker engine."
    )
