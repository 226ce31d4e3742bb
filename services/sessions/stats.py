"""Physical storage statistics of the session database."""

from __future__ import annotations

import dataclasses

import sqlalchemy as sa

from services.sessions.store import SessionStore

# Tables whose size PostgreSQL reports for us (ADK's and ours).
_PG_TABLES = ("sessions", "events", "app_states", "user_states", "zocrates_session_meta")


@dataclasses.dataclass(frozen=True)
class StorageStats:
    backend: str
    location: str
    size_bytes: int
    page_count: int
    page_size: int
    freelist_count: int
    session_count: int
    event_count: int

    @property
    def freelist_ratio(self) -> float:
        return self.freelist_count / self.page_count if self.page_count else 0.0


async def storage_stats(store: SessionStore) -> StorageStats:
    sessions, events = await store.count()
    async with store.gate.shared(), store.engine.connect() as conn:
        if store.backend == "sqlite":
            page_count = int((await conn.exec_driver_sql("PRAGMA page_count")).scalar() or 0)
            page_size = int((await conn.exec_driver_sql("PRAGMA page_size")).scalar() or 0)
            freelist = int((await conn.exec_driver_sql("PRAGMA freelist_count")).scalar() or 0)
            path = store.sqlite_path
            size = path.stat().st_size if path is not None and path.exists() else 0
        else:
            page_size = int(
                (await conn.execute(sa.text("SELECT current_setting('block_size')"))).scalar()
                or 8192
            )
            size = 0
            for table in _PG_TABLES:
                size += int(
                    (
                        await conn.execute(
                            sa.text("SELECT COALESCE(pg_total_relation_size(to_regclass(:t)), 0)"),
                            {"t": table},
                        )
                    ).scalar()
                    or 0
                )
            page_count = size // page_size if page_size else 0
            # PostgreSQL has no free-page list; dead tuples are reclaimed by (auto)VACUUM.
            freelist = 0
    return StorageStats(
        backend=store.backend,
        location=store.location,
        size_bytes=size,
        page_count=page_count,
        page_size=page_size,
        freelist_count=freelist,
        session_count=sessions,
        event_count=events,
    )
