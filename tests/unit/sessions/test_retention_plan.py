"""plan_deletions: which sessions each retention pass removes, judged without storage."""

from __future__ import annotations

import itertools

import pytest

from services.sessions.maintenance import (
    DAY_SECONDS,
    EMPTY_SESSION_MIN_AGE_SECONDS,
    RetentionPolicy,
    plan_deletions,
)
from services.sessions.store import SessionRow

NOW = 1_800_000_000.0
HOUR = 3600.0
NO_LIMITS = RetentionPolicy(retention_days=None, max_saved_sessions=None)


def row(sid: str, *, age: float, events: int = 3, created_age: float | None = None) -> SessionRow:
    """A session last updated ``age`` seconds before NOW."""
    return SessionRow(
        id=sid,
        user_id="local",
        title=sid,
        created_at=NOW - (age if created_age is None else created_age),
        updated_at=NOW - age,
        event_count=events,
    )


def ids(rows: list[SessionRow]) -> list[str]:
    return [r.id for r in rows]


def plan(rows, policy=NO_LIMITS, active=()):  # type: ignore[no-untyped-def]
    return plan_deletions(rows, policy=policy, active=set(active), now=NOW)


def test_constants() -> None:
    assert EMPTY_SESSION_MIN_AGE_SECONDS == 24 * HOUR
    assert DAY_SECONDS == 24 * HOUR


# --- empty sessions ------------------------------------------------------------------------


def test_empty_sessions_younger_than_a_day_are_kept() -> None:
    rows = [
        row("new", age=0, events=0),
        row("hour", age=HOUR, events=0),
        row("almost", age=24 * HOUR - 1, events=0),
    ]
    empty, expired, over_cap, skipped = plan(rows)
    assert (empty, expired, over_cap, skipped) == ([], [], [], 0)


def test_empty_sessions_a_day_or_older_are_pruned() -> None:
    rows = [
        row("exactly", age=24 * HOUR, events=0),
        row("older", age=24 * HOUR + 1, events=0),
        row("ancient", age=900 * DAY_SECONDS, events=0),
        row("young", age=HOUR, events=0),
    ]
    empty, expired, over_cap, _ = plan(rows)
    assert ids(empty) == ["exactly", "older", "ancient"]
    assert expired == [] and over_cap == []


def test_empty_pass_runs_even_with_retention_disabled_by_zero() -> None:
    rows = [row("e", age=2 * DAY_SECONDS, events=0)]
    empty, _, _, _ = plan(rows, RetentionPolicy(retention_days=0, max_saved_sessions=0))
    assert ids(empty) == ["e"]


def test_sessions_with_events_are_never_empty() -> None:
    rows = [row("one", age=400 * DAY_SECONDS, events=1), row("many", age=2 * DAY_SECONDS)]
    empty, expired, over_cap, _ = plan(rows)
    assert (empty, expired, over_cap) == ([], [], [])


def test_empty_old_session_counts_once() -> None:
    """An empty session also older than the retention goes to the empty bucket only."""
    rows = [row("e", age=400 * DAY_SECONDS, events=0)]
    empty, expired, over_cap, _ = plan(rows, RetentionPolicy(180, 100))
    assert ids(empty) == ["e"]
    assert expired == [] and over_cap == []


# --- age pass ------------------------------------------------------------------------------


@pytest.mark.parametrize("days", [1, 30, 180])
def test_retention_days_boundary(days: int) -> None:
    rows = [
        row("older", age=days * DAY_SECONDS + 1),
        row("newer", age=days * DAY_SECONDS - 1),
        row("fresh", age=0),
    ]
    empty, expired, over_cap, _ = plan(rows, RetentionPolicy(days, None))
    assert ids(expired) == ["older"]
    assert empty == [] and over_cap == []


@pytest.mark.parametrize("disabled", [None, 0])
def test_age_pass_disabled(disabled: int | None) -> None:
    rows = [row("a", age=5000 * DAY_SECONDS), row("b", age=181 * DAY_SECONDS)]
    _, expired, over_cap, _ = plan(rows, RetentionPolicy(disabled, None))
    assert expired == [] and over_cap == []


