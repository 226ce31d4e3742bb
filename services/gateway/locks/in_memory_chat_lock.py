"""The chat lock in process memory, for a gateway run without Redis."""

from __future__ import annotations

import secrets
import time

from services.gateway.locks.base_chat_lock import BaseChatLock, HeldLock, MaintenanceRunning


class InMemoryChatLock(BaseChatLock):
    """Chat lock in a dict of ``session_id -> (token, expires_at)`` on the monotonic clock.

    Only valid for a single gateway replica running a single process: replicas (or uvicorn
    workers) do not see each other's locks. Use ``RedisChatLock`` for more than one.
    Expiry works as in Redis: an entry past its TTL is free and is not listed; so does the
    maintenance mark.
    """

    def __init__(self, *, ttl_seconds: float = 30.0) -> None:
        super().__init__(ttl_seconds=ttl_seconds)
        self._locks: dict[str, tuple[str, float]] = {}
        self._phases: dict[str, tuple[str, float]] = {}
        self._mark: tuple[str, float] | None = None  # (token, expires_at)

    def _owner(self, session_id: str) -> str | None:
        """The live token for ``session_id``, dropping the entry if it expired."""
        entry = self._locks.get(session_id)
        if entry is None:
            return None
        token, expires_at = entry
        if time.monotonic() >= expires_at:
            del self._locks[session_id]
            return None
        return token

    def _mark_owner(self) -> str | None:
        if self._mark is not None and time.monotonic() >= self._mark[1]:
            self._mark = None
        return self._mark[0] if self._mark is not None else None

    async def try_acquire(self, session_id: str) -> HeldLock | None:
        if self._mark_owner() is not None:
            raise MaintenanceRunning("Session maintenance is running.")
        if self._owner(session_id) is not None:
            return None
        token = secrets.token_hex(16)
        self._locks[session_id] = (token, time.monotonic() + self.ttl_seconds)
        return HeldLock(session_id=session_id, token=token)

    async def renew(self, held: HeldLock) -> bool:
        if self._owner(held.session_id) != held.token:
            return False
        self._locks[held.session_id] = (held.token, time.monotonic() + self.ttl_seconds)
        return True

    async def release(self, held: HeldLock) -> None:
        if self._owner(held.session_id) == held.token:
            del self._locks[held.session_id]

    async def locked_session_ids(self) -> set[str]:
        return {sid for sid in list(self._locks) if self._owner(sid) is not None}

    async def ping(self) -> bool:
        return True

    async def set_phase(self, session_id: str, phase: str | None, *, ttl_seconds: float) -> None:
        if phase is None:
            self._phases.pop(session_id, None)
        else:
            self._phases[session_id] = (phase, time.monotonic() + ttl_seconds)

    async def phase(self, session_id: str) -> str | None:
        entry = self._phases.get(session_id)
        if entry is None or time.monotonic() >= entry[1]:
            self._phases.pop(session_id, None)
            return None
        return entry[0]

    async def try_mark_maintenance(self, token: str) -> bool:
        if self._mark_owner() not in (None, token):
            return False
        self._mark = (token, time.monotonic() + self.ttl_seconds)
        return True

    async def renew_maintenance(self, token: str) -> bool:
        if self._mark_owner() != token:
            return False
        self._mark = (token, time.monotonic() + self.ttl_seconds)
        return True

    async def clear_maintenance(self, token: str) -> None:
        if self._mark_owner() == token:
            self._mark = None

    async def maintenance_running(self) -> bool:
        return self._mark_owner() is not None
