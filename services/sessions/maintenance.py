"""The retention engine: prune sessions by policy, then reclaim space when it is worth it.

Run at start-up (``POST /register``, before chat is accepted) and on demand. In order:

1. Empty sessions (0 events) at least 24 hours old are deleted.
2. Sessions whose last update is older than ``retention_days`` are deleted, then the oldest
   beyond ``max_saved_sessions``. 0 or None disables a pass.
3. Sessions with an in-flight chat are never deleted, and while any chat is in flight VACUUM
   is deferred (``chat_in_progress``): the run returns what it owes (``OwedVacuum``), and
   :func:`run_deferred_vacuum` pays it once no chat runs, under the rules of step 4 (with the
   deletions of the runs that deferred it). A later maintenance run settles it too.
4. VACUUM runs only when free pages are at least 25% of the file and either this run deleted
   something or the file is at least 30 MB; it needs 1.5x the file size free on disk and is
   skipped, never fatal, when the disk is short or the database is busy.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Collection

from services.common.errors import NotFound
from services.sessions.stats import StorageStats, storage_stats
from services.sessions.store import SessionRow, SessionStore
from services.sessions.vacuum import StepHook, VacuumOutcome, vacuum

logger = logging.getLogger(__name__)

EMPTY_SESSION_MIN_AGE_SECONDS = 24 * 3600
FREELIST_RATIO_THRESHOLD = 0.25
LARGE_DATABASE_BYTES = 30 * 1024 * 1024
DAY_SECONDS = 86400


@dataclasses.dataclass(frozen=True)
class RetentionPolicy:
    retention_days: int | None = 180
    max_saved_sessions: int | None = 100


@dataclasses.dataclass(frozen=True)
class OwedVacuum:
    """A VACUUM deferred because chats were in flight, still to be decided."""

    deleted: int  # what the deferring runs deleted: step 4's "deleted something"
    since: float  # when it was first deferred (epoch seconds)


@dataclasses.dataclass
class MaintenanceReport:
    deleted_empty: int = 0
    deleted_expired: int = 0
    deleted_over_cap: int = 0
    deleted_ids: list[str] = dataclasses.field(default_factory=list)
    skipped_active: int = 0
    vacuumed: bool = False
    vacuum_skipped_reason: str = ""
    size_before: int = 0
    size_after: int = 0
    duration_ms: float = 0.0
    # What is owed once this run is over: set when it deferred VACUUM (chat_in_progress).
    owed: OwedVacuum | None = None

    @property
    def deleted(self) -> int:
        return self.deleted_empty + self.deleted_expired + self.deleted_over_cap


def plan_deletions(
    rows: list[SessionRow],
    *,
    policy: RetentionPolicy,
    active: Collection[str],
    now: float,
) -> tuple[list[SessionRow], list[SessionRow], list[SessionRow], int]:
    """Decide (empty, expired, over_cap, skipped_active) without touching storage.

    ``skipped_active`` counts the distinct in-flight sessions that a pass would have deleted.
    """
    spared: set[str] = set()
    empty: list[SessionRow] = []
    remaining: list[SessionRow] = []
    for row in rows:
        if row.event_count == 0 and now - row.updated_at >= EMPTY_SESSION_MIN_AGE_SECONDS:
            if row.id in active:
                spared.add(row.id)
                remaining.append(row)
            else:
                empty.append(row)
        else:
            remaining.append(row)

    expired: list[SessionRow] = []
    if policy.retention_days:
        cutoff = now - policy.retention_days * DAY_SECONDS
        kept: list[SessionRow] = []
        for row in remaining:
            if row.updated_at < cutoff:
                if row.id in active:
                    spared.add(row.id)
                    kept.append(row)
                else:
                    expired.append(row)
            else:
                kept.append(row)
        remaining = kept

    over_cap: list[SessionRow] = []
    if policy.max_saved_sessions and len(remaining) > policy.max_saved_sessions:
        excess = len(remaining) - policy.max_saved_sessions
        for row in sorted(remaining, key=lambda r: (r.updated_at, r.created_at, r.id)):
            if excess == 0:
                break
            if row.id in active:
                spared.add(row.id)
                continue
            if row.event_count == 0 and now - row.updated_at < EMPTY_SESSION_MIN_AGE_SECONDS:
                continue  # a chat just opened is never pruned, whatever the cap
            over_cap.append(row)
            excess -= 1
    return empty, expired, over_cap, len(spared)


async def run_maintenance(
    store: SessionStore,
    *,
    app_name: str,
    policy: RetentionPolicy,
    active_session_ids: Collection[str],
    reason: str = "on_demand",
    now: float | None = None,
    on_vacuum_step: StepHook | None = None,
    owed: OwedVacuum | None = None,
) -> MaintenanceReport:
    """Prune, then VACUUM if worth it. ``owed`` is what earlier runs deferred: its deletions
    count for step 4, and the run settles it (or defers it again, adding its own)."""
    started = time.perf_counter()
    active = set(active_session_ids)
    report = MaintenanceReport()
    before = await storage_stats(store)
    report.size_before = before.size_bytes

    rows = await store.session_rows(app_name=app_name)
    empty, expired, over_cap, report.skipped_active = plan_deletions(
        rows, policy=policy, active=active, now=time.time() if now is None else now
    )
    for bucket, field in (
        (empty, "deleted_empty"),
        (expired, "deleted_expired"),
        (over_cap, "deleted_over_cap"),
    ):
        for row in bucket:
            try:
                await store.delete_session(
                    app_name=app_name, user_id=row.user_id, session_id=row.id
                )
            except NotFound:
                continue  # deleted concurrently: the goal is met
            setattr(report, field, getattr(report, field) + 1)
            report.deleted_ids.append(row.id)

    deleted = report.deleted + (owed.deleted if owed else 0)
    if active:
        report.vacuum_skipped_reason = "chat_in_progress"
        report.owed = OwedVacuum(deleted=deleted, since=owed.since if owed else time.time())
    else:
        stats = await storage_stats(store) if report.deleted else before
        await _vacuum_if_worth_it(
            store, report, deleted=deleted, stats=stats, on_step=on_vacuum_step
        )

    report.size_after = (await storage_stats(store)).size_bytes
    report.duration_ms = (time.perf_counter() - started) * 1000
    logger.info(
        "maintenance (%s): deleted %d empty, %d expired, %d over cap; %d active kept; "
        "vacuum %s; %d -> %d bytes in %.1f ms",
        reason,
        report.deleted_empty,
        report.deleted_expired,
        report.deleted_over_cap,
        report.skipped_active,
        "done" if report.vacuumed else f"skipped ({report.vacuum_skipped_reason})",
        report.size_before,
        report.size_after,
        report.duration_ms,
    )
    return report


async def run_deferred_vacuum(
    store: SessionStore,
    *,
    owed: OwedVacuum | None,
    active_session_ids: Collection[str],
    on_vacuum_step: StepHook | None = None,
) -> MaintenanceReport:
    """Pay a VACUUM that maintenance deferred, now that (the caller says) no chat runs: the
    rules of step 4 are applied to the database as it is now, with the deletions of the runs
    that deferred it. Deferred again (``owed`` returned) if a chat is in flight after all;
    ``not_owed`` when nothing was deferred."""
    started = time.perf_counter()
    report = MaintenanceReport()
    if owed is None:
        report.vacuum_skipped_reason = "not_owed"
        return report
    before = await storage_stats(store)
    report.size_before = before.size_bytes
    if active_session_ids:
        report.vacuum_skipped_reason = "chat_in_progress"
        report.owed = owed
    else:
        await _vacuum_if_worth_it(
            store, report, deleted=owed.deleted, stats=before, on_step=on_vacuum_step
        )
    report.size_after = (await storage_stats(store)).size_bytes
    report.duration_ms = (time.perf_counter() - started) * 1000
    logger.info(
        "deferred vacuum (owed since %.0f s ago, %d deleted): %s; %d -> %d bytes in %.1f ms",
        time.time() - owed.since,
        owed.deleted,
        "done" if report.vacuumed else f"skipped ({report.vacuum_skipped_reason})",
        report.size_before,
        report.size_after,
        report.duration_ms,
    )
    return report


async def _vacuum_if_worth_it(
    store: SessionStore,
    report: MaintenanceReport,
    *,
    deleted: int,
    stats: StorageStats,
    on_step: StepHook | None,
) -> None:
    """Step 4, recorded in ``report`` (``vacuumed``, ``vacuum_skipped_reason``)."""
    worth_it = stats.freelist_ratio >= FREELIST_RATIO_THRESHOLD and (
        deleted > 0 or stats.size_bytes >= LARGE_DATABASE_BYTES
    )
    if store.backend != "sqlite":
        # No free-page list to read: vacuum after deletions, which is when it pays.
        worth_it = deleted > 0
    if not worth_it:
        report.vacuum_skipped_reason = "below_threshold"
        return
    outcome = await vacuum(store, on_step=on_step)
    report.vacuumed = outcome is VacuumOutcome.DONE
    report.vacuum_skipped_reason = outcome.value
