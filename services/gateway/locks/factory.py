"""Pick the chat lock implementation from configuration."""

from __future__ import annotations

import logging

from services.gateway.locks.base_chat_lock import BaseChatLock
from services.gateway.locks.in_memory_chat_lock import InMemoryChatLock
from services.gateway.locks.redis_chat_lock import RedisChatLock

logger = logging.getLogger(__name__)


def make_chat_lock(redis_url: str | None, *, key_prefix: str, ttl_seconds: float) -> BaseChatLock:
    """Redis when ``redis_url`` is given (any number of replicas), else in-process (one only)."""
    if redis_url:
        lock = RedisChatLock(redis_url, key_prefix=key_prefix, ttl_seconds=ttl_seconds)
        logger.info(
            "chat lock: Redis at %s (prefix %r, ttl %.1f s)", lock.url, key_prefix, ttl_seconds
        )
        return lock
    logger.info(
        "chat lock: in-memory (ttl %.1f s); valid for a single gateway replica only", ttl_seconds
    )
    return InMemoryChatLock(ttl_seconds=ttl_seconds)
