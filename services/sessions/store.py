"""The session store: ADK's DatabaseSessionService plus the few queries that the UI and the
retention engine need and ADK does not offer (manifests with event counts, titles, stats).

It is the only code that opens sessions.db. Every operation holds the store's gate in shared
mode; VACUUM holds it exclusively, so no statement runs while the database file is swapped.
On SQLite this process's writes also take turns (one write lock per file), and a statement
waits up to ``SQLITE_BUSY_TIMEOUT_SECONDS`` for another process's lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import pathlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.schemas.v1 import StorageEvent, StorageSession
from google.adk.sessions.session import Session
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.orm.exc import StaleDataError

from services.common.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    StaleSession,
    Unavailable,
)
from services.common.rwlock import AsyncRWLock

logger = logging.getLogger(__name__)

DEFAULT_TITLE = "New Chat"
MAX_TITLE_LENGTH = 200
SQLITE_FILE_NAME = "sessions.db"
# How long a SQLite statement waits for another process's lock before "database is locked".
SQLITE_BUSY_TIMEOUT_SECONDS = 30.0

_SESSIONS = StorageSession.__table__
_EVENTS = StorageEvent.__table__

# Titles live beside ADK's tables, not in session.state: ADK's rewind recomputes session
# state from event deltas only, so a title set at creation or by a rename would be erased by
# the first rewind. The foreign key cascades deletes made through ADK.
_META_MD = sa.MetaData()
# A stub of ADK's sessions table, only so that the foreign key below resolves; it is never
# created from here (``_META.create`` creates just our table).
sa.Table(
    "sessions",
    _META_MD,
    sa.Column("app_name", sa.String(128), primary_key=True),
    sa.Column("user_id", sa.String(128), primary_key=True),
    sa.Column("id", sa.String(128), primary_key=True),
)
_META = sa.Table(
    "zocrates_session_meta",
    _META_MD,
    sa.Column("app_name", sa.String(128), primary_key=True),
    sa.Column("user_id", sa.String(128), primary_key=True),
    sa.Column("session_id", sa.String(128), primary_key=True),
    sa.Column("title", sa.String(MAX_TITLE_LENGTH * 4), nullable=False),
    sa.ForeignKeyConstraint(
        ["app_name", "user_id", "session_id"],
        ["sessions.app_name", "sessions.user_id", "sessions.id"],
        ondelete="CASCADE",
    ),
)


def sqlite_url_for(data_dir: pathlib.Path) -> str:
    return f"sqlite+aiosqlite:///{data_dir / SQLITE_FILE_NAME}"


def redact_url(url: str) -> str:
    """The URL without its password, for logs and stats."""
    return make_url(url).render_as_string(hide_password=True)


def to_epoch(value: datetime | None) -> float:
    """Storage datetimes are naive UTC on SQLite and PostgreSQL."""
    if value is None:
        return 0.0
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


@dataclasses.dataclass(frozen=True)
class SessionRow:
    """One session as the UI lists it and the retention engine judges it."""

    id: str
    user_id: str
    title: str
    created_at: float
    updated_at: float
    event_count: int


def normalize_title(title: str | None) -> str:
    cleaned = " ".join((title or "").split())
    if len(cleaned) > MAX_TITLE_LENGTH:
        raise InvalidArgument(
            f"Title is {len(cleaned)} characters long; the limit is {MAX_TITLE_LENGTH}.",
            code="title_too_long",
        )
    return cleaned or DEFAULT_TITLE


class SessionStore:
    """One database (a SQLite file or a PostgreSQL database) of ADK sessions."""

    def __init__(self, url: str, *, busy_timeout: float = SQLITE_BUSY_TIMEOUT_SECONDS) -> None:
        self.url = url
        self.backend = make_url(url).get_backend_name()
        engine_args: dict[str, Any] = {}
        if self.backend == "sqlite":
            engine_args["connect_args"] = {"timeout": busy_timeout}
        self.adk = DatabaseSessionService(url, **engine_args)
        self.engine = self.adk.db_engine
        self.gate = AsyncRWLock()
        # SQLite has one write lock per file and its busy handler is not fair: with many
        # writers polling for it, an unlucky one can wait past any timeout. Our own writers
        # queue here in order, so only other processes ever make a write wait in SQLite.
        self._sqlite_writes = asyncio.Lock() if self.backend == "sqlite" else None

    @property
    def sqlite_path(self) -> pathlib.Path | None:
        if self.backend != "sqlite":
            return None
        database = make_url(self.url).database
        return pathlib.Path(database) if database and database != ":memory:" else None

    @property
    def location(self) -> str:
        path = self.sqlite_path
        return str(path) if path else redact_url(self.url)

    async def open(self) -> None:
        """Create ADK's tables and ours if missing, and check the database answers."""
        path = self.sqlite_path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            stale = path.with_name(path.name + ".vacuum-tmp")
            if stale.exists():
                logger.warning("removing %s left by an interrupted VACUUM", stale)
                stale.unlink()
        await self.adk.prepare_tables()
        async with self.engine.begin() as conn:
            await conn.run_sync(lambda sync: _META.create(sync, checkfirst=True))
        logger.info("session store open: %s", self.location)

    async def close(self) -> None:
        await self.adk.close()

    @contextlib.asynccontextmanager
    async def _op(self, *, write: bool = False) -> AsyncIterator[None]:
        """Every operation: shared gate (and, for a write to SQLite, its turn among this
        process's writers), and storage failures turned into domain errors."""
        turn = self._sqlite_writes if write and self._sqlite_writes else contextlib.nullcontext()
        async with self.gate.shared(), turn:
            try:
                yield
            except StaleDataError:
                # The row vanished between ADK's read and its write: deleted concurrently.
                raise NotFound(
                    "The session was deleted while it was being written.",
                    code="session_not_found",
                ) from None
            except (sa_exc.OperationalError, sa_exc.InterfaceError) as exc:
                raise Unavailable(
                    f"The session database ({self.location}) is busy or unreachable: "
                    f"{getattr(exc, 'orig', exc)}",
                    code="database_unavailable",
                ) from exc

    async def ping(self) -> bool:
        try:
            async with self._op(), self.engine.connect() as conn:
                await conn.execute(sa.text("SELECT 1"))
            return True
        except Exception as exc:
            logger.warning("session store not reachable: %s", exc)
            return False

    # ---- ADK-level ----

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
        title: str | None = None,
    ) -> Session:
        async with self._op(write=True):
            try:
                session = await self.adk.create_session(
                    app_name=app_name, user_id=user_id, state=state, session_id=session_id
                )
            except AlreadyExistsError as exc:
                raise AlreadyExists(str(exc), code="session_exists") from None
            if title is not None:
                await self._set_title(app_name, user_id, session.id, normalize_title(title))
            return session

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session:
        async with self._op():
            session = await self.adk.get_session(
                app_name=app_name, user_id=user_id, session_id=session_id, config=config
            )
        if session is None:
            raise NotFound(f"Session {session_id!r} does not exist.", code="session_not_found")
        return session

    async def list_sessions(self, *, app_name: str, user_id: str | None) -> list[Session]:
        async with self._op():
            reply = await self.adk.list_sessions(app_name=app_name, user_id=user_id)
        return reply.sessions

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        async with self._op(write=True):
            if not await self._exists(app_name, user_id, session_id):
                raise NotFound(f"Session {session_id!r} does not exist.", code="session_not_found")
            await self.adk.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)

    async def append_event(self, session: Session, event: Event) -> Event:
        """Append through ADK, whose stale-session check surfaces as ``StaleSession``."""
        async with self._op(write=True):
            try:
                return await self.adk.append_event(session, event)
            except StaleSessionError as exc:
                raise StaleSession(str(exc)) from None
            except SessionNotFoundError as exc:
                raise NotFound(str(exc), code="session_not_found") from None

    # ---- UI-level ----

    async def rename(self, *, app_name: str, user_id: str, session_id: str, title: str) -> None:
        cleaned = normalize_title(title)
        async with self._op(write=True):
            if not await self._exists(app_name, user_id, session_id):
                raise NotFound(f"Session {session_id!r} does not exist.", code="session_not_found")
            await self._set_title(app_name, user_id, session_id, cleaned)

    async def session_rows(self, *, app_name: str, user_id: str | None = None) -> list[SessionRow]:
        """Every session of the app (or of one user), oldest creation first."""
        counts = (
            sa.select(
                _EVENTS.c.app_name,
                _EVENTS.c.user_id,
                _EVENTS.c.session_id,
                sa.func.count().label("n"),
            )
            .where(_EVENTS.c.app_name == app_name)
            .group_by(_EVENTS.c.app_name, _EVENTS.c.user_id, _EVENTS.c.session_id)
            .subquery()
        )
        s = _SESSIONS
        stmt = (
            sa.select(
                s.c.id,
                s.c.user_id,
                s.c.state,
                s.c.create_time,
                s.c.update_time,
                _META.c.title,
                sa.func.coalesce(counts.c.n, 0),
            )
            .select_from(
                s.outerjoin(
                    counts,
                    sa.and_(counts.c.user_id == s.c.user_id, counts.c.session_id == s.c.id),
                ).outerjoin(
                    _META,
                    sa.and_(
                        _META.c.app_name == s.c.app_name,
                        _META.c.user_id == s.c.user_id,
                        _META.c.session_id == s.c.id,
                    ),
                )
            )
            .where(s.c.app_name == app_name)
            .order_by(s.c.create_time.asc(), s.c.id.asc())
        )
        if user_id is not None:
            stmt = stmt.where(s.c.user_id == user_id)
        async with self._op(), self.engine.connect() as conn:
            result = await conn.execute(stmt)
            rows = result.all()
        return [
            SessionRow(
                id=row[0],
                user_id=row[1],
                title=row[5] or _state_title(row[2]),
                created_at=to_epoch(row[3]),
                updated_at=to_epoch(row[4]),
                event_count=int(row[6]),
            )
            for row in rows
        ]

    async def session_row(self, *, app_name: str, user_id: str, session_id: str) -> SessionRow:
        s = _SESSIONS
        stmt = (
            sa.select(s.c.state, s.c.create_time, s.c.update_time, _META.c.title)
            .select_from(
                s.outerjoin(
                    _META,
                    sa.and_(
                        _META.c.app_name == s.c.app_name,
                        _META.c.user_id == s.c.user_id,
                        _META.c.session_id == s.c.id,
                    ),
                )
            )
            .where(s.c.app_name == app_name, s.c.user_id == user_id, s.c.id == session_id)
        )
        async with self._op(), self.engine.connect() as conn:
            row = (await conn.execute(stmt)).first()
        if row is None:
            raise NotFound(f"Session {session_id!r} does not exist.", code="session_not_found")
        return SessionRow(
            id=session_id,
            user_id=user_id,
            title=row[3] or _state_title(row[0]),
            created_at=to_epoch(row[1]),
            updated_at=to_epoch(row[2]),
            event_count=-1,
        )

    async def count(self) -> tuple[int, int]:
        """(sessions, events) in the whole database."""
        async with self._op(), self.engine.connect() as conn:
            sessions = (
                await conn.execute(sa.select(sa.func.count()).select_from(_SESSIONS))
            ).scalar()
            events = (await conn.execute(sa.select(sa.func.count()).select_from(_EVENTS))).scalar()
        return int(sessions or 0), int(events or 0)

    # ---- helpers ----

    async def _exists(self, app_name: str, user_id: str, session_id: str) -> bool:
        stmt = sa.select(sa.literal(1)).where(
            _SESSIONS.c.app_name == app_name,
            _SESSIONS.c.user_id == user_id,
            _SESSIONS.c.id == session_id,
        )
        async with self.engine.connect() as conn:
            return (await conn.execute(stmt)).first() is not None

    async def _set_title(self, app_name: str, user_id: str, session_id: str, title: str) -> None:
        key = {"app_name": app_name, "user_id": user_id, "session_id": session_id}
        async with self.engine.begin() as conn:
            updated = await conn.execute(
                _META.update()
                .where(
                    _META.c.app_name == app_name,
                    _META.c.user_id == user_id,
                    _META.c.session_id == session_id,
                )
                .values(title=title)
            )
            if updated.rowcount == 0:
                await conn.execute(_META.insert().values(**key, title=title))


def _state_title(state: Any) -> str:
    if isinstance(state, dict) and isinstance(state.get("title"), str) and state["title"].strip():
        return str(state["title"])
    return DEFAULT_TITLE
