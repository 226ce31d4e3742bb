"""The gateway's Prometheus metrics: what a turn did, as the client saw it.

Labels are closed sets (outcomes, routes, actions, the configured model names), never a
session id or user text. Served on the gateway's admin port with the request metrics of
:mod:`services.common.metrics`.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from services.common.metrics import REGISTRY

ACTIVE_CHATS = Gauge(
    "zocrates_gateway_active_chats",
    "Chat streams (/chat, /chat/resume) in flight: from their lock taken to the end of their "
    "post-turn compaction.",
    registry=REGISTRY,
)
CHAT_LOCK_ACQUISITIONS = Counter(
    "zocrates_gateway_chat_lock_acquisitions_total",
    "Attempts to take a session's chat lock, by result: 'immediate' (free), 'waited' (held "
    "at first, taken after waiting for a compaction or a release), 'busy' (409 session_busy), "
    "'maintenance' (503 maintenance_running), 'error' (the lock store did not answer).",
    ["result"],
    registry=REGISTRY,
)
CHAT_LOCK_WAIT = Histogram(
    "zocrates_gateway_chat_lock_wait_seconds",
    "Seconds from asking for a session's chat lock to holding it or giving up, by result.",
    ["result"],
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
    registry=REGISTRY,
)
CHAT_LOCKS_LOST = Counter(
    "zocrates_gateway_chat_locks_lost_total",
    "Turns stopped because their chat lock could not be renewed (lock_lost).",
    registry=REGISTRY,
)
TURNS = Counter(
    "zocrates_gateway_turns_total",
    "Chat streams by route ('chat', 'resume') and how they ended: 'completed' (done with an "
    "answer), 'paused' (done at a checkpoint), 'failed' (an error event) or 'cancelled' (the "
    "client went away first). A paused turn counts again when its resume stream ends.",
    ["route", "outcome"],
    registry=REGISTRY,
)
CHECKPOINTS_OFFERED = Counter(
    "zocrates_gateway_checkpoints_offered_total",
    "Deep-research checkpoints (request_input events) relayed to clients.",
    registry=REGISTRY,
)
CHECKPOINT_ANSWERS = Counter(
    "zocrates_gateway_checkpoint_answers_total",
    "Checkpoint answers the agent accepted, by action: 'extend_budget' (granted) or "
    "'synthesize' (synthesize now).",
    ["action"],
    registry=REGISTRY,
)

TURN_OUTCOMES = ("completed", "paused", "failed", "cancelled")
