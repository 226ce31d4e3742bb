"""The envelope gate: the sub-millisecond fast path that runs after every turn.

Pure and synchronous (no I/O, no model): most turns end here with ``skip``. In order:

1. ``skip/disabled``: ``enable_adaptive_compaction`` is off;
2. ``skip/few_turns``: fewer completed turns since the last compaction than
   ``effective_min_turns`` (the configured minimum, raised to K+1 so the summarized slice
   1..N-K is never empty);
3. ``skip/no_tokens``: the coordinator never reported a prompt size;
4. ``skip/below_floor``: the coordinator prompt is under ``adaptive_compaction_token_floor``;
5. ``force/ceiling``: at or above ``adaptive_compaction_token_ceiling`` compaction is forced
   without asking the decision model (the hard backstop);
6. ``probe/envelope_open``: otherwise the decision model is asked.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from services.common.app_config import ZocratesConfig

logger = logging.getLogger(__name__)

Outcome = Literal["skip", "force", "probe"]
SkipReason = Literal["disabled", "few_turns", "no_tokens", "below_floor"]


@dataclass(frozen=True, slots=True)
class GateDecision:
    outcome: Outcome
    reason: str
    turns: int
    effective_min_turns: int
    prompt_tokens: int | None
    retention_turns: int

    @property
    def opens(self) -> bool:
        """True when compaction may happen (forced, or after the probe)."""
        return self.outcome != "skip"


def retention_turns(k: int) -> int:
    """K, never negative."""
    return max(0, int(k))


def effective_min_turns(min_turns: int, k: int) -> int:
    """``min_turns``, clamped to K+1 (with a warning) when it is not greater than K."""
    k = retention_turns(k)
    if min_turns <= k:
        clamped = k + 1
        logger.warning(
            "adaptive_compaction_min_turns (%d) must be strictly greater than "
            "retention_turns (%d). Disambiguating by clamping effective_min_turns to %d.",
            min_turns,
            k,
            clamped,
        )
        return clamped
    return min_turns


def evaluate_gate(
    turns_since_last_compaction: int, prompt_tokens: int | None, config: ZocratesConfig
) -> GateDecision:
    """Whether to skip, force or probe after a turn (see the module docstring)."""
    k = retention_turns(config.adaptive_compaction_retention_turns)
    min_turns = effective_min_turns(config.adaptive_compaction_min_turns, k)

    def result(outcome: Outcome, reason: str) -> GateDecision:
        return GateDecision(
            outcome=outcome,
            reason=reason,
            turns=turns_since_last_compaction,
            effective_min_turns=min_turns,
            prompt_tokens=prompt_tokens,
            retention_turns=k,
        )

    if not config.enable_adaptive_compaction:
        return result("skip", "disabled")
    if turns_since_last_compaction < min_turns:
        return result("skip", "few_turns")
    if prompt_tokens is None:
        return result("skip", "no_tokens")
    if prompt_tokens < config.adaptive_compaction_token_floor:
        return result("skip", "below_floor")
    if prompt_tokens >= config.adaptive_compaction_token_ceiling:
        return result("force", "ceiling")
    return result("probe", "envelope_open")
