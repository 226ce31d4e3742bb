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
from services.compactor.client import CompactorClient
from services.gateway.config import GatewaySettings
from services.gateway.locks.base_chat_lock import BaseChatLock, HeldLock, SessionBusy
from services.sessions.client import SessionsClient

logger = logging.getLogger(__name__)

COMPACTING = "compacting"  # the lock holder's note while post-turn compaction runs
# How long a request waits for a session whose holder has no note (a turn in flight, or one
# letting go this instant) before 409.
RELEASE_GRACE_SECONDS = 1.0


@dataclasses.dataclass
class GatewayState:
    settings: GatewaySettings
    data_dir: pathlib.Path
    token: str
    sessions: SessionsClient
    agent: AgentClient
    chat_lock: BaseChatLock
    config_store: ConfigStore
    compactor: CompactorClient | None = None
    # Set once start-up maintenance has run (or failed open); chat waits for it.
    startup_done: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    maintenance_lock: asyncio.Lock = dataclasses.field(default_factory=asyncio.Lock)
    last_startup_report: dict[str, Any] | None = None
    # The last config read and the file it came from (path, mtime, size, inode): a turn's
    # envelope gate reads the config without the file lock while the file is unchanged.
    _config_cache: tuple[tuple[Any, ...], ZocratesConfig] | None = None

    async def acquire_session(self, session_id: str) -> HeldLock:
        """The session's lock for a turn, a rewind or a delete. While the previous turn's
        compaction runs, wait for it (bounded) instead of failing, so what comes next sees the
        compacted history; any other holder (a turn in flight) is 409 at once."""
        try:
            return await self.chat_lock.acquire(session_id)
        except SessionBusy:
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
        """Run retention and VACUUM with the current policy and in-flight sessions."""
        config = await self.load_config()
        async with self.maintenance_lock:
            active = await self.chat_lock.locked_session_ids()
            return await self.sessions.run_maintenance(
                active_session_ids=active,
                retention_days=config.session_retention_days,
                max_saved_sessions=config.max_saved_sessions,
                reason=reason,
            )


def _file_key(path: pathlib.Path) -> tuple[Any, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
