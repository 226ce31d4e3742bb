"""Space reclamation that cannot leave a half-written database.

SQLite: ``VACUUM INTO`` a temporary file beside the database while a second connection holds
the write lock (so nothing can change underneath), check the copy, then ``os.replace`` it over
the original and fsync the folder. A crash before the replace leaves the original untouched
(the stray temporary file is removed at the next start); a crash after it leaves the compacted
copy, which was complete and checked before it was moved into place.

PostgreSQL: a plain ``VACUUM (ANALYZE)`` of the session tables, which never needs extra disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import pathlib
import shutil
import sqlite3
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from services.sessions.store import SessionStore

logger = logging.getLogger(__name__)

DISK_HEADROOM = 1.5  # free space needed, as a multiple of the database size
BUSY_TIMEOUT_SECONDS = 2.0


class VacuumOutcome(enum.StrEnum):
    DONE = ""
    INSUFFICIENT_DISK = "insufficient_disk"
    DATABASE_BUSY = "database_busy"
    FAILED = "failed"


# Test seam: called with the name of each step of the SQLite swap ("copied", "replaced").
StepHook = Callable[[str], None]


def has_disk_headroom(path: pathlib.Path, size: int) -> bool:
    free = shutil.disk_usage(path.parent).free
    return free >= DISK_HEADROOM * size


def _fsync_path(path: pathlib.Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def vacuum_sqlite_file(db_path: pathlib.Path, *, on_step: StepHook | None = None) -> VacuumOutcome:
    """Compact ``db_path`` in place through an atomic swap. Blocking; run it in a thread.

    The caller guarantees that no connection of its own is open on the file.
    """
    size = db_path.stat().st_size
    if not has_disk_headroom(db_path, size):
        logger.warning(
            "VACUUM skipped: less than %.1fx the database size (%d bytes) free", DISK_HEADROOM, size
        )
        return VacuumOutcome.INSUFFICIENT_DISK
    tmp = db_path.with_name(db_path.name + ".vacuum-tmp")
    tmp.unlink(missing_ok=True)
    guard = sqlite3.connect(db_path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    try:
        try:
            # RESERVED lock: other writers (any process) wait; readers, like the copy, go on.
            guard.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            logger.warning("VACUUM skipped: database busy (%s)", exc)
            return VacuumOutcome.DATABASE_BUSY
        reader = sqlite3.connect(db_path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        try:
            reader.execute("VACUUM INTO ?", (str(tmp),))
        except sqlite3.OperationalError as exc:
            tmp.unlink(missing_ok=True)
            if "locked" in str(exc) or "busy" in str(exc):
                logger.warning("VACUUM skipped: database busy (%s)", exc)
                return VacuumOutcome.DATABASE_BUSY
            raise
        finally:
            reader.close()
        check = sqlite3.connect(tmp, isolation_level=None)
        try:
            verdict = check.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            check.close()
        if verdict != "ok":
            tmp.unlink(missing_ok=True)
            logger.error("VACUUM copy failed its check (%s); original kept", verdict)
            return VacuumOutcome.FAILED
        _fsync_path(tmp)
        if on_step:
            on_step("copied")
        os.replace(tmp, db_path)
        _fsync_path(db_path.parent)
        if on_step:
            on_step("replaced")
    finally:
        guard.close()  # its transaction was on the replaced inode; closing rolls nothing back
    return VacuumOutcome.DONE


async def _to_thread_to_the_end(
    func: Callable[..., VacuumOutcome], *args: Any, **kwargs: Any
) -> VacuumOutcome:
    """Run ``func`` in a thread; a cancellation (the caller's RPC cancelled) is re-raised only
    once the thread has finished, so the gate is not let go while the file is being swapped."""
    task = asyncio.ensure_future(asyncio.to_thread(func, *args, **kwargs))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        while not task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([task])
        if not task.cancelled() and task.exception() is not None:
            logger.error("VACUUM failed after its caller went away", exc_info=task.exception())
        raise


async def vacuum(store: SessionStore, *, on_step: StepHook | None = None) -> VacuumOutcome:
    """Reclaim free space; never raises for an expected condition (fail-open)."""
    try:
        if store.backend == "sqlite":
            path = store.sqlite_path
            if path is None:
                return VacuumOutcome.DONE
            async with store.gate.exclusive():
                # Close pooled connections: after the swap they would point at the old file.
                await store.engine.dispose()
                return await _to_thread_to_the_end(vacuum_sqlite_file, path, on_step=on_step)
        async with store.gate.exclusive(), store.engine.connect() as conn:
            autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
            for table in ("events", "sessions", "zocrates_session_meta"):
                await autocommit.execute(sa.text(f"VACUUM (ANALYZE) {table}"))
        return VacuumOutcome.DONE
    except Exception:
        logger.exception("VACUUM failed; the database is unchanged")
        return VacuumOutcome.FAILED