# --- cap pass ------------------------------------------------------------------------------


def test_no_limits_deletes_only_empties() -> None:
    rows = [row(f"s{i}", age=i * 100 * DAY_SECONDS) for i in range(1, 300)]
    rows.append(row("empty", age=2 * DAY_SECONDS, events=0))
    rows.append(row("young-empty", age=HOUR, events=0))
    empty, expired, over_cap, skipped = plan(rows, NO_LIMITS)
    assert ids(empty) == ["empty"]
    assert expired == [] and over_cap == [] and skipped == 0


@pytest.mark.parametrize("disabled", [None, 0])
def test_cap_pass_disabled(disabled: int | None) -> None:
    rows = [row(f"s{i}", age=i * HOUR) for i in range(10)]
    _, _, over_cap, _ = plan(rows, RetentionPolicy(None, disabled))
    assert over_cap == []


def test_cap_prunes_least_recently_updated_first() -> None:
    # Listed out of order; created_at deliberately disagrees with updated_at.
    rows = [
        row("mid", age=3 * DAY_SECONDS, created_age=3 * DAY_SECONDS),
        row("oldest", age=9 * DAY_SECONDS, created_age=9 * DAY_SECONDS),
        row("recent", age=1 * DAY_SECONDS, created_age=50 * DAY_SECONDS),
        row("second-oldest", age=5 * DAY_SECONDS, created_age=5 * DAY_SECONDS),
        row("newest", age=HOUR, created_age=HOUR),
    ]
    _, _, over_cap, _ = plan(rows, RetentionPolicy(None, 3))
    assert ids(over_cap) == ["oldest", "second-oldest"]


def test_cap_not_exceeded_prunes_nothing() -> None:
    rows = [row(f"s{i}", age=i * DAY_SECONDS) for i in range(5)]
    _, _, over_cap, _ = plan(rows, RetentionPolicy(None, 5))
    assert over_cap == []


def test_cap_counts_what_remains_after_empty_and_age_passes() -> None:
    rows = [
        row("empty", age=2 * DAY_SECONDS, events=0),
        row("expired", age=200 * DAY_SECONDS),
        row("a", age=3 * DAY_SECONDS),
        row("b", age=2 * DAY_SECONDS),
        row("c", age=1 * DAY_SECONDS),
    ]
    empty, expired, over_cap, _ = plan(rows, RetentionPolicy(180, 2))
    assert ids(empty) == ["empty"]
    assert ids(expired) == ["expired"]
    assert ids(over_cap) == ["a"]  # 3 left, cap 2: only one more goes


def test_cap_one_keeps_only_the_newest() -> None:
    rows = [row(f"s{i}", age=(i + 1) * HOUR) for i in range(6)]
    _, _, over_cap, _ = plan(rows, RetentionPolicy(None, 1))
    assert sorted(ids(over_cap)) == sorted(f"s{i}" for i in range(1, 6))


# --- active sessions -----------------------------------------------------------------------


def test_active_empty_session_is_immune() -> None:
    rows = [row("busy", age=3 * DAY_SECONDS, events=0), row("idle", age=3 * DAY_SECONDS, events=0)]
    empty, _, _, skipped = plan(rows, active={"busy"})
    assert ids(empty) == ["idle"]
    assert skipped >= 1


def test_active_expired_session_is_immune() -> None:
    rows = [row("busy", age=400 * DAY_SECONDS), row("idle", age=400 * DAY_SECONDS)]
    _, expired, over_cap, skipped = plan(rows, RetentionPolicy(180, None), active=["busy"])
    assert ids(expired) == ["idle"]
    assert over_cap == []
    assert skipped >= 1


