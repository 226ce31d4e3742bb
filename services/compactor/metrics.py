"""The compactor's Prometheus metrics: what each post-turn evaluation decided and how long it
took. Labels are closed sets (see ``docs/compaction.md`` for the outcomes and reasons)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from services.common.metrics import REGISTRY

EVALUATIONS = Counter(
    "zocrates_compactor_evaluations_total",
    "Post-turn compaction evaluations, by outcome ('compacted', 'continue', 'skipped', "
    "'failed_open'), reason (the gate's skip reason: disabled, few_turns, no_tokens, "
    "below_floor; open_turn, probe_continue, empty_slice, compacted; or the failure's code) "
    "and gate ('skip', 'force' at the token ceiling, 'probe' asking the decision model, "
    "'none' when the evaluation failed before its gate was known).",
    ["outcome", "reason", "gate"],
    registry=REGISTRY,
)
EVALUATION_SECONDS = Histogram(
    "zocrates_compactor_evaluation_duration_seconds",
    "Seconds of one evaluation (load, gate, probe, summary, append), by outcome.",
    ["outcome"],
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
    registry=REGISTRY,
)


def record_evaluation(*, outcome: str, reason: str, gate: str, seconds: float) -> None:
    EVALUATIONS.labels(outcome, reason, gate).inc()
    EVALUATION_SECONDS.labels(outcome).observe(seconds)
