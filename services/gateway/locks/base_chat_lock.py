"""The chat lock contract, shared by the Redis and in-process implementations.

A session's lock is held for the whole of a chat turn (streaming, then post-turn compaction).
The set of locked session ids is what maintenance treats as "in flight": those sessions are
never pruned and VACUUM waits while any exist.

The store also holds the maintenance mark, one per deployment: set while maintenance runs
(any replica's), renewed like a lock, so a crashed holder's mark expires after one TTL. No
session's lock can be taken while it is set (``try_acquire`` raises ``MaintenanceRunning``,
checked in the same step as the acquisition), and maintenance reads the locked sessions only
once its mark is set. So a chat either started before maintenance (it is in the set, and
maintenance spares it) or starts after it; none slips in between, and neither waits for the
other's end: maintenance never waits for chats, and a chat waits for maintenance only before
it holds its lock.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import dataclasses
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable

from services.common.errors import Conflict, Unavailable

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class HeldLock:
    """A lock this process holds. ``lost`` is set if it could not be renewed (then another
    holder may own the session: the caller should stop its work)."""

    session_id: str
    token: str
    lost: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)


class SessionBusy(Conflict):
    default_code = "session_busy"


class MaintenanceRunning(Unavailable):
    """A session's lock was refused because maintenance holds the mark."""

    default_code = "maintenance_running"


