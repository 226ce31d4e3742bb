"""The chat lock in Redis: correct across any number of gateway replicas sharing one Redis.

One key per session, ``{key_prefix}:chat-lock:{session_id}``, whose value is the holder's
random token and whose PX expiry is the TTL. Renew and release are compare-and-act Lua scripts,
so a holder whose lock lapsed can never extend or delete a lock someone else took since. The
maintenance mark is one more key of the same kind, ``{key_prefix}:maintenance``; a session's
lock is taken only while it is absent, checked in the same script as the ``SET NX``.
"""

from __future__ import annotations

import logging
import re
import secrets
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.common.errors import Unavailable
from services.gateway.locks.base_chat_lock import BaseChatLock, HeldLock, MaintenanceRunning

logger = logging.getLogger(__name__)

# SET NX PX, idempotent: a retried call whose first attempt did set the key (but whose reply
# was lost) finds its own token and succeeds instead of reporting the session busy.
_ACQUIRE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return 1
end
return 0
"""

# A session's lock: as _ACQUIRE, refused (-1) while the maintenance mark (KEYS[2]) is set. The
# holder's own token is checked first, so a retried call that did take the lock before the
# mark was set still succeeds instead of leaving an orphan lock behind.
_ACQUIRE_SESSION = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return 1
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return -1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
"""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

_UNREACHABLE = (RedisConnectionError, RedisTimeoutError)


def redact_redis_url(url: str) -> str:
    """``url`` with any password (in the authority or a ``password=`` query) masked."""
    parts = urlsplit(url)
    if parts.password is not None:
        userinfo, _, hostport = parts.netloc.rpartition("@")
        url = url.replace(parts.netloc, f"{userinfo.partition(':')[0]}:***@{hostport}", 1)
    return re.sub(r"(?i)([?&]password=)[^&#]*", r"\1***", url)


def _glob_escape(text: str) -> str:
    return re.sub(r"([\\*?\[\]])", r"\\\1", text)


class RedisChatLock(BaseChatLock):
    """Chat lock shared by all replicas through Redis.

    Socket timeouts default to 5 s; override them with URL query options such as
    ``?socket_connect_timeout=0.5&socket_timeout=0.5``.
    """

    def __init__(
        self, url: str, *, key_prefix: str = "zocrates", ttl_seconds: float = 30.0
    ) -> None:
        super().__init__(ttl_seconds=ttl_seconds)
        self.url = redact_redis_url(url)
        self._prefix = f"{key_prefix}:chat-lock:"
        self._phase_prefix = f"{key_prefix}:chat-phase:"
        self._mark_key = f"{key_prefix}:maintenance"
        self._ttl_ms = max(1, round(ttl_seconds * 1000))
        self._client = aioredis.Redis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=5.0,
            socket_timeout=5.0,
            # A few quick retries, not redis-py's default ten: callers are waiting on a request.
            retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.5), retries=3),
        )
        self._acquire = self._client.register_script(_ACQUIRE)
        self._acquire_session = self._client.register_script(_ACQUIRE_SESSION)
        self._renew = self._client.register_script(_RENEW)
        self._release = self._client.register_script(_RELEASE)

    def _key(self, session_id: str) -> str:
        return self._prefix + session_id

    def _unavailable(self, exc: Exception) -> Unavailable:
        return Unavailable(
            f"Cannot reach Redis at {self.url} for the chat lock ({exc}). "
            f"Is Redis running at {self.url}? Start it, or point the gateway at the right URL.",
            code="redis_unavailable",
        )

    async def try_acquire(self, session_id: str) -> HeldLock | None:
        token = secrets.token_hex(16)
        try:
            ok = await self._acquire_session(
                keys=[self._key(session_id), self._mark_key], args=[token, self._ttl_ms]
            )
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from exc
        if ok == -1:
            raise MaintenanceRunning("Session maintenance is running.")
        return HeldLock(session_id=session_id, token=token) if ok else None

    async def renew(self, held: HeldLock) -> bool:
        try:
            result = await self._renew(
                keys=[self._key(held.session_id)], args=[held.token, self._ttl_ms]
            )
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from exc
        return bool(result)

    async def release(self, held: HeldLock) -> None:
        try:
            await self._release(keys=[self._key(held.session_id)], args=[held.token])
        except Exception as exc:
            logger.warning(
                "could not release chat lock of %s at %s (it expires by itself): %s",
                held.session_id,
                self.url,
                exc,
            )

    async def locked_session_ids(self) -> set[str]:
        pattern = _glob_escape(self._prefix) + "*"
        start = len(self._prefix)
        try:
            return {key[start:] async for key in self._client.scan_iter(match=pattern, count=500)}
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from exc

    def _phase_key(self, session_id: str) -> str:
        return self._phase_prefix + session_id

    async def set_phase(self, session_id: str, phase: str | None, *, ttl_seconds: float) -> None:
        try:
            if phase is None:
                await self._client.delete(self._phase_key(session_id))
            else:
                await self._client.set(
                    self._phase_key(session_id), phase, px=max(1, int(ttl_seconds * 1000))
                )
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from exc

    async def phase(self, session_id: str) -> str | None:
        try:
            value = await self._client.get(self._phase_key(session_id))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from exc
        if value is None:
            return None
        return value.decode() if isinstance(value, bytes) else str(value)

    async def try_mark_maintenance(self, token: str) -> bool:
        try:
            return bool(await self._acquire(keys=[self._mark_key], args=[token, self._ttl_ms]))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from exc

    async def renew_maintenance(self, token: str) -> bool:
        try:
            return bool(await self._renew(keys=[self._mark_key], args=[token, self._ttl_ms]))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from exc

    async def clear_maintenance(self, token: str) -> None:
        try:
            await self._release(keys=[self._mark_key], args=[token])
        except Exception as exc:
            logger.warning(
                "could not clear the maintenance mark at %s (it expires by itself): %s",
                self.url,
                exc,
            )

    async def maintenance_running(self) -> bool:
        try:
            return bool(await self._client.exists(self._mark_key))
        except _UNREACHABLE as exc:
            raise self._unavailable(exc) from exc

    async def ping(self) -> bool:
        try:
            return bool(await self._client.ping())
        except Exception as exc:
            logger.debug("Redis at %s did not answer PING: %s", self.url, exc)
            return False

    async def close(self) -> None:
        await self._client.aclose()
