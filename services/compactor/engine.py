"""After a turn: gate, probe, plan, summarize, and the compaction event to append (or none).

The caller (``Compactor.evaluate`` in :mod:`services.compactor.service`) loads the session,
calls :func:`evaluate_and_compact` and appends ``outcome.event`` through the sessions service
when there is one. Nothing here does I/O itself except through the decision model and the
summarizer it is given; a closed gate returns before either is touched. The steps are those of
``docs/compaction.md`` (the numbered list under "The compactor").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from google.adk.events.event import Event

from services.common.adk.history import is_compaction, is_rewind, live_events
from services.common.adk.turns import (
    coordinator_prompt_tokens,
    extract_turns,
    prior_compaction,
    turns_since,
)
from services.common.app_config import ZocratesConfig
from services.common.compaction_gate import GateDecision, evaluate_gate
from services.compactor.decision import COMPRESS, Decision, DecisionModel
from services.compactor.summarizer import (
    CompactionPlan,
    Summarizer,
    compaction_event,
    plan_compaction,
)
from services.compactor.turns import decision_state


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    """What happened after one turn. ``event`` is the compaction to append, if any;
    ``reason`` says why there is none."""

    gate: GateDecision
    reason: str
    decision: Decision | None = None
    plan: CompactionPlan | None = None
    event: Event | None = None


def _open_invocation(events: Sequence[Event], last_turn_invocation: str | None) -> bool:
    """True when the newest invocation has no answer yet (paused at a checkpoint, aborted)."""
    for event in reversed(events):
        if is_compaction(event) or is_rewind(event):
            continue
        if event.isolation_scope is None and event.invocation_id:
            return event.invocation_id != last_turn_invocation
    return False


async def evaluate_and_compact(
    events: Sequence[Event],
    *,
    config: ZocratesConfig,
    decision_model: DecisionModel,
    summarizer: Summarizer,
) -> CompactionOutcome:
    """One post-turn evaluation: envelope gate, open-turn check, probe, rolling plan, summary
    (``docs/compaction.md``, steps 1-4; the caller does step 5, the append)."""
    live = live_events(events)
    turns = extract_turns(live, rewinds_applied=True)
    since = turns_since(turns, prior_compaction(live, rewinds_applied=True))
    gate = evaluate_gate(len(since), coordinator_prompt_tokens(live), config)
    if not gate.opens:
        return CompactionOutcome(gate=gate, reason=gate.reason)
    if _open_invocation(live, turns[-1].invocation_id if turns else None):
        return CompactionOutcome(gate=gate, reason="open_turn")
    decision: Decision | None = None
    if gate.outcome == "probe":
        decision = await decision_model.decide(
            decision_state(turns), threshold=config.adaptive_compaction_threshold
        )
        if decision.verdict != COMPRESS:
            return CompactionOutcome(gate=gate, reason="probe_continue", decision=decision)
    plan = plan_compaction(live, gate.retention_turns)
    if plan is None:
        return CompactionOutcome(gate=gate, reason="empty_slice", decision=decision)
    summary = await summarizer.summarize(plan)
    return CompactionOutcome(
        gate=gate,
        reason="compacted",
        decision=decision,
        plan=plan,
        event=compaction_event(plan, summary.text),
    )
