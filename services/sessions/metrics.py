"""The sessions service's Prometheus metrics: retention and VACUUM runs. Store operations
are already counted per RPC by ``zocrates_grpc_server_requests_total`` (method, code)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from services.common.metrics import REGISTRY
from services.sessions.maintenance import MaintenanceReport

MAINTENANCE_RUNS = Counter(
    "zocrates_sessions_maintenance_runs_total",
    "Maintenance runs, by kind: 'retention' (prune, then VACUUM if worth it) or "
    "'deferred_vacuum' (a VACUUM that chats in flight had put off).",
    ["kind"],
    registry=REGISTRY,
)
MAINTENANCE_SECONDS = Histogram(
    "zocrates_sessions_maintenance_duration_seconds",
    "Seconds of one maintenance run, by kind.",
    ["kind"],
    buckets=(0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
    registry=REGISTRY,
)
SESSIONS_DELETED = Counter(
    "zocrates_sessions_deleted_by_retention_total",
    "Sessions maintenance deleted, by why: 'empty', 'expired' (older than retention_days), "
    "'over_cap' (past max_saved_sessions).",
    ["why"],
    registry=REGISTRY,
)
VACUUMS = Counter(
    "zocrates_sessions_vacuums_total",
    "VACUUM decisions of maintenance runs, by result: 'done', or why it was skipped "
    "(below_threshold, chat_in_progress, insufficient_disk, database_busy, failed, not_owed).",
    ["result"],
    registry=REGISTRY,
)


def record_maintenance(kind: str, report: MaintenanceReport) -> None:
    MAINTENANCE_RUNS.labels(kind).inc()
    MAINTENANCE_SECONDS.labels(kind).observe(report.duration_ms / 1000)
    for why, n in (
        ("empty", report.deleted_empty),
        ("expired", report.deleted_expired),
        ("over_cap", report.deleted_over_cap),
    ):
        if n:
            SESSIONS_DELETED.labels(why).inc(n)
    VACUUMS.labels("done" if report.vacuumed else report.vacuum_skipped_reason or "unknown").inc()