def test_active_sessions_count_towards_cap_next_oldest_idle_pruned() -> None:
    rows = [
        row("busy-oldest", age=90 * DAY_SECONDS),
        row("idle-1", age=80 * DAY_SECONDS),
        row("busy-2", age=70 * DAY_SECONDS),
        row("idle-2", age=60 * DAY_SECONDS),
        row("idle-3", age=50 * DAY_SECONDS),
        row("idle-4", age=40 * DAY_SECONDS),
    ]
    _, _, over_cap, skipped = plan(rows, RetentionPolicy(None, 3), active={"busy-oldest", "busy-2"})
    # 6 sessions, cap 3: three go, skipping the two in-flight ones.
    assert ids(over_cap) == ["idle-1", "idle-2", "idle-3"]
    assert skipped >= 2


def test_active_sessions_kept_by_earlier_passes_still_count_towards_cap() -> None:
    """An in-flight empty session and an in-flight expired one: kept by their passes, and
    still counted towards the cap (README, "Session retention", rule 3)."""
    rows = [
        row("busy-empty", age=3 * DAY_SECONDS, events=0),
        row("busy-old", age=400 * DAY_SECONDS),
        *[row(f"other-{i}", age=(50 - i) * DAY_SECONDS) for i in range(3)],
    ]
    empty, expired, over_cap, skipped = plan(
        rows, RetentionPolicy(180, 2), active={"busy-empty", "busy-old"}
    )
    assert empty == [] and expired == []
    assert sorted(ids(over_cap)) == ["other-0", "other-1", "other-2"]
    assert skipped >= 2


def test_cap_smaller_than_active_count_deletes_every_idle_one() -> None:
    rows = [row(f"busy-{i}", age=i * HOUR) for i in range(3)] + [row("idle", age=0)]
    _, _, over_cap, _ = plan(rows, RetentionPolicy(None, 2), active={f"busy-{i}" for i in range(3)})
    assert ids(over_cap) == ["idle"]


@pytest.mark.parametrize(
    "policy",
    [RetentionPolicy(180, 100), RetentionPolicy(1, 1), RetentionPolicy(30, 5), NO_LIMITS],
)
def test_active_ids_never_planned_and_lists_disjoint(policy: RetentionPolicy) -> None:
    rows = []
    for i in range(40):
        age = (i * 7 % 41) * 11 * DAY_SECONDS + (i % 5) * HOUR
        rows.append(row(f"s{i}", age=age, events=0 if i % 4 == 0 else 2))
    active = {f"s{i}" for i in range(0, 40, 3)}
    empty, expired, over_cap, _ = plan(rows, policy, active=active)

    buckets = [set(ids(empty)), set(ids(expired)), set(ids(over_cap))]
    for a, b in itertools.combinations(buckets, 2):
        assert a.isdisjoint(b)
    deleted = set().union(*buckets)
    assert sum(len(b) for b in buckets) == len(deleted)  # no duplicates inside a bucket
    assert deleted.isdisjoint(active)
    assert deleted <= {r.id for r in rows}
    cap = policy.max_saved_sessions
    if cap:
        after_age = {r.id for r in rows} - buckets[0] - buckets[1]
        survivors = after_age - buckets[2]
        assert buckets[2] <= after_age
        assert len(survivors) >= min(cap, len(after_age))  # the cap never overshoots
        assert len(survivors) <= cap or survivors <= active  # only in-flight ones exceed it
    else:
        assert not buckets[2]


def test_input_order_does_not_change_the_plan() -> None:
    rows = [row(f"s{i}", age=(i * 13 % 17) * DAY_SECONDS + i) for i in range(17)]
    policy = RetentionPolicy(10, 4)
    forward = plan(rows, policy, active={"s3"})
    backward = plan(list(reversed(rows)), policy, active={"s3"})
    assert sorted(ids(forward[1])) == sorted(ids(backward[1]))
    assert ids(forward[2]) == ids(backward[2])


def test_young_empty_session_immune_to_the_cap_too() -> None:
    rows = [
        row("just-opened", age=2 * HOUR, events=0),
        row("chatted-since-1", age=HOUR),
        row("chatted-since-2", age=0.5 * HOUR),
    ]
    empty, expired, over_cap, _ = plan(rows, RetentionPolicy(180, 2))
    assert "just-opened" not in ids(empty) + ids(expired) + ids(over_cap)
