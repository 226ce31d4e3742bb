"""What the gateway holds for its lifetime, created in the app's lifespan."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import pathlib
from typing import Any

from services.agent.client import AgentClient
from services.common.app_config import ConfigStore, ZocratesConfig
from services.common.errors import ZocratesError
from services.compactor.client import CompactorClient
from services.gateway import metrics
from services.gateway.config import GatewaySettings
from services.gateway.locks.base_chat_lock import (
    BaseChatLock,
    HeldLock,
    MaintenanceRunning,
    SessionBusy,
)
from services.library.client import LibraryClient
from services.sessions.client import SessionsClient

logger = logging.getLogger(__name__)

COMPACTING = "compacting"  # the lock holder's note while post-turn compaction runs
# How long a request waits for a session whose holder has no note (a turn in flight, or one
# letting go this instant) before 409.
RELEASE_GRACE_SECONDS = 1.0
# How long a maintenance run waits for another one (another replica's) to end before failing.
MAINTENANCE_QUEUE_SECONDS = 600.0


@dataclasses.dataclass
class GatewayState:
    settings: GatewaySettings
    data_dir: pathlib.Path
    token: str
    sessions: SessionsClient
    agent: AgentClient
    library: LibraryClient
    chat_lock: BaseChatLock
    config_store: ConfigStore
    compactor: CompactorClient | None = None
    # Set once start-up maintenance has run (or failed open); chat waits for it.
    startup_done: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    maintenance_lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)
    last_startup_report: dict[str, Any] | None = None
    # The background run of a VACUUM that maintenance deferred, once the last chat ended.
    deferred_vacuum: asyncio.Task[None] | None = None
    _vacuum_again: bool = False
    # The last config read and the file it came from (path, mtime, size, inode): a turn's
    # envelope gate reads the config without the file lock while the file is unchanged.
    _config_cache: tuple[tuple[Any, ...], ZocratesConfig] | None = None

    async def acquire_session(self, session_id: str) -> HeldLock:
        """The session's lock for a turn, a rewind or a delete. While maintenance runs (any
        replica's: the mark in the lock store), wait for it, up to ``maintenance_wait_seconds``,
        then 503 ``maintenance_running``; nothing is held while waiting, so maintenance and the
        chats it spares never wait for each other. While the previous turn's compaction runs,
        wait for it (bounded) instead of failing, so what comes next sees the compacted
        history; any other holder (a turn in flight) is 409 at once."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + self.settings.maintenance_wait_seconds
        waited = [False]  # set when the lock (or the maintenance mark) was in the way
        result = "error"  # the lock store did not answer
        try:
            while True:
                try:
                    held = await self._acquire_session(session_id, waited)
                    result = "waited" if waited[0] else "immediate"
                    return held
                except SessionBusy:
                    result = "busy"
                    raise
                except MaintenanceRunning:
                    waited[0] = True
                    left = max(0.0, deadline - loop.time())
                    if not await self.chat_lock.wait_while_maintenance(wait_seconds=left):
                        result = "maintenance"
                        raise MaintenanceRunning(
                            "Session maintenance (clean-up of old sessions, VACUUM) is still "
                            "running. Try again in a minute."
                        ) from None
        finally:
            metrics.CHAT_LOCK_ACQUISITIONS.labels(result).inc()
            metrics.CHAT_LOCK_WAIT.labels(result).observe(loop.time() - started)

    async def _acquire_session(self, session_id: str, waited: list[bool]) -> HeldLock:
        try:
            return await self.chat_lock.acquire(session_id)
        except SessionBusy:
            waited[0] = True
            if await self.chat_lock.phase(session_id) != COMPACTING:
                # The previous turn may be letting go this instant (its note is cleared just
                # before its lock is released): a moment's grace, then 409.
                return await self.chat_lock.acquire(session_id, wait_seconds=RELEASE_GRACE_SECONDS)
        return await self.chat_lock.acquire(
            session_id, wait_seconds=self.settings.compaction_wait_seconds
        )

    async def load_config(self) -> ZocratesConfig:
        """The config as the file holds it now. Another process (a second gateway, a user's
        editor) may have changed the file: it is stat'ed every time and read again, under its
        lock, only when it changed (every write replaces it, so its inode changes)."""
        key = _file_key(self.config_store.path)
        cached = self._config_cache
        if key is not None and cached is not None and cached[0] == key:
            return cached[1]
        config = await asyncio.to_thread(self.config_store.load)
        # Kept only if nothing wrote the file meanwhile (a back-fill by this load included:
        # the next call then reads it once more and keeps that).
        unchanged = _file_key(self.config_store.path) == key
        self._config_cache = (key, config) if key is not None and unchanged else None
        return config

    async def run_maintenance(self, *, reason: str) -> dict[str, Any]:
        """Run retention and VACUUM with the current policy, holding the maintenance mark (so
        chats on every replica wait for it); the in-flight sessions are read once it is set."""
        config = await self.load_config()
        async with (
            self.maintenance_lock,
            self.chat_lock.hold_maintenance(wait_seconds=MAINTENANCE_QUEUE_SECONDS) as mark,
        ):
            if mark is None:
                raise MaintenanceRunning(
                    "Another session maintenance has been running for "
                    f"{MAINTENANCE_QUEUE_SECONDS:.0f} s; try again later."
                )
            active = await self.chat_lock.locked_session_ids()
            report = await self.sessions.run_maintenance(
                active_session_ids=active,
                retention_days=config.session_retention_days,
                max_saved_sessions=config.max_saved_sessions,
                reason=reason,
            )
            if mark.lost.is_set():
                logger.warning("maintenance (%s) lost its mark: chats may have started", reason)
        if report["vacuum_skipped_reason"] == "chat_in_progress":
            self.vacuum_when_idle()  # the chats may all have ended while it ran
        return report

    def vacuum_when_idle(self) -> None:
        """Called after a chat's lock was let go. In the background (the response has been
        sent), if no chat runs any more and maintenance deferred a VACUUM, run it, holding the
        maintenance mark like any maintenance. One run at a time; a call while one runs makes
        it look again when it is done."""
        if self.deferred_vacuum is not None and not self.deferred_vacuum.done():
            self._vacuum_again = True
            return
        self.deferred_vacuum = asyncio.create_task(self._vacuum_while_asked())

    async def _vacuum_while_asked(self) -> None:
        while True:
            self._vacuum_again = False
            try:
                await self._vacuum_if_owed()
            except ZocratesError as exc:  # it stays owed: the next chat's end tries again
                logger.warning("deferred VACUUM not run: %s", exc.message)
            if not self._vacuum_again:
                return

    async def _vacuum_if_owed(self) -> None:
        if not await self.sessions.vacuum_owed():  # the usual answer, and cheaper than a SCAN
            return
        if await self.chat_lock.locked_session_ids():
            return  # another chat runs: the end of the last one comes back here
        async with self.chat_lock.hold_maintenance() as mark:
            if mark is None:
                return  # another maintenance runs; it settles the owed VACUUM
            active = await self.chat_lock.locked_session_ids()
            report = await self.sessions.run_deferred_vacuum(active_session_ids=active)
        logger.info(
            "deferred VACUUM: %s; %d -> %d bytes in %.1f ms",
            "done" if report["vacuumed"] else f"skipped ({report['vacuum_skipped_reason']})",
            report["size_before"],
            report["size_after"],
            report["duration_ms"],
        )


def _file_key(path: pathlib.Path) -> tuple[Any, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