class BaseChatLock(abc.ABC):
    """Per-session mutual exclusion with a time-to-live renewed while held."""

    def __init__(self, *, ttl_seconds: float = 30.0) -> None:
        self.ttl_seconds = ttl_seconds

    @abc.abstractmethod
    async def try_acquire(self, session_id: str) -> HeldLock | None:
        """Take the lock if free; ``None`` if another holder has it. Raise
        ``MaintenanceRunning`` (taking nothing) while the maintenance mark is set."""

    @abc.abstractmethod
    async def renew(self, held: HeldLock) -> bool:
        """Extend the TTL if ``held`` still owns the lock; False if it was lost."""

    @abc.abstractmethod
    async def release(self, held: HeldLock) -> None:
        """Free the lock if ``held`` still owns it (compare-and-delete); never raises."""

    @abc.abstractmethod
    async def locked_session_ids(self) -> set[str]:
        """Ids of every session whose lock is currently held, by any holder."""

    @abc.abstractmethod
    async def ping(self) -> bool:
        """Whether the backing store answers."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (connections)."""

    @abc.abstractmethod
    async def set_phase(self, session_id: str, phase: str | None, *, ttl_seconds: float) -> None:
        """Note what the lock's holder is doing (e.g. "compacting"), or clear it. Expires on
        its own so a crashed holder's note never outlives it for long."""

    @abc.abstractmethod
    async def phase(self, session_id: str) -> str | None:
        """The holder's note, if any."""

    @abc.abstractmethod
    async def try_mark_maintenance(self, token: str) -> bool:
        """Set the maintenance mark with ``token`` for one TTL if it is not set (or is already
        ``token``'s); False if another holder has it."""

    @abc.abstractmethod
    async def renew_maintenance(self, token: str) -> bool:
        """Extend the mark's TTL if ``token`` still holds it; False if it was lost."""

    @abc.abstractmethod
    async def clear_maintenance(self, token: str) -> None:
        """Remove the mark if ``token`` holds it (compare-and-delete); never raises."""

    @abc.abstractmethod
    async def maintenance_running(self) -> bool:
        """Whether the maintenance mark is set, by any holder."""

    async def is_locked(self, session_id: str) -> bool:
        return session_id in await self.locked_session_ids()

    async def acquire(self, session_id: str, *, wait_seconds: float = 0.0) -> HeldLock:
        """Take the lock, polling up to ``wait_seconds``; raise ``SessionBusy`` if still held.
        ``MaintenanceRunning`` is raised at once (the caller decides how long to wait)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_seconds
        delay = 0.02
        while True:
            held = await self.try_acquire(session_id)
            if held is not None:
                return held
            if loop.time() >= deadline:
                raise SessionBusy(
                    "Another request is already running on this session. "
                    "Wait for it to finish, then try again."
                )
            await asyncio.sleep(min(delay, max(0.0, deadline - loop.time())))
            delay = min(delay * 2, 0.25)

    @contextlib.asynccontextmanager
    async def hold(self, session_id: str, *, wait_seconds: float = 0.0) -> AsyncIterator[HeldLock]:
        """Hold the lock for the block, renewing it every TTL/3; always released on exit."""
        held = await self.acquire(session_id, wait_seconds=wait_seconds)
        async with self.keep(held):
            yield held

    @contextlib.asynccontextmanager
    async def keep(self, held: HeldLock) -> AsyncIterator[HeldLock]:
        """Renew an acquired lock for the block; release it on exit, whatever happens."""
        async with self._renewed(
            held, renew=lambda: self.renew(held), what=f"chat lock of session {held.session_id}"
        ):
            yield held

    @contextlib.asynccontextmanager
    async def hold_maintenance(
        self, *, wait_seconds: float = 0.0
    ) -> AsyncIterator[HeldLock | None]:
        """Hold the maintenance mark for the block, renewing it every TTL/3; always cleared on
        exit. Waits up to ``wait_seconds`` for another holder's mark to go, then yields
        ``None`` (nothing held) if it is still set. A renewal that fails for a whole TTL sets
        ``lost``: chats may then start before the block ends (the store stopped answering)."""
        held = HeldLock(session_id="", token=secrets.token_hex(16))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_seconds
        delay = 0.02
        while not await self.try_mark_maintenance(held.token):
            if loop.time() >= deadline:
                yield None
                return
            await asyncio.sleep(min(delay, max(0.0, deadline - loop.time())))
            delay = min(delay * 2, 0.25)
        async with self._renewed(
            held,
            renew=lambda: self.renew_maintenance(held.token),
            what="maintenance mark",
            release=lambda: self.clear_maintenance(held.token),
        ):
            yield held

    async def wait_while_maintenance(self, *, wait_seconds: float) -> bool:
        """Poll until the maintenance mark is gone; False if it is still set after
        ``wait_seconds``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_seconds
        delay = 0.02
        while await self.maintenance_running():
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(min(delay, max(0.0, deadline - loop.time())))
            delay = min(delay * 2, 0.25)
        return True

    @contextlib.asynccontextmanager
    async def _renewed(
        self,
        held: HeldLock,
        *,
        renew: Callable[[], Awaitable[bool]],
        what: str,
        release: Callable[[], Awaitable[None]] | None = None,
    ) -> AsyncIterator[None]:
        renewer = asyncio.create_task(self._keep_renewed(held, renew=renew, what=what))
        try:
            yield
        finally:
            renewer.cancel()
            try:
                # wait() does not re-raise the renewer's CancelledError, so a cancellation of
                # *this* task arriving meanwhile is not swallowed; release happens either way.
                await asyncio.wait([renewer])
            finally:
                await (release() if release is not None else self.release(held))

    async def _keep_renewed(
        self, held: HeldLock, *, renew: Callable[[], Awaitable[bool]], what: str
    ) -> None:
        loop = asyncio.get_running_loop()
        interval = self.ttl_seconds / 3
        renewed_at = loop.time()
        while True:
            await asyncio.sleep(interval)
            attempt_at = loop.time()
            try:
                ok = await renew()
            except Exception as exc:  # store unreachable: retry while the TTL still covers us
                if loop.time() - renewed_at < self.ttl_seconds:
                    logger.warning("could not renew the %s: %s", what, exc)
                    continue
                logger.error(
                    "%s lapsed: not renewed for %.1f s (%s)", what, loop.time() - renewed_at, exc
                )
                held.lost.set()
                return
            if not ok:
                logger.error("%s was lost", what)
                held.lost.set()
                return
            renewed_at = attempt_at
